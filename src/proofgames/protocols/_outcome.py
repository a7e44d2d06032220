"""The record of a debate: its messages, its costs and its outcome (one type for all).

Every protocol -- on configurations, on step transcripts, judged by a function, a
language model or a person -- ends in one frozen :class:`Outcome` whose :class:`Costs`
carry V's reads and queries, the provers' work, and the judge's calls, human judgements,
tokens and money. While a debate runs, :class:`DebateCosts` tallies what judges and
provers report; :class:`ProverReply` is how a prover reports what a move cost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .._registry import StrategySpec

if TYPE_CHECKING:
    from ..judges.interface import Judgement

#: The cost fields a debate tallies as it runs (judges' and provers' reports).
TALLIED = (
    "judge_calls", "human_judgements", "judge_input_tokens", "judge_output_tokens",
    "prover_input_tokens", "prover_output_tokens", "prover_calls", "cost_usd",
)  # fmt: skip


def _no_calls() -> dict[str, int]:
    return {"A": 0, "B": 0}


@dataclass
class DebateCosts:
    """The running tally of one debate's (or one run's) judge and prover costs.

    Attributes:
        judge_calls: Calls to the judge (model requests, human answers, checks).
        human_judgements: How many of those were people's answers.
        judge_input_tokens: Tokens the judge read.
        judge_output_tokens: Tokens the judge wrote.
        prover_input_tokens: Tokens the provers read (model provers only).
        prover_output_tokens: Tokens the provers wrote.
        prover_calls: Model calls each prover reported making for its moves (``"A"``,
            ``"B"``; a best-of-N prover's samples and its own preference judge's calls
            included); 0 for provers that call no model.
        cost_usd: Money, where a provider reported it (``None`` if none did).

    Example:
        >>> c = DebateCosts()
        >>> c.add_money(0.25); c.add_money(None); c.cost_usd
        0.25
    """

    judge_calls: int = 0
    human_judgements: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    prover_input_tokens: int = 0
    prover_output_tokens: int = 0
    prover_calls: dict[str, int] = field(default_factory=_no_calls)
    cost_usd: float | None = None

    def add_judgement(self, j: Judgement) -> None:
        """Count one judgement."""
        self.judge_calls += j.calls
        self.human_judgements += j.human_judgements
        self.judge_input_tokens += j.input_tokens
        self.judge_output_tokens += j.output_tokens
        self.add_money(j.cost_usd)

    def add_money(self, usd: float | None) -> None:
        """Add money reported by a provider (``None``: not reported)."""
        if usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + usd

    def to_dict(self) -> dict[str, object]:
        """Plain JSON data."""
        return asdict(self)


@dataclass(frozen=True)
class ProverReply:
    """A move's value with what making it cost (checked by V before it is counted).

    ``calls`` is how many model calls the move made (a model prover's one request, a
    best-of-N prover's samples); the driver adds it to the mover's ``prover_calls``.
    """

    value: object
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 0


@dataclass(frozen=True)
class Message:
    """One message of a debate: who sent what, in which round."""

    round: int
    sender: str
    kind: str
    content: Any

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "round": self.round,
            "sender": self.sender,
            "kind": self.kind,
            "content": self.content,
        }


@dataclass(frozen=True)
class Costs:
    """What a debate cost each party.

    Attributes:
        rounds: interaction rounds.
        verifier_reads: transcript entries or configurations V read.
        verifier_read_unit: ``"entries"`` or ``"configurations"``.
        verifier_bits: the same reads measured in bits.
        verifier_queries: V's oracle queries.
        verifier_steps: machine steps V simulated itself.
        prover_steps: machine steps each prover simulated.
        prover_queries: oracle queries each prover made.
        prover_reads: entries of the other prover's messages each prover read.
        seconds: wall time of the whole debate (not part of equality).
        judge_calls: calls to a judge that stands for the oracle (a model's requests, a
            person's answers, a calculator's checks); 0 where the oracle is a function.
        human_judgements: how many of those were people's answers.
        judge_input_tokens: tokens the judge read (what a person would have to read).
        judge_output_tokens: tokens the judge wrote.
        prover_input_tokens: tokens the provers read, as their moves report it.
        prover_output_tokens: tokens the provers wrote, as their moves report it.
        prover_calls: model calls each prover reported, ``{"A": n, "B": m}``.
        cost_usd: money, where a provider reported it (``None``: none did).

    """

    rounds: int
    verifier_reads: int
    verifier_read_unit: str
    verifier_bits: int
    verifier_queries: int
    verifier_steps: int
    prover_steps: dict[str, int]
    prover_queries: dict[str, int]
    prover_reads: dict[str, int]
    seconds: float = field(default=0.0, compare=False)
    judge_calls: int = 0
    human_judgements: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    prover_input_tokens: int = 0
    prover_output_tokens: int = 0
    prover_calls: dict[str, int] = field(default_factory=_no_calls)
    cost_usd: float | None = None


@dataclass(frozen=True)
class Outcome:
    """The record of one debate.

    Attributes:
        protocol: protocol name.
        machine: the machine's name.
        steps: T.
        claim: the output A asserts.
        verdict: 1 iff V accepts A's claim.
        winner: ``"A"`` or ``"B"``.
        reason: why V decided as it did (including forfeits).
        prover_a: who played A.
        prover_b: who played B.
        seed: the seed every random choice flowed from.
        messages: the full message transcript.
        costs: rounds, reads and work.
        forfeit: the party that lost by misbehaving (``"A"``, ``"B"``) or ``None``.
        details: protocol-specific facts (plain JSON values), e.g. the witness sent or
            the stochastic parameters.
        isolation: ``"in-process"`` or ``"process"``.

    Example:
        >>> from proofgames import play
        >>> out = play("bisection", "bb2", claim=0, a="flip-step", b="honest", seed=0)
        >>> out.verdict, out.winner, out.reason
        (0, 'B', "A's configurations at times 2 and 3 are not one step apart")
        >>> out.costs.rounds, out.costs.verifier_reads, out.costs.verifier_read_unit
        (3, 5, 'configurations')
        >>> " ".join(f"{m.sender}:{m.kind}" for m in out.messages[:3])
        'A:final A:midpoint B:dispute'
        >>> out.to_dict(messages=False)["prover_a"]
        {'name': 'flip-step', 'args': {'at': 0.5}}

    """

    protocol: str
    machine: str
    steps: int
    claim: int
    verdict: int
    winner: str
    reason: str
    prover_a: StrategySpec
    prover_b: StrategySpec
    seed: int | None
    messages: tuple[Message, ...]
    costs: Costs
    forfeit: str | None = None
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    isolation: str = "in-process"

    def to_dict(self, messages: bool = True) -> dict[str, Any]:
        """A flat JSON-friendly dictionary (the CLI's ``--json`` output)."""
        c = self.costs
        out: dict[str, Any] = {
            "protocol": self.protocol,
            "machine": self.machine,
            "claim": self.claim,
            "verdict": self.verdict,
            "winner": self.winner,
            "reason": self.reason,
            "steps": self.steps,
            "rounds": c.rounds,
            "verifier_reads": c.verifier_reads,
            "verifier_read_unit": c.verifier_read_unit,
            "verifier_bits": c.verifier_bits,
            "verifier_queries": c.verifier_queries,
            "verifier_steps": c.verifier_steps,
            "prover_steps": dict(c.prover_steps),
            "prover_queries": dict(c.prover_queries),
            "prover_reads": dict(c.prover_reads),
            "seconds": c.seconds,
            **{k: copy_tallied(getattr(c, k)) for k in TALLIED},
            "seed": self.seed,
            "prover_a": self.prover_a.to_dict(),
            "prover_b": self.prover_b.to_dict(),
            "forfeit": self.forfeit,
            "isolation": self.isolation,
            "details": dict(self.details),
        }
        if messages:
            out["messages"] = [m.to_dict() for m in self.messages]
        return out


def copy_tallied(value: Any) -> Any:
    """A tallied value as plain data (a per-prover count is copied)."""
    return dict(value) if isinstance(value, dict) else value
