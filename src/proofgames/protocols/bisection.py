"""Debate by recursive bisection over configurations (Figure 3, Theorem 5.1).

Rules (configuration machine M, configurations of size S, T steps).  A claims that from
the initial configuration ``z_0`` the machine reaches ``z'_0`` after ``t_0 = T`` steps and
that ``z'_0``'s output is the claim.  In round ``k`` (while ``t_k > 1``):

(a) A sends ``a_k``, claimed to be the configuration ``floor(t_k / 2)`` steps after ``z_k``.
(b) B disputes the first half (``z_k -> a_k``, ``floor(t_k/2)`` steps) or the second half
    (``a_k -> z'_k``, ``t_k - floor(t_k/2)`` steps).
(c) The debate recurses into the half B disputes.

When ``t_k = 1``, V checks that ``z'_k`` is one step of M from ``z_k`` (at most one oracle
query).  V checks every configuration A sends for well-formedness as it arrives.

Erratum: the paper's Figure 3, step (c), assigns the halves the opposite way round from
the meaning of B's bit in step (b); this implementation follows the intended semantics --
the debate continues in the half that B disputes (see :func:`recurse`).

Bounds claimed by the theorem: completeness 1, soundness 0; provers O(T log T) time; V
reads O(log T) configurations (here exactly ``2 + ceil(log2 T)``: the initial one, A's
final claim and one midpoint per round), O(S log T) bits, and makes at most one oracle query.

Example:
    >>> from proofgames.machines import TuringMachine
    >>> from proofgames.protocols import play_bisection
    >>> from proofgames.strategies import make_strategy
    >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
    >>> out = play_bisection(tm, 6, claim=1,
    ...     prover_a=make_strategy("bisection", "A", "honest"),
    ...     prover_b=make_strategy("bisection", "B", "second"), seed=0)
    >>> out.winner, out.costs.rounds, out.costs.verifier_reads
    ('A', 3, 5)

"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from .._configuration import Configuration, ConfigurationMachine
from .._oracle import Oracle
from ..errors import ProtocolError, require_type
from ..wire import as_choice, as_configuration, as_int, configuration_dict
from ._catalog import Defaults, Instance, Options, ProtocolInfo, refuse_params, register_protocol
from ._common import Debate, Forfeit, GameContext, Outcome
from .roles import CONFIGURATION, CONTEXT, Method, Role, sent

NAME = "bisection"
FIRST, SECOND = "first", "second"


@dataclass(frozen=True)
class BisectionState:
    """The claim under dispute: ``end`` is ``length`` steps after ``start``.

    Attributes:
        start: z_k (its time is ``start_time``).
        end: z'_k.
        length: t_k.
        start_time: absolute time of ``start`` in the computation.
        round: k.

    """

    start: Configuration
    end: Configuration
    length: int
    start_time: int = 0
    round: int = 0

    @property
    def first_length(self) -> int:
        """Steps in the first half: ``floor(t_k / 2)``."""
        return self.length // 2

    @property
    def midpoint_time(self) -> int:
        """Absolute time of the midpoint A must supply."""
        return self.start_time + self.first_length


@functools.lru_cache(maxsize=64)  # both provers, every debate on the same T
def midpoint_times(steps: int, spacing: int) -> tuple[int, ...]:
    """Every midpoint time V can ask for while the halves are ``spacing`` steps or longer.

    These are the midpoints of the early rounds, whichever halves B disputes: a prover
    that keeps a checkpoint at each answers those rounds without simulating, and later
    rounds from the last one's configurations (less than ``2 * spacing`` steps in all).
    There are fewer than ``steps / spacing``, at least ``spacing`` steps apart.

    Example:
        >>> midpoint_times(107, 20)
        (26, 53, 80)
        >>> BisectionState(None, None, 107).midpoint_time  # the first round's
        53
    """
    out, level = [], [(0, steps)]
    while level:
        split = [(s, n) for s, n in level if n // 2 >= max(1, spacing)]
        out += [s + n // 2 for s, n in split]
        level = [half for s, n in split for half in ((s, n // 2), (s + n // 2, n - n // 2))]
    return tuple(sorted(out))


def recurse(state: BisectionState, midpoint: Configuration, dispute: str) -> BisectionState:
    """The next round's claim: the half that B disputes (the erratum's intended semantics)."""
    k = state.round + 1
    if dispute == FIRST:
        return BisectionState(state.start, midpoint, state.first_length, state.start_time, k)
    if dispute == SECOND:
        return BisectionState(
            midpoint, state.end, state.length - state.first_length, state.midpoint_time, k
        )
    raise ProtocolError(f"dispute must be {FIRST!r} or {SECOND!r}, got {dispute!r}")


class BisectionA(Protocol):
    """Prover A's role: the final configuration, then a midpoint per round.

    Whatever A returns is copied into V's own :class:`Configuration` (an exact
    ``Configuration`` or its plain dict ``{"state", "head", "tape"}``) before any check.
    """

    def final(self, ctx: GameContext) -> object:
        """The claimed configuration after T steps."""
        ...

    def midpoint(self, ctx: GameContext, state: BisectionState) -> object:
        """The claimed configuration at ``state.midpoint_time``."""
        ...


class BisectionB(Protocol):
    """Prover B's role: which half of the current claim A lied about."""

    def dispute(self, ctx: GameContext, state: BisectionState, midpoint: Configuration) -> str:
        """``"first"`` or ``"second"``: the half B says A lied about."""
        ...


def state_dict(s: BisectionState) -> dict[str, object]:
    """A bisection state as plain data (what ``midpoint`` and ``dispute`` receive)."""
    return {
        "start": configuration_dict(s.start),
        "end": configuration_dict(s.end),
        "length": s.length,
        "start_time": s.start_time,
        "round": s.round,
    }


def bisection_state(d: object) -> BisectionState:
    """A :class:`BisectionState` from its plain form (:func:`state_dict`)."""
    if type(d) is not dict:
        raise ProtocolError("a bisection state must be an object")
    return BisectionState(
        as_configuration(d.get("start"), "start"),
        as_configuration(d.get("end"), "end"),
        as_int(d.get("length"), "length"),
        as_int(d.get("start_time"), "start_time"),
        as_int(d.get("round"), "round"),
    )


STATE = sent(
    "state",
    '{"start": conf, "end": conf, "length": int, "start_time": int, "round": int}',
    decode=lambda x, side: bisection_state(x),
    encode=state_dict,
)


def _copy_state(s: BisectionState) -> BisectionState:
    """A fresh state for a party (changing it changes nothing V holds)."""
    return BisectionState(
        _copy_config(s.start), _copy_config(s.end), s.length, s.start_time, s.round
    )


def _copy_config(c: Configuration) -> Configuration:
    return Configuration(c.state, c.head, c.tape)


def play_bisection(
    machine: ConfigurationMachine,
    steps: int,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    oracle: Oracle | None = None,
    seed: int | None = 0,
    timeout: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> Outcome:
    """Play one bisection debate and return its record.

    Args:
        machine: the configuration machine under debate.
        steps: T (must be positive).
        claim: the output A asserts (0 or 1).
        prover_a: A's player (see :func:`proofgames.strategies.make_strategy`).
        prover_b: B's player.
        oracle: the oracle the machine queries.
        seed: root seed; A, B and V get independent streams.
        timeout: seconds allowed per strategy call (checked after it returns).
        progress: callback for long simulations.

    Example:
        The 4-state busy beaver halts at step 107.  A claims it does not, lying from 30% of
        the run on; honest B corners the lie in ceil(log2 107) = 7 rounds, V reading 9
        configurations and checking one step:

        >>> from proofgames import TuringMachine, make_strategy, play_bisection
        >>> tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", steps=107)
        >>> out = play_bisection(tm, 107, claim=0,
        ...     prover_a=make_strategy("bisection", "A", "flip-step:at=0.3"),
        ...     prover_b=make_strategy("bisection", "B", "honest"), seed=0)
        >>> out.winner, out.reason
        ('B', "A's configurations at times 31 and 32 are not one step apart")
        >>> out.costs.rounds, out.costs.verifier_reads, out.costs.verifier_steps
        (7, 9, 1)

    """
    require_type("machine", machine, ConfigurationMachine, "TuringMachine.sized(...)")
    if type(steps) is not int or steps <= 0:
        raise ProtocolError(f"steps must be a positive integer, got {steps!r}")
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    d = Debate(NAME, prover_a, prover_b, oracle, seed, timeout)
    game = _Game(d, machine, steps, claim, progress)
    v_steps = 0
    try:
        game.argue()
        verdict, reason = game.check()
        v_steps = 1
    except Forfeit:
        verdict, reason = d.loss()
    return d.outcome(
        machine.name,
        steps,
        claim,
        verdict,
        reason,
        rounds=game.state.round,
        reads=game.reads,
        unit="configurations",
        bits=game.reads * machine.config_bits(),
        verifier_steps=v_steps,
        b_reads=game.reads - 1,
    )


class _Game:
    """One bisection debate as V plays it: the claim under dispute and what V has read."""

    def __init__(
        self,
        d: Debate,
        machine: ConfigurationMachine,
        steps: int,
        claim: int,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.d, self.machine, self.claim = d, machine, claim
        self.ctx_a = d.context("A", machine, steps, claim, progress)
        self.ctx_b = d.context("B", machine, steps, claim, progress)
        self.state = BisectionState(machine.initial(), machine.initial(), steps)
        self.reads = 1  # V builds and reads the initial configuration from x

    def argue(self) -> None:
        """A's final configuration, then a midpoint and B's dispute per round."""
        d, m = self.d, self.machine
        final = self._receive("final", 0)
        if m.accepts(final) != self.claim:
            d.forfeit(
                "A",
                f"A's final configuration has output {m.accepts(final)}, "
                f"not its claim {self.claim}",
            )
        self.state = replace(self.state, end=final)
        while self.state.length > 1:
            s = self.state
            mid = self._receive("midpoint", s.round, _copy_state(s))
            half = d.parties["B"].call(
                "dispute", "dispute", self.ctx_b, _copy_state(s), _copy_config(mid),
                parse=lambda raw: as_choice(raw, (FIRST, SECOND), "dispute"),
            )  # fmt: skip
            d.say(s.round, "B", "dispute", half)
            self.state = recurse(s, mid, half)

    def check(self) -> tuple[int, str]:
        """V's one step: checks the last disputed step (its end is one step after its start)."""
        s, d = self.state, self.d
        ok = self.machine.step(s.start, d.ledger.view("V"), d.rng["V"]) == s.end
        d.say(s.round, "V", "check", {"time": s.start_time, "valid_step": ok})
        if ok:
            return 1, f"the step at time {s.start_time} is valid"
        return 0, (
            f"A's configurations at times {s.start_time} and {s.start_time + 1} "
            "are not one step apart"
        )

    def _receive(self, what: str, k: int, *args: object) -> Configuration:
        m = self.machine
        checked: Configuration = self.d.parties["A"].call(
            f"{what} configuration", what, self.ctx_a, *args,
            parse=lambda raw: m.validate(as_configuration(raw, "configuration")),
        )  # fmt: skip
        self.reads += 1
        content = {"state": checked.state, "head": checked.head, "digest": checked.digest()}
        self.d.say(k, "A", what, content)
        return checked


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    refuse_params(opts, NAME)
    return play_bisection(
        inst.target, inst.steps, claim, a, b, oracle=inst.oracle, seed=opts.seed,
        timeout=opts.timeout, progress=opts.progress,
    )  # fmt: skip


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 3 (with the erratum in step (c) corrected)",
        theorem="Theorem 5.1",
        instance="configuration",
        completeness=1.0,
        soundness=0.0,
        verifier_cost="reads ceil(log2 T) + 2 configurations (O(S log T) bits); "
        "at most 1 oracle query",
        play=play_bisection,
        defaults=Defaults("bb5"),
        run=_run,
        roles={
            "A": Role(
                BisectionA,
                (
                    Method("final", (CONTEXT,), "conf: the configuration after T steps"),
                    Method("midpoint", (CONTEXT, STATE), "conf at state.midpoint_time"),
                ),
            ),
            "B": Role(
                BisectionB,
                (
                    Method(
                        "dispute",
                        (CONTEXT, STATE, CONFIGURATION.renamed("midpoint")),
                        '"first" or "second": the half B says A lied about',
                    ),
                ),
            ),
        },
    )
)
