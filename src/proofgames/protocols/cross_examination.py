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

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._errors import ProtocolError
from .._oracle import Oracle, OracleLedger
from .._registry import Player
from .._transcript import IntArray, TranscriptMachine
from ._catalog import ProtocolInfo, register_protocol
from ._common import (
    Costs,
    Forfeit,
    GameContext,
    Message,
    Outcome,
    player_work,
    safe_call,
    spawn_rngs,
)

NAME = "cross-examination"
Reader = Callable[[Any], IntArray]


class CommittedTranscript(Protocol):
    """A's committed transcript: answers any batch of positions."""

    def entries(self, positions: IntArray) -> Any:
        """Values at ``positions``."""


class TranscriptAccess:
    """Reads of A's committed transcript, logged per party and checked for consistency."""

    def __init__(
        self, committed: CommittedTranscript, machine: TranscriptMachine, timeout: float | None
    ) -> None:
        self._committed = committed
        self._machine = machine
        self._timeout = timeout
        self._seen_pos = np.zeros(0, dtype=np.int64)  # sorted positions answered so far
        self._seen_val = np.zeros(0, dtype=np.int64)
        self.reads: dict[str, int] = {"B": 0, "V": 0}

    def reader(self, party: str) -> Reader:
        """A read function for one party."""
        return lambda positions: self.read(party, positions)

    def read(self, party: str, positions: Any) -> IntArray:
        """Ask A (an independent copy) for ``positions``; count and log the answers."""
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        if pos.size and (pos.min() < 0 or pos.max() >= self._machine.length):
            raise Forfeit(party, f"asked for positions outside [0, {self._machine.length})")
        raw = safe_call("A", "entries", self._committed.entries, pos, timeout=self._timeout)
        try:
            vals = np.asarray(raw)
            ok = vals.shape == pos.shape and np.issubdtype(vals.dtype, np.integer)
        except Exception:  # pragma: no cover - defensive
            ok = False
        if not ok:
            raise Forfeit("A", f"sent malformed entries for {pos.size} positions: {raw!r:.80}")
        vals = vals.astype(np.int64)
        bad = (vals < 0) | (vals >= self._machine.alphabet)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise Forfeit(
                "A",
                f"entry {int(pos[i])} = {int(vals[i])} is outside the alphabet "
                f"0..{self._machine.alphabet - 1}",
            )
        self.reads[party] += int(pos.size)
        self._log(pos, vals)
        return vals

    def _log(self, pos: IntArray, vals: IntArray) -> None:
        """Record answers; two different answers for one position make A forfeit."""
        uniq, first, inverse = np.unique(pos, return_index=True, return_inverse=True)
        clash = np.flatnonzero(vals != vals[first][inverse])
        if clash.size:
            i = int(clash[0])
            p, v = int(pos[i]), int(vals[first][inverse][i])
            raise Forfeit("A", f"gave entry {p} as {v} and as {int(vals[i])} in one answer")
        uvals = vals[first]
        idx = np.searchsorted(self._seen_pos, uniq)
        known = idx < self._seen_pos.size
        known[known] = self._seen_pos[idx[known]] == uniq[known]
        prev = self._seen_val[idx[known]]
        differ = np.flatnonzero(prev != uvals[known])
        if differ.size:
            j = int(differ[0])
            p = int(uniq[known][j])
            raise Forfeit(
                "A",
                f"gave entry {p} as {int(prev[j])} and as {int(uvals[known][j])} "
                "to independent copies",
            )
        if (~known).any():
            merged_pos = np.concatenate([self._seen_pos, uniq[~known]])
            order = np.argsort(merged_pos, kind="stable")
            self._seen_pos = merged_pos[order]
            self._seen_val = np.concatenate([self._seen_val, uvals[~known]])[order]


class CrossExaminationA(Player):
    """Interface of prover A in cross-examination."""

    def commit(self, ctx: GameContext) -> CommittedTranscript:
        """Return the committed transcript."""
        raise NotImplementedError


class CrossExaminationB(Player):
    """Interface of prover B in cross-examination."""

    def challenge(self, ctx: GameContext, read: Reader) -> int:
        """Return the position B disputes; ``read(positions)`` questions A."""
        raise NotImplementedError


@dataclass(frozen=True)
class Examination:
    """What one cross-examination of a committed transcript decided and cost V.

    Attributes:
        verdict: 1 iff V accepts A's claim.
        reason: why (including forfeits).
        verifier_bits: bits V read: entries, plus the input symbols the checked step reads.
        verifier_steps: machine steps V recomputed (0 or 1).
        reads: transcript entries read by B and by V.

    """

    verdict: int
    reason: str
    verifier_bits: int
    verifier_steps: int
    reads: dict[str, int]

    def costs(
        self, ledger: OracleLedger, prover_a: Player, prover_b: Player, start: float
    ) -> Costs:
        """The debate's costs, with oracle calls from ``ledger`` and time since ``start``."""
        counts = ledger.counts()
        return Costs(
            rounds=1,
            verifier_reads=self.reads["V"],
            verifier_read_unit="entries",
            verifier_bits=self.verifier_bits,
            verifier_queries=counts["V"],
            verifier_steps=self.verifier_steps,
            prover_steps={"A": player_work(prover_a), "B": player_work(prover_b)},
            prover_queries={"A": counts["A"], "B": counts["B"]},
            prover_reads={"A": 0, "B": self.reads["B"]},
            seconds=time.perf_counter() - start,
        )


def cross_examine(
    machine: TranscriptMachine,
    claim: int,
    prover_a: Player,
    prover_b: Player,
    ctx_a: GameContext,
    ctx_b: GameContext,
    ledger: OracleLedger,
    rng_v: np.random.Generator,
    messages: list[Message],
    *,
    timeout: float | None = None,
    input_bits: int = 8,
) -> Examination:
    """Steps 1-3 of Figure 4 on ``machine``, appending to ``messages`` (all but the verdict).

    Protocols that run cross-examination as a phase (the witness protocol) call this with
    their own ledger, contexts and message list.  ``input_bits`` is what V pays for each
    input symbol the checked step reads.  Forfeits are caught and decide the verdict.
    """
    access: TranscriptAccess | None = None
    v_steps = v_bits = 0
    out = machine.output_position
    try:
        committed = safe_call(
            "A", "commit", lambda: getattr(prover_a, "commit")(ctx_a), timeout=timeout
        )
        access = TranscriptAccess(committed, machine, timeout)
        a_out = int(access.read("V", [out])[0])
        v_bits += machine.entry_bits()
        messages.append(Message(0, "A", "commit", {"output": a_out}))
        if a_out != claim:
            raise Forfeit("A", f"A's transcript ends in {a_out}, not in its claim {claim}")
        read_b = access.reader("B")
        t = safe_call(
            "B", "challenge", lambda: getattr(prover_b, "challenge")(ctx_b, read_b), timeout=timeout
        )
        if (
            isinstance(t, (bool, np.bool_))
            or not isinstance(t, (int, np.integer))
            or not 0 <= t < machine.length
        ):
            raise Forfeit("B", f"challenged {t!r}, not a position in [0, {machine.length})")
        t = int(t)
        messages.append(Message(0, "B", "challenge", t))
        rel = machine.checked_relevant(t)
        read_pos = [p for p in (*rel, t) if p != out]
        vals = access.read("V", read_pos) if read_pos else np.zeros(0, np.int64)
        known = dict(zip(read_pos, vals.tolist(), strict=True)) | {out: a_out}
        v_bits += len(read_pos) * machine.entry_bits()
        v_bits += input_bits * len(machine.input_positions(t))
        inputs = [known[p] for p in rel]
        expected = machine.step(t, inputs, ledger.view("V"), rng_v)
        v_steps = 1
        messages.append(
            Message(
                0,
                "V",
                "check",
                {
                    "position": t,
                    "relevant": list(rel),
                    "inputs": inputs,
                    "entry": known[t],
                    "recomputed": expected,
                },
            )
        )
        if expected == known[t]:
            verdict, reason = 1, f"step {t} checks out ({expected})"
        else:
            verdict, reason = 0, f"step {t} is wrong: A wrote {known[t]}, it should be {expected}"
    except Forfeit as f:
        verdict = 0 if f.party == "A" else 1
        reason = f"{f.party} loses: {f.reason}"
    reads = dict(access.reads) if access is not None else {"B": 0, "V": 0}
    return Examination(verdict, reason, v_bits, v_steps, reads)


def play_cross_examination(
    machine: TranscriptMachine,
    claim: int,
    prover_a: Player,
    prover_b: Player,
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
        prover_a, prover_b: players (see :func:`proofgames.strategies.make_strategy`).
        oracle: the oracle the machine queries.
        seed: root seed; A, B and V get independent streams.
        timeout: seconds allowed per strategy call (checked after it returns).
        progress: callback for long simulations.

    """
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    start = time.perf_counter()
    ledger = OracleLedger(oracle)
    rng_a, rng_b, rng_v = spawn_rngs(seed, 3)
    steps = int(getattr(machine, "steps", machine.length))
    ctx_a = GameContext(machine, steps, claim, ledger.view("A"), rng_a, progress)
    ctx_b = GameContext(machine, steps, claim, ledger.view("B"), rng_b, progress)
    messages: list[Message] = []
    exam = cross_examine(
        machine, claim, prover_a, prover_b, ctx_a, ctx_b, ledger, rng_v, messages, timeout=timeout
    )
    messages.append(Message(0, "V", "verdict", exam.verdict))
    costs = exam.costs(ledger, prover_a, prover_b, start)
    return Outcome(
        NAME,
        machine.name,
        steps,
        claim,
        exam.verdict,
        "A" if exam.verdict else "B",
        exam.reason,
        prover_a.spec,
        prover_b.spec,
        seed,
        tuple(messages),
        costs,
    )


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
    )
)
