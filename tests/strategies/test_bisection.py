"""Honest bisection B prepared (its own run of M at set-up) disputes exactly as unprepared B."""

from __future__ import annotations

import numpy as np
import pytest

from proofgames.harness import resolve_instance
from proofgames.protocols._common import Debate
from proofgames.protocols.bisection import FIRST, SECOND, BisectionState
from proofgames.strategies import make_strategy


def _context(inst):
    a = make_strategy("bisection", "A", "honest")
    b = make_strategy("bisection", "B", "honest")
    d = Debate("bisection", a, b, None, 0)
    return d.context("B", inst.target, inst.steps, 1, None)


def test_a_prepared_honest_b_answers_as_one_that_simulates_each_half() -> None:
    inst = resolve_instance("bisection", "bb4")
    ctx = _context(inst)
    plain, prepared = (make_strategy("bisection", "B", "honest") for _ in range(2))
    prepared.prepare(ctx)
    # one run of M before any call; the first midpoint is one of its checkpoints
    assert prepared.work == inst.steps
    truth = [ctx.machine.initial()]
    for _ in range(inst.steps):
        truth.append(ctx.machine.run_steps(truth[-1], 1, ctx.oracle)[0])
    rng = np.random.default_rng(0)
    wrong = truth[5]  # a configuration of the run, but at the wrong time
    answers = {FIRST: 0, SECOND: 0}
    for _ in range(40):
        s = int(rng.integers(0, inst.steps - 2))
        length = int(rng.integers(2, inst.steps - s + 1))
        start = truth[s] if rng.random() < 0.8 else wrong  # a false start: it simulates
        state = BisectionState(start, truth[s + length], length, s)
        mid = truth[state.midpoint_time] if rng.random() < 0.5 else wrong
        said = prepared.dispute(ctx, state, mid)
        assert said == plain.dispute(ctx, state, mid)
        answers[said] += 1
    assert min(answers.values()) > 0  # both answers were exercised


def test_a_run_prepared_for_another_context_is_not_used() -> None:
    inst = resolve_instance("bisection", "bb4")
    ctx, other = _context(inst), _context(resolve_instance("bisection", "bb3"))
    b = make_strategy("bisection", "B", "honest")
    b.prepare(other)  # prepared for another debate: this one simulates as unprepared B
    start = ctx.machine.initial()
    end, _ = ctx.machine.run_steps(start, inst.steps, ctx.oracle)
    mid, _ = ctx.machine.run_steps(start, inst.steps // 2, ctx.oracle)
    work = b.work
    assert b.dispute(ctx, BisectionState(start, end, inst.steps, 0), mid) == SECOND
    assert b.work == work + inst.steps // 2


def _true_run(inst, ctx) -> list:
    truth = [ctx.machine.initial()]
    for _ in range(inst.steps):
        truth.append(ctx.machine.run_steps(truth[-1], 1, ctx.oracle)[0])
    return truth


@pytest.mark.parametrize(("spec", "steps"), [("bb4", None), ("bb5", 20000)])
def test_anticipating_b_does_each_dispute_s_work_ahead_and_no_more(spec, steps) -> None:
    """A prepared B given time between calls (``anticipate``, as the party runner does)
    answers every dispute without simulating in the call, with the same answers and the
    same work in all as one that is not."""
    from proofgames.protocols.bisection import recurse

    inst = resolve_instance("bisection", spec, steps)
    ctx = _context(inst)
    truth = _true_run(inst, ctx)
    ahead, plain = (make_strategy("bisection", "B", "honest") for _ in range(2))
    for b in (ahead, plain):
        b.prepare(ctx)
    assert ahead.prepared[1].true.interval > 1  # it re-simulates between checkpoints
    for lie_at in (None, inst.steps // 3):  # an honest A, and one off the run after lie_at
        state = BisectionState(truth[0], truth[-1], inst.steps)
        while state.length > 1:
            t = state.midpoint_time
            mid = truth[t] if lie_at is None or t < lie_at else truth[max(0, t - 1)]
            before = ahead.work
            said = ahead.dispute(ctx, state, mid)
            if state.start == truth[state.start_time]:
                assert ahead.work == before  # read off what anticipate computed
            assert said == plain.dispute(ctx, state, mid)
            ahead.anticipate(ctx)
            state = recurse(state, mid, said)
        assert ahead.work == plain.work


def test_a_prepared_honest_a_has_its_first_midpoint_ready() -> None:
    inst = resolve_instance("bisection", "bb5", 20000)
    ctx = _context(inst)
    a = make_strategy("bisection", "A", "honest")
    a.prepare(ctx)
    work = a.work
    final = a.final(ctx)
    first = a.midpoint(ctx, BisectionState(ctx.machine.initial(), final, inst.steps))
    assert a.work == work  # neither the final nor the first midpoint simulates again
    assert first == ctx.machine.run_steps(ctx.machine.initial(), inst.steps // 2, ctx.oracle)[0]
