"""Debate with cross-examination (Figure 4, Theorem 5.3).

Rules (transcript machine M with relevant sets I(t), output y[T-1]):

1. A commits to a transcript ``a``, claimed to be ``M(x)`` with output ``a[T-1] = claim``.
2. B names a position ``t`` where ``a[t]`` is supposedly wrong.
3. V reads ``a[T-1]`` (is it the claim?), ``a[I(t)]`` and ``a[t]``, recomputes step ``t``
   from ``a[I(t)]`` (at most one oracle query) and accepts iff ``a[t]`` is right.

Cross-examination: V and B question independent copies of A, so A cannot adapt an entry
to who asks.  Here every answer A gives is logged; if two reads of the same position get
different answers, A forfeits.  Bounds claimed by the theorem: completeness 1, soundness 0,
provers O(T log T) time, V reads O(|I(t)|) = O(1) entries and makes O(1) oracle queries.

Example:
    >>> from proofgames.machines import TuringMachine, TableauTranscript
    >>> from proofgames.protocols import play_cross_examination
    >>> from proofgames.strategies import make_strategy
    >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
    >>> out = play_cross_examination(TableauTranscript(tm, 6), claim=1,
    ...     prover_a=make_strategy("cross-examination", "A", "honest"),
    ...     prover_b=make_strategy("cross-examination", "B", "random"), seed=0)
    >>> out.winner, out.costs.verifier_reads <= 5
    ('A', True)

"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .._oracle import Oracle
from .._transcript import IntArray, TranscriptMachine
from ..errors import ProtocolError, require_type
from ..wire import Malformed, as_int, as_int_array, as_positions
from ._catalog import Defaults, Instance, Options, ProtocolInfo, refuse_params, register_protocol
from ._common import Debate, Forfeit, GameContext, Outcome
from .roles import CONTEXT, POSITIONS, READ, Method, Role

NAME = "cross-examination"
Reader = Callable[[Any], IntArray]


class TranscriptAccess:
    """Reads of A's committed transcript, logged per party and checked for consistency.

    Every read is a call into A (an independent copy: it is given only the positions);
    its answer is copied into a read-only ``int64`` array V owns before any check.
    """

    def __init__(self, d: Debate, ctx_a: GameContext, machine: TranscriptMachine) -> None:
        self._d, self._ctx_a, self._machine = d, ctx_a, machine
        self._seen_pos = np.zeros(0, dtype=np.int64)  # sorted positions answered so far
        self._seen_val = np.zeros(0, dtype=np.int64)
        self.reads: dict[str, int] = {"B": 0, "V": 0}
        self.open = True

    def reader(self, party: str) -> Reader:
        """A read function for one party (it works only while that party's move lasts)."""

        def read(positions: Any) -> IntArray:
            if not self.open:
                raise ProtocolError("this debate's reads are closed")
            try:
                pos = as_positions(positions, "positions")
            except Malformed as exc:
                self._d.forfeit(party, f"asked to read malformed positions: {exc.reason}")
            return self.read(party, pos).copy()

        return read

    def read(self, party: str, pos: IntArray) -> IntArray:
        """Ask A (an independent copy) for ``pos``; count and log the answers."""
        d, m = self._d, self._machine
        if pos.size and (pos.min() < 0 or pos.max() >= m.length):
            d.forfeit(party, f"asked for positions outside [0, {m.length})")
        shown = pos.copy()

        def entries(raw: object) -> IntArray:
            return as_int_array(raw, pos.shape, f"answer for {pos.size} positions")

        vals: IntArray = d.parties["A"].call(
            "entries", "entries", self._ctx_a, shown, parse=entries
        )
        bad = (vals < 0) | (vals >= m.alphabet)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            d.forfeit(
                "A",
                f"entry {int(pos[i])} = {int(vals[i])} is outside the alphabet 0..{m.alphabet - 1}",
            )
        self.reads[party] += int(pos.size)
        self._log(pos, vals)
        return vals

    def _log(self, pos: IntArray, vals: IntArray) -> None:
        """Record answers; two different answers for one position make A forfeit."""
        d = self._d
        uniq, first, inverse = np.unique(pos, return_index=True, return_inverse=True)
        clash = np.flatnonzero(vals != vals[first][inverse])
        if clash.size:
            i = int(clash[0])
            p, v = int(pos[i]), int(vals[first][inverse][i])
            d.forfeit("A", f"gave entry {p} as {v} and as {int(vals[i])} in one answer")
        uvals = vals[first]
        idx = np.searchsorted(self._seen_pos, uniq)
        known = idx < self._seen_pos.size
        known[known] = self._seen_pos[idx[known]] == uniq[known]
        prev = self._seen_val[idx[known]]
        differ = np.flatnonzero(prev != uvals[known])
        if differ.size:
            j = int(differ[0])
            p = int(uniq[known][j])
            d.forfeit(
                "A",
                f"gave entry {p} as {int(prev[j])} and as {int(uvals[known][j])} "
                "to independent copies",
            )
        if (~known).any():
            merged_pos = np.concatenate([self._seen_pos, uniq[~known]])
            order = np.argsort(merged_pos, kind="stable")
            self._seen_pos = merged_pos[order]
            self._seen_val = np.concatenate([self._seen_val, uvals[~known]])[order]


class CrossExaminationA(Protocol):
    """Prover A's role: commit to a transcript, then answer reads of it.

    ``commit`` is called once, before anyone reads; its return value is ignored.  Each
    ``entries`` call is a question to an independent copy of A: it sees only the positions,
    and two different answers for one position lose.
    """

    def commit(self, ctx: GameContext) -> object:
        """Fix the transcript A answers from."""
        ...

    def entries(self, ctx: GameContext, positions: IntArray) -> object:
        """The committed values at ``positions`` (integers, one per position)."""
        ...


class CrossExaminationB(Protocol):
    """Prover B's role: the position it disputes (it may question A first)."""

    def challenge(self, ctx: GameContext, read: Reader) -> int:
        """Return the position B disputes; ``read(positions)`` questions A."""
        ...


def cross_examine(
    d: Debate,
    machine: TranscriptMachine,
    claim: int,
    ctx_a: GameContext,
    ctx_b: GameContext,
    *,
    input_bits: int = 8,
) -> Outcome:
    """Steps 1-3 of Figure 4 on ``machine`` within debate ``d``; return the closed record.

    Protocols that run cross-examination as a phase (the witness protocol) call this with
    their own :class:`Debate` and contexts.  ``input_bits`` is what V pays for each input
    symbol the checked step reads.  Forfeits are caught and decide the verdict.
    """
    access = TranscriptAccess(d, ctx_a, machine)
    v_steps = v_bits = 0
    out = machine.output_position
    try:
        d.parties["A"].call("commit", "commit", ctx_a)
        a_out = int(access.read("V", np.array([out], dtype=np.int64))[0])
        v_bits += machine.entry_bits()
        d.say(0, "A", "commit", {"output": a_out})
        if a_out != claim:
            d.forfeit("A", f"A's transcript ends in {a_out}, not in its claim {claim}")
        t = _challenge(d, access, machine, ctx_b)
        verdict, reason, bits = _recompute(d, access, machine, t, a_out, input_bits)
        v_bits, v_steps = v_bits + bits, 1
    except Forfeit:
        verdict, reason = d.loss()
    return d.outcome(
        machine.name,
        int(getattr(machine, "steps", machine.length)),
        claim,
        verdict,
        reason,
        rounds=1,
        reads=access.reads["V"],
        unit="entries",
        bits=v_bits,
        verifier_steps=v_steps,
        b_reads=access.reads["B"],
    )


def _challenge(
    d: Debate, access: TranscriptAccess, machine: TranscriptMachine, ctx_b: GameContext
) -> int:
    """B's challenged position; B may question A while it decides, and only then."""

    def position(raw: object) -> int:
        t = as_int(raw, "challenge")
        if not 0 <= t < machine.length:
            raise Malformed(f"challenged {t}, not a position in [0, {machine.length})")
        return t

    try:
        t: int = d.parties["B"].call(
            "challenge", "challenge", ctx_b, access.reader("B"), parse=position
        )
    finally:
        access.open = False
    d.say(0, "B", "challenge", t)
    return t


def _recompute(
    d: Debate,
    access: TranscriptAccess,
    machine: TranscriptMachine,
    t: int,
    a_out: int,
    input_bits: int,
) -> tuple[int, str, int]:
    """V reads step ``t`` and its relevant entries and recomputes it: verdict, reason, bits."""
    out = machine.output_position
    rel = machine.checked_relevant(t)
    read_pos = [p for p in (*rel, t) if p != out]
    vals: list[int] = (
        access.read("V", np.array(read_pos, dtype=np.int64)).tolist() if read_pos else []
    )
    known = dict(zip(read_pos, vals, strict=True)) | {out: a_out}
    bits = len(read_pos) * machine.entry_bits() + input_bits * len(machine.input_positions(t))
    inputs = [known[p] for p in rel]
    expected = machine.step(t, inputs, d.ledger.view("V"), d.rng["V"])
    check = {"position": t, "relevant": list(rel), "inputs": inputs, "entry": known[t],
             "recomputed": expected}  # fmt: skip
    d.say(0, "V", "check", check)
    if expected == known[t]:
        return 1, f"step {t} checks out ({expected})", bits
    return 0, f"step {t} is wrong: A wrote {known[t]}, it should be {expected}", bits


def play_cross_examination(
    machine: TranscriptMachine,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    oracle: Oracle | None = None,
    seed: int | None = 0,
    timeout: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> Outcome:
    """Play one cross-examination debate and return its record.

    Args:
        machine: the transcript machine under debate.
        claim: the output A asserts (0 or 1).
        prover_a: A's player (see :func:`proofgames.strategies.make_strategy`).
        prover_b: B's player.
        oracle: the oracle the machine queries.
        seed: root seed; A, B and V get independent streams.
        timeout: seconds allowed per strategy call (checked after it returns).
        progress: callback for long simulations.

    Example:
        The tableau of the 4-state busy beaver's 107 steps has 1526 entries.  A falsifies
        one to claim the machine does not halt; honest B finds the bad entry and V reads
        just 5 entries to confirm it:

        >>> from proofgames import TableauTranscript, TuringMachine
        >>> from proofgames import make_strategy, play_cross_examination
        >>> tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", steps=107)
        >>> out = play_cross_examination(TableauTranscript(tm, 107), claim=0,
        ...     prover_a=make_strategy("cross-examination", "A", "flip-step"),
        ...     prover_b=make_strategy("cross-examination", "B", "honest"), seed=0)
        >>> out.winner, out.reason, out.costs.verifier_reads
        ('B', 'step 764 is wrong: A wrote 13, it should be 7', 5)

    """
    require_type("machine", machine, TranscriptMachine, "a TuringMachine")
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    d = Debate(NAME, prover_a, prover_b, oracle, seed, timeout)
    steps = int(getattr(machine, "steps", machine.length))
    ctx_a = d.context("A", machine, steps, claim, progress)
    ctx_b = d.context("B", machine, steps, claim, progress)
    return cross_examine(d, machine, claim, ctx_a, ctx_b)


COMMIT = Method("commit", (CONTEXT,), "anything (ignored): A fixes its transcript")
ENTRIES = Method(
    "entries",
    (CONTEXT, POSITIONS),
    "k ints in 0 .. alphabet-1, the same for a position asked twice",
)
CHALLENGE = Method(
    "challenge", (CONTEXT, READ), "an int: the position B disputes (B may send reads first)"
)


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    refuse_params(opts, NAME)
    return play_cross_examination(
        inst.target, claim, a, b, oracle=inst.oracle, seed=opts.seed, timeout=opts.timeout,
        progress=opts.progress,
    )  # fmt: skip


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 4",
        theorem="Theorem 5.3",
        instance="transcript",
        completeness=1.0,
        soundness=0.0,
        verifier_cost="reads |I(t)| + 2 entries (a constant); at most 1 oracle query",
        play=play_cross_examination,
        defaults=Defaults("bb5"),
        run=_run,
        roles={
            "A": Role(CrossExaminationA, (COMMIT, ENTRIES)),
            "B": Role(CrossExaminationB, (CHALLENGE,)),
        },
    )
)
