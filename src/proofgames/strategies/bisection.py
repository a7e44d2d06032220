"""Strategies for the bisection protocol (Figure 3).

Prover A: ``honest`` (answers every midpoint from checkpoints of its single run, kept at
the early rounds' midpoints: :func:`~proofgames.protocols.bisection.midpoint_times`),
``lie-output``, ``flip-step``, ``random-step`` and ``late-lie``.  Prover B: ``honest``
(simulates the first half from the start of the disputed interval and compares),
``random``, ``first`` and ``second``.
"""

from __future__ import annotations

from .._configuration import Configuration
from .._registry import Player, register_strategy
from ..machines.turing import TuringMachine
from ..protocols._common import GameContext
from ..protocols.bisection import (
    FIRST,
    SECOND,
    BisectionA,
    BisectionB,
    BisectionState,
    midpoint_times,
    recurse,
)
from ._runs import ClaimedRun, lie_about_output, lie_time, require_range

P = "bisection"


class _RunA(Player, BisectionA):
    """A who presents a :class:`ClaimedRun`, optionally lying about the final output."""

    def __init__(
        self, at: float | None = None, random_time: bool = False, lie_output: bool = False
    ) -> None:
        self._at, self._random, self._lie_output = at, random_time, lie_output
        self.run: ClaimedRun | None = None

    def _ensure(self, ctx: GameContext) -> ClaimedRun:
        if self.run is None:
            flip = None
            if self._random:
                flip = int(ctx.rng.integers(1, ctx.steps + 1))
            elif self._at is not None:
                flip = lie_time(self._at, ctx.steps)
            self.run = ClaimedRun(
                ctx.machine, ctx.steps, ctx.oracle, flip, ctx.claim, ctx.progress, midpoint_times
            )
        return self.run

    def prepare(self, ctx: GameContext) -> None:
        """Run M (with checkpoints) before the first call: the party runner's set-up hook.

        It also reads off the first round's midpoint (time ``T // 2``), which the second
        call asks for: the other prover may still be running, and V waits for both.
        """
        run = self._ensure(ctx)
        if ctx.steps > 1:
            run.config_at(ctx.steps // 2)
        self.work = run.work

    def final(self, ctx: GameContext) -> Configuration:
        run = self._ensure(ctx)
        self.work = run.work
        return (
            lie_about_output(ctx.machine, run.final, ctx.claim) if self._lie_output else run.final
        )

    def midpoint(self, ctx: GameContext, state: BisectionState) -> Configuration:
        run = self._ensure(ctx)
        config = run.config_at(state.midpoint_time)
        self.work = run.work
        return config


@register_strategy(P, "A", "honest", honest=True)
def honest_a() -> _RunA:
    """Runs M once with checkpoints and answers every midpoint truthfully."""
    return _RunA()


@register_strategy(P, "A", "lie-output")
def lie_output_a() -> _RunA:
    """Truthful midpoints; lies only about the final configuration's output."""
    return _RunA(lie_output=True)


@register_strategy(P, "A", "flip-step")
def flip_step_a(at: float = 0.5) -> _RunA:
    """Alters one configuration at fraction ``at`` of the run and stays consistent after it."""
    require_range("at", at, 0.0, 1.0)
    return _RunA(at=at)


@register_strategy(P, "A", "random-step")
def random_step_a() -> _RunA:
    """Like ``flip-step`` at a uniformly random time."""
    return _RunA(random_time=True)


class _LateLiar(_RunA):
    def midpoint(self, ctx: GameContext, state: BisectionState) -> Configuration:
        if state.length == 2 and isinstance(ctx.machine, TuringMachine):
            preds = ctx.machine.predecessors(state.end)
            if preds:  # make the second half a valid step into the false endpoint
                return preds[0]
        return super().midpoint(ctx, state)


@register_strategy(P, "A", "late-lie")
def late_lie_a() -> _RunA:
    """True midpoints until the last round, then a predecessor of its false endpoint."""
    return _LateLiar(lie_output=True)


class _HonestB(Player, BisectionB):
    """Simulates each disputed first half; with :meth:`prepare`, reads it off its own run.

    Prepared, it also knows the next round's interval as soon as it has answered, and
    :meth:`anticipate` reads that round's midpoint off its run ahead of the call.
    """

    prepared: tuple[GameContext, ClaimedRun] | None = None
    _next: BisectionState | None = None

    def prepare(self, ctx: GameContext) -> None:
        """Run M once (with checkpoints) before the first call, e.g. beside A's own run.

        Then read off the first round's midpoint, which the first dispute needs.
        """
        run = ClaimedRun(
            ctx.machine, ctx.steps, ctx.oracle, progress=ctx.progress, times=midpoint_times
        )
        self.prepared, self.work = (ctx, run), run.work
        self._next = BisectionState(run.config_at(0), run.final, ctx.steps)
        self.anticipate(ctx)  # the first round's midpoint, ahead of the first dispute

    def _run(self, ctx: GameContext) -> ClaimedRun | None:
        return self.prepared[1] if self.prepared is not None and self.prepared[0] is ctx else None

    def dispute(self, ctx: GameContext, state: BisectionState, midpoint: Configuration) -> str:
        run, self._next = self._run(ctx), None
        if run is not None and run.config_at(state.start_time) == state.start:
            truth = run.config_at(state.midpoint_time)  # the agreed start is on the true run
            self.work = run.work
            half = FIRST if truth != midpoint else SECOND
            self._next = recurse(state, midpoint, half)  # its start is on the true run too
            return half
        truth, w = ctx.machine.run_steps(state.start, state.first_length, ctx.oracle)
        self.work += w
        return FIRST if truth != midpoint else SECOND

    def anticipate(self, ctx: GameContext) -> None:
        """Between calls: the next round's midpoint, from its run (the next call's work)."""
        run, upcoming, self._next = self._run(ctx), self._next, None
        if run is not None and upcoming is not None and upcoming.length > 1:
            run.config_at(upcoming.midpoint_time)  # kept in the run's cache for the call
            self.work = run.work


@register_strategy(P, "B", "honest", honest=True)
def honest_b() -> _HonestB:
    """Simulates the first half from the disputed interval's start and compares."""
    return _HonestB()


class _FixedB(Player, BisectionB):
    def __init__(self, choice: str | None) -> None:
        self._choice = choice

    def dispute(self, ctx: GameContext, state: BisectionState, midpoint: Configuration) -> str:
        if self._choice is not None:
            return self._choice
        return FIRST if ctx.rng.random() < 0.5 else SECOND


@register_strategy(P, "B", "random")
def random_b() -> _FixedB:
    """Disputes a uniformly random half."""
    return _FixedB(None)


@register_strategy(P, "B", "first")
def first_b() -> _FixedB:
    """Always disputes the first half."""
    return _FixedB(FIRST)


@register_strategy(P, "B", "second")
def second_b() -> _FixedB:
    """Always disputes the second half."""
    return _FixedB(SECOND)
