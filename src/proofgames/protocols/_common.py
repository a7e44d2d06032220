"""Shared pieces of every protocol: outcome records, costs, and safe strategy calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .._oracle import PARTIES, Oracle, OracleLedger, OracleView
from .._registry import Player, StrategySpec

T = TypeVar("T")


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
        prover_a, prover_b: who played.
        seed: the seed every random choice flowed from.
        messages: the full message transcript.
        costs: rounds, reads and work.

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
            "seed": self.seed,
            "prover_a": self.prover_a.to_dict(),
            "prover_b": self.prover_b.to_dict(),
        }
        if messages:
            out["messages"] = [m.to_dict() for m in self.messages]
        return out


class Forfeit(Exception):
    """Raised inside a protocol when a party loses by misbehaving."""

    def __init__(self, party: str, reason: str) -> None:
        super().__init__(f"{party} forfeits: {reason}")
        self.party = party
        self.reason = reason


def safe_call(
    party: str, what: str, fn: Callable[..., T], *args: Any, timeout: float | None = None
) -> T:
    """Call a strategy; any exception or overrun becomes a :class:`Forfeit`.

    ``timeout`` cannot pre-empt a running strategy; an overrun is detected when it returns.
    """
    start = time.perf_counter()
    try:
        result = fn(*args)
    except Forfeit:
        raise
    except Exception as exc:  # a strategy's bug must never crash the run
        raise Forfeit(party, f"{what} raised {type(exc).__name__}: {exc}") from exc
    elapsed = time.perf_counter() - start
    if timeout is not None and elapsed > timeout:
        raise Forfeit(party, f"{what} timed out ({elapsed:.3g}s > {timeout:.3g}s)")
    return result


@dataclass
class GameContext:
    """What a player sees when the game starts: the public instance and its own resources.

    Attributes:
        machine: the machine under debate (a transcript or configuration machine).
        steps: T.
        claim: the output A asserts.
        oracle: this player's counted oracle access.
        rng: this player's own random generator.
        progress: optional callback for long simulations (steps done).

    """

    machine: Any
    steps: int
    claim: int
    oracle: OracleView
    rng: np.random.Generator
    progress: Callable[[int], None] | None = None


class Debate:
    """Bookkeeping every protocol shares: clock, oracle ledger, party RNGs, message log.

    Args:
        protocol: the protocol's name.
        prover_a, prover_b: the players (their specs and work go into the record).
        oracle: the oracle the machine queries.
        seed: root seed; A, B and V get independent streams split from it.
    """

    def __init__(
        self,
        protocol: str,
        prover_a: Player,
        prover_b: Player,
        oracle: Oracle | None,
        seed: int | None,
    ) -> None:
        self.protocol, self.prover_a, self.prover_b, self.seed = protocol, prover_a, prover_b, seed
        self.start = time.perf_counter()
        self.ledger = OracleLedger(oracle)
        self.rng = dict(zip(PARTIES, spawn_rngs(seed, 3), strict=True))
        self.messages: list[Message] = []

    def context(
        self,
        party: str,
        machine: Any,
        steps: int,
        claim: int,
        progress: Callable[[int], None] | None,
    ) -> GameContext:
        """What ``party`` sees: the instance, its counted oracle access and its own RNG."""
        return GameContext(
            machine, steps, claim, self.ledger.view(party), self.rng[party], progress
        )

    def say(self, round: int, sender: str, kind: str, content: Any) -> None:
        """Append a message to the transcript."""
        self.messages.append(Message(round, sender, kind, content))

    def outcome(
        self,
        machine: str,
        steps: int,
        claim: int,
        verdict: int,
        reason: str,
        *,
        rounds: int,
        reads: int,
        unit: str,
        bits: int,
        verifier_steps: int,
        b_reads: int,
    ) -> Outcome:
        """Close the debate: log V's verdict and assemble the record with every cost."""
        self.say(self.messages[-1].round if self.messages else 0, "V", "verdict", verdict)
        counts = self.ledger.counts()
        costs = Costs(
            rounds=rounds,
            verifier_reads=reads,
            verifier_read_unit=unit,
            verifier_bits=bits,
            verifier_queries=counts["V"],
            verifier_steps=verifier_steps,
            prover_steps={"A": player_work(self.prover_a), "B": player_work(self.prover_b)},
            prover_queries={"A": counts["A"], "B": counts["B"]},
            prover_reads={"A": 0, "B": b_reads},
            seconds=time.perf_counter() - self.start,
        )
        return Outcome(
            self.protocol,
            machine,
            steps,
            claim,
            verdict,
            "A" if verdict else "B",
            reason,
            self.prover_a.spec,
            self.prover_b.spec,
            self.seed,
            tuple(self.messages),
            costs,
        )


def spawn_rngs(seed: int | None, n: int) -> list[np.random.Generator]:
    """Independent generators for the parties, split from one seed."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


def player_work(player: Player) -> int:
    """Steps a player reports having simulated (non-integers count as 0)."""
    w = getattr(player, "work", 0)
    return int(w) if isinstance(w, (int, np.integer)) else 0
