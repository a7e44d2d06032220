"""Exact game values on small instances: the exponentially powerful dishonest prover.

Soundness quantifies over *every* strategy of a dishonest prover, whatever it costs; on
small instances we evaluate that literally and get exact minimax values.

* **cross-examination** (Figure 4): A commits to any of ``alphabet ** length`` transcripts,
  B challenges any position; V accepts iff the output entry is the claim and the
  challenged entry equals its step recomputed from the transcript's own relevant entries.
  Each step is tabulated by one ``step_batch`` call over every distinct vector of its
  relevant entries, then looked up for all transcripts at once with numpy.
* **bisection** (Figure 3): A sends any well-formed configuration as final claim and as
  each midpoint, B disputes either half.  If ``W_1[z, z']`` is "one valid step", then
  ``W_t = W_{floor(t/2)} . W_{t - floor(t/2)}`` (boolean product: A's midpoint is the OR,
  B's half the AND), computed only for the lengths reached from T.
  :func:`bisection_minimax` walks the same game tree move by move as a cross-check.

Oracles must be deterministic (every value is then 0 or 1); the queries spent tabulating
V's possible checks are counted on an :class:`~proofgames.OracleLedger` as party ``"V"``.

Example:
    >>> from proofgames import TranscriptBuilder, gates
    >>> from proofgames.exhaustive import cross_examination_value
    >>> b = TranscriptBuilder(inputs=bytes([1, 0, 1]))
    >>> y = b.gate(gates.XOR, inputs=[0, 1])
    >>> out = b.gate(gates.XOR, inputs=[2], relevant=[y])
    >>> g = cross_examination_value(b.build(name="parity3"), claim=1)
    >>> g.value, g.truth, g.strategies_searched, g.defensible, g.winning
    (0.0, 0, (4, 2), 1, 0)

"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .._configuration import Configuration
from .._oracle import Oracle, OracleLedger, OracleView
from .._transcript import IntArray, TranscriptMachine
from ..errors import ProtocolError
from ..machines.turing import TuringMachine
from ..protocols.bisection import FIRST, SECOND, BisectionState, recurse

__all__ = [
    "ExactGuarantees",
    "GameValue",
    "bisection_minimax",
    "bisection_value",
    "cross_examination_value",
    "exact_completeness_soundness",
    "surviving_transcripts",
]

BoolArray = NDArray[np.bool_]

CROSS_EXAMINATION = "cross-examination"
BISECTION = "bisection"
MAX_TRANSCRIPTS = 1 << 22
MAX_CONFIGURATIONS = 4096
MAX_MINIMAX_CONFIGURATIONS = 64


@dataclass(frozen=True)
class GameValue:
    """The exact value of a debate game for one claim.

    Attributes:
        protocol: ``"cross-examination"`` or ``"bisection"``.
        machine: the machine's name.
        steps: T (cross-examination: the machine's ``steps`` if any, else its length).
        claim: the output A asserts.
        value: ``max_A min_B P[V accepts]``.
        truth: the machine's true output.
        strategies_searched: ``(A's, B's)`` moves weighed: every transcript and position
            (cross-examination); every final claim and (pair, midpoint) per length, and B's
            two replies to each (bisection DP); the moves visited (bisection minimax).
        candidates: the objects A picks among (transcripts or configurations).
        defensible: A's opening moves (transcripts or final configurations) that survive
            every challenge of B, whatever their output.
        winning: the defensible opening moves whose output is the claim.
        verifier_queries: oracle queries spent tabulating every check V could make.
        seconds: wall time of the search (not part of equality).

    """

    protocol: str
    machine: str
    steps: int
    claim: int
    value: float
    truth: int
    strategies_searched: tuple[int, int]
    candidates: int
    defensible: int
    winning: int
    verifier_queries: int
    seconds: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class ExactGuarantees:
    """Completeness and soundness of one instance, computed exactly.

    Attributes:
        completeness: the game value when A defends the true output.
        soundness: the game value when A defends the false output (0 means sound).
        honest: the full record for the true claim.
        dishonest: the full record for the false claim.

    """

    completeness: float
    soundness: float
    honest: GameValue
    dishonest: GameValue


def _check_claim(claim: int) -> int:
    if isinstance(claim, bool) or claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    return int(claim)


def _ledger(oracle: Oracle | None) -> OracleLedger:
    if oracle is not None and not oracle.deterministic:
        raise ProtocolError(f"exact values need a deterministic oracle; {oracle.name!r} is not")
    return OracleLedger(oracle)


@dataclass(frozen=True)
class _Solved:
    """Everything both claims' values are read from: which opening moves A can defend."""

    protocol: str
    machine: str
    steps: int
    defensible: BoolArray  # per opening move (transcript or final configuration)
    outputs: IntArray  # per opening move: the output it asserts
    truth: int
    searched: tuple[int, int]
    queries: int
    seconds: float

    def value(self, claim: int) -> GameValue:
        claim = _check_claim(claim)
        win = int(np.count_nonzero(self.defensible & (self.outputs == claim)))
        return GameValue(self.protocol, self.machine, self.steps, claim, float(win > 0),
                         self.truth, self.searched, int(self.defensible.size),
                         int(np.count_nonzero(self.defensible)), win, self.queries,
                         self.seconds)  # fmt: skip


# --------------------------------------------------------------- cross-examination
def _entries(index: IntArray, positions: Sequence[int], alphabet: int) -> IntArray:
    """Entries at ``positions`` of transcripts ``index``: ``(i // alphabet**p) % alphabet``."""
    out = np.zeros((index.size, len(positions)), dtype=np.int64)
    for j, p in enumerate(positions):
        out[:, j] = (index // alphabet**p) % alphabet
    return out


def _cross_table(machine: TranscriptMachine, oracle: Oracle | None, limit: int) -> _Solved:
    start = time.perf_counter()
    a, n = int(machine.alphabet), int(machine.length)
    count = int(a**n) if n * math.log2(max(a, 2)) <= 64 else None
    if count is None or count > limit:
        raise ProtocolError(
            f"{machine.name}: exhaustive cross-examination would enumerate alphabet^length = "
            f"{a}^{n}" + (f" = {count}" if count else "") + f" transcripts; the limit is {limit}"
        )
    ledger = _ledger(oracle)
    index = np.arange(count, dtype=np.int64)
    survives = np.ones(count, dtype=np.bool_)
    for t in range(n):
        rel = machine.checked_relevant(t)
        if a ** len(rel) <= count:  # tabulate step t once per distinct vector of inputs
            combos = _entries(np.arange(a ** len(rel), dtype=np.int64), range(len(rel)), a)
            table = np.asarray(machine.step_batch(t, combos, ledger.view("V")), np.int64)
            code = _entries(index, rel, a) @ (a ** np.arange(len(rel), dtype=np.int64))
            expected = table[code]
        else:  # repeated positions in I(t): evaluate on every transcript directly
            expected = machine.step_batch(t, _entries(index, rel, a), ledger.view("V"))
        survives &= expected == _entries(index, [t], a)[:, 0]
    out = machine.output_position
    truth = int(machine.run(OracleLedger(oracle).view("A"))[out])
    return _Solved(CROSS_EXAMINATION, machine.name, int(getattr(machine, "steps", n)), survives,
                   _entries(index, [out], a)[:, 0], truth, (count, n), ledger.counts()["V"],
                   time.perf_counter() - start)  # fmt: skip


def cross_examination_value(
    machine: TranscriptMachine,
    claim: int,
    *,
    oracle: Oracle | None = None,
    max_transcripts: int = MAX_TRANSCRIPTS,
) -> GameValue:
    """Exact value of cross-examination when A may commit to any transcript at all.

    Args:
        machine: the transcript machine (``alphabet ** length`` at most ``max_transcripts``).
        claim: the output A asserts (0 or 1).
        oracle: a deterministic oracle, for machines with query steps.
        max_transcripts: refuse instances with more transcripts than this.

    Raises:
        ProtocolError: for a claim other than 0/1, a stochastic oracle, or too many
            transcripts (the message names ``alphabet^length``).

    Example:
        >>> from proofgames import TranscriptBuilder, gates
        >>> b = TranscriptBuilder(inputs=bytes([1, 1]))
        >>> _ = b.gate(gates.AND, inputs=[0, 1])
        >>> cross_examination_value(b.build(name="and2"), claim=1).value
        1.0

    """
    return _cross_table(machine, oracle, max_transcripts).value(claim)


def surviving_transcripts(
    machine: TranscriptMachine,
    claim: int | None = None,
    *,
    oracle: Oracle | None = None,
    max_transcripts: int = MAX_TRANSCRIPTS,
) -> IntArray:
    """A's best transcripts: those no challenge of B refutes.

    Args:
        machine: the transcript machine.
        claim: if given, keep only transcripts whose output is ``claim`` (A's winning
            commitments for that claim); if ``None``, every transcript that survives.
        oracle: a deterministic oracle, for machines with query steps.
        max_transcripts: refuse instances with more transcripts than this.

    Returns:
        Shape ``(k, length)``: the surviving transcripts, one per row, in index order.

    Example:
        >>> from proofgames import TranscriptBuilder, gates
        >>> b = TranscriptBuilder(inputs=bytes([0, 1]))
        >>> _ = b.gate(gates.OR, inputs=[0, 1])
        >>> _ = b.gate(gates.NOT, relevant=[0])
        >>> surviving_transcripts(b.build(), claim=0).tolist()
        [[1, 0]]
        >>> surviving_transcripts(b.build(), claim=1).shape  # A cannot defend claim 1
        (0, 2)

    """
    tab = _cross_table(machine, oracle, max_transcripts)
    keep = tab.defensible & (True if claim is None else tab.outputs == _check_claim(claim))
    return _entries(np.flatnonzero(keep), range(machine.length), int(machine.alphabet))


# ----------------------------------------------------------------------- bisection
def _configurations(machine: TuringMachine, limit: int) -> list[Configuration]:
    """Every well-formed configuration: each state (HALT, OVERFLOW too), head and tape."""
    p, s, k = machine.program, machine.size, machine.program.symbols
    count = (p.states + 2) * s * k**s if s * math.log2(k) <= 64 else None
    if count is None or count > limit:
        raise ProtocolError(
            f"{machine.name}: exhaustive bisection would enumerate {p.states + 2} states x "
            f"{s} heads x {k}^{s} tapes" + (f" = {count}" if count else "")
            + f" configurations; the limit is {limit}"
        )  # fmt: skip
    tapes = [bytes(t) for t in itertools.product(range(k), repeat=s)]
    grid = itertools.product(range(p.states + 2), range(s), tapes)
    return [machine.validate(Configuration(q, h, t)) for q, h, t in grid]


def _lengths(steps: int) -> list[int]:
    """The lengths the bisection recursion reaches from ``steps``, increasing."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
        raise ProtocolError(f"steps must be a positive integer, got {steps!r}")
    need, level = {steps}, {steps}
    while level := {u for t in level if t > 1 for u in (t // 2, t - t // 2)}:
        need |= level
    return sorted(need)


_Searched = tuple[BoolArray, tuple[int, int]]


def _dp(machine: TuringMachine, lengths: list[int], configs: list[Configuration],
        view: OracleView) -> _Searched:  # fmt: skip
    index = {c: i for i, c in enumerate(configs)}
    n = len(configs)
    w: dict[int, BoolArray] = {1: np.zeros((n, n), dtype=np.bool_)}
    w[1][np.arange(n), [index[machine.step(c, view)] for c in configs]] = True
    for t in lengths[1:]:  # A picks the midpoint (OR), B the half (AND): a boolean product
        w[t] = (w[t // 2].astype(np.float32) @ w[t - t // 2].astype(np.float32)) > 0.5
    internal = (len(lengths) - 1) * n**3
    return w[lengths[-1]][index[machine.initial()]], (n + internal, 2 * internal)


def _search(machine: TuringMachine, lengths: list[int], configs: list[Configuration],
            view: OracleView) -> _Searched:  # fmt: skip
    after = functools.cache(functools.partial(machine.step, oracle=view))
    memo: dict[tuple[Configuration, Configuration, int], bool] = {}
    moves = [len(configs), 0]

    def a_wins(s: BisectionState) -> bool:
        key = (s.start, s.end, s.length)
        if key not in memo:
            if s.length == 1:  # V's check: one valid step
                memo[key] = after(s.start) == s.end
            else:  # A may name any configuration as the midpoint
                memo[key] = any(defends(s, mid) for mid in configs)
        return memo[key]

    def defends(s: BisectionState, mid: Configuration) -> bool:
        moves[0] += 1
        for half in (FIRST, SECOND):  # B disputes either half; A must survive both
            moves[1] += 1
            if not a_wins(recurse(s, mid, half)):
                return False
        return True

    start = machine.initial()
    finals = [a_wins(BisectionState(start, z, lengths[-1])) for z in configs]
    return np.array(finals, dtype=np.bool_), (moves[0], moves[1])


def _bisection(machine: TuringMachine, steps: int, oracle: Oracle | None, limit: int,
               explicit: bool) -> _Solved:  # fmt: skip
    start, lengths = time.perf_counter(), _lengths(steps)
    configs = _configurations(machine, limit)
    ledger = _ledger(oracle)
    defensible, searched = (_search if explicit else _dp)(machine, lengths, configs,
                                                          ledger.view("V"))  # fmt: skip
    final = machine.advance(machine.initial(), steps, OracleLedger(oracle).view("A"))
    accepts = np.array([machine.accepts(c) for c in configs], dtype=np.int64)
    return _Solved(BISECTION, machine.name, steps, defensible, accepts, machine.accepts(final),
                   searched, ledger.counts()["V"], time.perf_counter() - start)  # fmt: skip


def bisection_value(
    machine: TuringMachine,
    steps: int,
    claim: int,
    *,
    oracle: Oracle | None = None,
    max_configurations: int = MAX_CONFIGURATIONS,
) -> GameValue:
    """Exact value of bisection, by dynamic programming over every configuration.

    Args:
        machine: a small Turing machine: ``(states + 2) * space * symbols**space`` configurations.
        steps: T.
        claim: the output A asserts (0 or 1).
        oracle: a deterministic oracle, for machines with query states.
        max_configurations: refuse machines with more configurations than this.

    Raises:
        ProtocolError: for bad ``steps`` or ``claim``, a stochastic oracle, or too many
            configurations (the message names the count).

    Example:
        >>> from proofgames.machines import TuringMachine
        >>> tm = TuringMachine("1RB1LB_1LA1RZ", space=4, origin=2)
        >>> g = bisection_value(tm, 6, claim=1)
        >>> g.value, g.truth, g.candidates, g.winning
        (1.0, 1, 256, 1)
        >>> bisection_value(tm, 5, claim=1).value
        0.0

    """
    return _bisection(machine, steps, oracle, max_configurations, False).value(claim)


def bisection_minimax(
    machine: TuringMachine,
    steps: int,
    claim: int,
    *,
    oracle: Oracle | None = None,
    max_configurations: int = MAX_MINIMAX_CONFIGURATIONS,
) -> GameValue:
    """Exact value of bisection by explicit, memoized game-tree search.

    A tries every configuration as final claim and as each midpoint, B both halves (with
    the protocol's own ``recurse``), V checks the last step with ``machine.step``.  About
    ``configurations ** 3`` moves per length: a cross-check of :func:`bisection_value` on
    tiny machines; the arguments are the same.

    Example:
        >>> from proofgames.machines import TuringMachine
        >>> tm = TuringMachine("1RB1LB_1LA1RZ", space=1)
        >>> g = bisection_minimax(tm, 3, claim=0)
        >>> g.value, g.winning, g.candidates, g.strategies_searched
        (1.0, 1, 8, (136, 144))
        >>> g.value == bisection_value(tm, 3, claim=0).value
        True

    """
    return _bisection(machine, steps, oracle, max_configurations, True).value(claim)


def exact_completeness_soundness(
    machine: TranscriptMachine | TuringMachine,
    steps: int | None = None,
    *,
    oracle: Oracle | None = None,
    limit: int | None = None,
) -> ExactGuarantees:
    """Completeness and soundness of one instance against an all-powerful prover.

    Args:
        machine: a transcript machine (debated by cross-examination) or a Turing machine
            (bisection, dynamic programme).
        steps: T, required for a Turing machine.
        oracle: a deterministic oracle, if the machine queries one.
        limit: the size limit (transcripts or configurations); default per protocol.

    Raises:
        ProtocolError: if the instance is too large, ``steps`` is missing, or the true
            output is not a bit.

    Example:
        >>> from proofgames.machines import TuringMachine
        >>> g = exact_completeness_soundness(TuringMachine("1RB1LB_1LA1RZ", space=2), 4)
        >>> g.completeness, g.soundness, g.honest.truth
        (1.0, 0.0, 0)

    """
    if isinstance(machine, TranscriptMachine):
        solved = _cross_table(machine, oracle, MAX_TRANSCRIPTS if limit is None else limit)
    elif isinstance(machine, TuringMachine):
        if steps is None:
            raise ProtocolError("bisection needs steps (T) for a Turing machine")
        solved = _bisection(
            machine, steps, oracle, MAX_CONFIGURATIONS if limit is None else limit, False
        )
    else:
        raise ProtocolError(
            f"expected a TranscriptMachine or TuringMachine, got {type(machine).__name__}"
        )
    if solved.truth not in (0, 1):
        raise ProtocolError(f"{machine.name}: the true output {solved.truth} is not a bit")
    honest, dishonest = solved.value(solved.truth), solved.value(1 - solved.truth)
    return ExactGuarantees(honest.value, dishonest.value, honest, dishonest)
