"""The bisection protocol's arithmetic: the midpoints V can ask for, and honest A's use of them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from proofgames.harness import resolve_instance
from proofgames.protocols._common import Debate
from proofgames.protocols.bisection import (
    FIRST,
    SECOND,
    BisectionState,
    midpoint_times,
    recurse,
)
from proofgames.strategies import make_strategy


def _asked(steps: int, spacing: int, rng: np.random.Generator) -> set[int]:
    """Midpoint times of one walk down the rounds, B disputing halves at random."""
    asked, start, length = set(), 0, steps
    while length // 2 >= spacing:
        asked.add(start + length // 2)
        if rng.random() < 0.5:
            length //= 2
        else:
            start, length = start + length // 2, length - length // 2
    return asked


@pytest.mark.parametrize(
    ("steps", "spacing"),
    [(s, g) for s in (1, 2, 3, 107, 1000, 65_537) for g in (1, 4, 139_000)]
    + [(47_176_870, 139_000), (47_176_870, 4096)],
)
def test_the_times_are_every_early_midpoint_spaced_and_within_budget(steps, spacing) -> None:
    times = midpoint_times(steps, spacing)
    rng = np.random.default_rng(steps + spacing)
    for _ in range(50):
        assert _asked(steps, spacing, rng) <= set(times)
    assert list(times) == sorted(set(times)) and all(0 < t < steps for t in times)
    edges = [0, *times, steps]
    assert all(b - a >= min(spacing, steps) for a, b in itertools.pairwise(edges))
    assert len(times) < max(1, steps / spacing)


def test_honest_a_answers_the_early_rounds_without_simulating() -> None:
    inst = resolve_instance("bisection", "bb5", 2_000_000)
    a = make_strategy("bisection", "A", "honest")
    ctx = Debate("bisection", None, None, None, 0).context("A", inst.target, inst.steps, 1, None)
    a.prepare(ctx)
    run = a.run.true
    assert a.work == inst.steps
    for half in (FIRST, SECOND):
        state = BisectionState(run.config_at(0), run.final, inst.steps)
        while state.length // 2 >= run.interval:
            before = a.work
            mid = a.midpoint(ctx, state)
            assert a.work == before  # a checkpoint
            state = recurse(state, mid, half)
        while state.length > 1:  # the rest, from the configurations of the rounds before
            state = recurse(state, a.midpoint(ctx, state), half)
    assert a.work - inst.steps < 4 * run.interval
