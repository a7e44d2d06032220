"""Strategies for the cross-examination protocol (Figure 4).

Prover A commits to a transcript: ``honest``, ``lie-output`` (the true transcript with the
output entry changed), ``flip-step`` (one entry altered, every later entry recomputed
consistently from it), ``random-step``.  Prover B names a position: ``honest`` (finds a
wrong entry whose inputs are right -- by binary search over rows on a lazily laid-out
tableau, never reading all T x S entries), ``random``, ``first``, ``last``.
"""

from __future__ import annotations

import numpy as np

from .._registry import Player, register_strategy
from .._transcript import IntArray, TranscriptMachine
from ..machines.tableau import TableauTranscript
from ..protocols._common import GameContext
from ..protocols.cross_examination import CrossExaminationA, CrossExaminationB, Reader
from ._runs import ClaimedRun, lie_time, require_range

P = "cross-examination"
_FLIP_SEARCH = 64  # later positions an explicit-transcript liar tries before the output


class ArrayTranscript:
    """A committed transcript held in memory."""

    def __init__(self, values: IntArray) -> None:
        self.values = np.asarray(values, dtype=np.int64)

    def entries(self, positions: IntArray) -> IntArray:
        """Values at ``positions``."""
        return self.values[positions]


class TableauView:
    """A committed tableau computed on demand from a :class:`ClaimedRun`."""

    def __init__(self, tab: TableauTranscript, run: ClaimedRun, output: int | None) -> None:
        self.tab, self.run, self._output = tab, run, output
        self._rows: dict[int, IntArray] = {}
        self._chain: IntArray | None = None

    def row(self, r: int) -> IntArray:
        """Encoded row ``r`` (a few recent rows are cached)."""
        if r not in self._rows:
            if len(self._rows) >= 8:
                self._rows.pop(next(iter(self._rows)))
            self._rows[r] = self.tab.encode_row(self.run.config_at(r))
        return self._rows[r]

    def chain(self) -> IntArray:
        """The output chain (with the lied output, if any)."""
        if self._chain is None:
            self._chain = self.tab.output_chain(self.run.final)
            if self._output is not None:
                self._chain[-1] = self._output
        return self._chain

    def entries(self, positions: IntArray) -> IntArray:
        """Values at ``positions``."""
        pos = np.asarray(positions, dtype=np.int64)
        rows, cells = np.divmod(pos, self.tab.width)
        out = np.empty(pos.shape, dtype=np.int64)
        for r in np.unique(rows).tolist():
            sel = rows == r
            src = self.chain() if r > self.tab.steps else self.row(r)
            out[sel] = src[cells[sel]]
        return out


def _explicit_lie(ctx: GameContext, t0: int, lie_output: bool) -> IntArray:
    """True transcript with one entry at or after ``t0`` changed, later entries consistent.

    Tries each position from ``t0`` on (a bounded number) and each other value there,
    recomputing only the entries that depend on the change, until the output is the claim;
    the output entry itself always works as a last resort.
    """
    m: TranscriptMachine = ctx.machine
    y = m.run(ctx.oracle, ctx.rng)
    if lie_output or y[-1] == ctx.claim:
        y[-1] = ctx.claim
        return y
    relevant = [m.relevant(u) for u in range(m.length)]
    for t in [*range(t0, min(m.length - 1, t0 + _FLIP_SEARCH)), m.length - 1]:
        for v in range(m.alphabet):
            if v == y[t]:
                continue
            z = y.copy()
            z[t] = v
            changed = {t}
            for u in range(t + 1, m.length):
                if changed.isdisjoint(relevant[u]):
                    continue
                new = m.step(u, [int(z[i]) for i in relevant[u]], ctx.oracle, ctx.rng)
                if new != z[u]:
                    z[u] = new
                    changed.add(u)
            if z[-1] == ctx.claim:
                return z
    y[-1] = ctx.claim  # pragma: no cover - the output itself always works
    return y


class _A(Player, CrossExaminationA):
    def __init__(
        self, at: float | None = None, random_time: bool = False, lie_output: bool = False
    ) -> None:
        self._at, self._random, self._lie_output = at, random_time, lie_output
        self._run: ClaimedRun | None = None
        self._committed: ArrayTranscript | _CountingView | None = None
        self._prepared: tuple[GameContext, ArrayTranscript | _CountingView] | None = None

    def entries(self, ctx: GameContext, positions: IntArray) -> IntArray:
        if self._committed is None:
            raise RuntimeError("entries asked before commit")
        return self._committed.entries(positions)

    def _time(self, ctx: GameContext, horizon: int) -> int | None:
        if self._random:
            return int(ctx.rng.integers(1, horizon + 1))
        return None if self._at is None else lie_time(self._at, horizon)

    def prepare(self, ctx: GameContext) -> None:
        """Build the transcript before the first call: the party runner's set-up hook."""
        self._prepared = (ctx, self._build(ctx))

    def commit(self, ctx: GameContext) -> None:
        prepared, self._prepared = self._prepared, None  # used once, for its own context
        built = prepared[1] if prepared is not None and prepared[0] is ctx else None
        self._committed = built if built is not None else self._build(ctx)

    def _build(self, ctx: GameContext) -> ArrayTranscript | _CountingView:
        m = ctx.machine
        if isinstance(m, TableauTranscript):
            flip = self._time(ctx, m.steps)
            self._run = ClaimedRun(m.machine, m.steps, ctx.oracle, flip, ctx.claim, ctx.progress)
            self.work = self._run.work
            return _CountingView(
                self, TableauView(m, self._run, ctx.claim if self._lie_output else None)
            )
        self.work = m.length
        if self._lie_output or self._random or self._at is not None:
            t0 = self._time(ctx, m.length - 1) or m.length - 1
            return ArrayTranscript(_explicit_lie(ctx, t0 - 1 if t0 else 0, self._lie_output))
        return ArrayTranscript(m.run(ctx.oracle, ctx.rng))


class _CountingView:
    """Keeps A's work count current as the lazily evaluated tableau is questioned."""

    def __init__(self, owner: _A, view: TableauView) -> None:
        self._owner, self._view = owner, view

    def entries(self, positions: IntArray) -> IntArray:
        out = self._view.entries(positions)
        self._owner.work = self._view.run.work
        return out


@register_strategy(P, "A", "honest", honest=True)
def honest_a() -> _A:
    """Commits to the true transcript (lazily, from checkpoints, for a tableau)."""
    return _A()


@register_strategy(P, "A", "lie-output")
def lie_output_a() -> _A:
    """The true transcript with only the output entry changed to the claim."""
    return _A(lie_output=True)


@register_strategy(P, "A", "flip-step")
def flip_step_a(at: float = 0.5) -> _A:
    """Alters one step at fraction ``at`` of the computation; consistent everywhere else."""
    require_range("at", at, 0.0, 1.0)
    return _A(at=at)


@register_strategy(P, "A", "random-step")
def random_step_a() -> _A:
    """Like ``flip-step`` at a uniformly random time."""
    return _A(random_time=True)


class _HonestB(Player, CrossExaminationB):
    _prepared: tuple[GameContext, ClaimedRun] | None = None

    def prepare(self, ctx: GameContext) -> None:
        """Run M (with checkpoints) before the first call, beside A's own run."""
        m = ctx.machine
        if isinstance(m, TableauTranscript):
            run = ClaimedRun(m.machine, m.steps, ctx.oracle, progress=ctx.progress)
            self._prepared, self.work = (ctx, run), run.work

    def challenge(self, ctx: GameContext, read: Reader) -> int:
        m = ctx.machine
        if isinstance(m, TableauTranscript):
            return self._tableau(ctx, m, read)
        truth = m.run(ctx.oracle, ctx.rng)
        self.work = m.length
        claimed = read(np.arange(m.length))
        wrong = np.flatnonzero(claimed != truth)
        return int(wrong[0]) if wrong.size else m.output_position

    def _tableau(self, ctx: GameContext, tab: TableauTranscript, read: Reader) -> int:
        prepared, self._prepared = self._prepared, None  # used once, for its own context
        run = prepared[1] if prepared is not None and prepared[0] is ctx else None
        if run is None:
            run = ClaimedRun(tab.machine, tab.steps, ctx.oracle, progress=ctx.progress)
        s = tab.width

        def first_wrong(r: int) -> int | None:
            cols = np.arange(r * s, (r + 1) * s)
            truth = (
                tab.encode_row(run.config_at(r)) if r <= tab.steps else tab.output_chain(run.final)
            )
            self.work = run.work
            bad = np.flatnonzero(read(cols) != truth)
            return int(cols[bad[0]]) if bad.size else None

        for r in (0, tab.steps):
            wrong = first_wrong(r)
            if r == 0 and wrong is not None:
                return wrong
        if wrong is None:  # the final row is right: any error is in the output chain
            return first_wrong(tab.steps + 1) or tab.output_position
        lo, hi = 0, tab.steps  # row lo is right, row hi is wrong
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if first_wrong(mid) is None:
                lo = mid
            else:
                hi = mid
        found = first_wrong(hi)
        assert found is not None
        return found


@register_strategy(P, "B", "honest", honest=True)
def honest_b() -> _HonestB:
    """Finds a wrong entry whose inputs are right (row binary search on a tableau)."""
    return _HonestB()


class _FixedB(Player, CrossExaminationB):
    def __init__(self, where: str) -> None:
        self._where = where

    def challenge(self, ctx: GameContext, read: Reader) -> int:
        n = ctx.machine.length
        if self._where == "random":
            return int(ctx.rng.integers(0, n))
        return 0 if self._where == "first" else n - 1


@register_strategy(P, "B", "random")
def random_b() -> _FixedB:
    """Challenges a uniformly random position."""
    return _FixedB("random")


@register_strategy(P, "B", "first")
def first_b() -> _FixedB:
    """Always challenges position 0."""
    return _FixedB("first")


@register_strategy(P, "B", "last")
def last_b() -> _FixedB:
    """Always challenges the output position."""
    return _FixedB("last")
