"""Honest cross-examination A prepared at set-up commits to what it would have built anyway."""

from __future__ import annotations

import numpy as np

from proofgames.harness import resolve_instance
from proofgames.protocols._common import Debate
from proofgames.strategies import make_strategy

P = "cross-examination"


def _context(spec: str):
    inst = resolve_instance(P, spec)
    a, b = make_strategy(P, "A", "honest"), make_strategy(P, "B", "honest")
    return Debate(P, a, b, None, 0).context("A", inst.target, inst.steps, 1, None)


def test_a_prepared_transcript_is_the_one_committed_once() -> None:
    ctx, other = _context("bb4"), _context("bb3")
    plain, prepared = make_strategy(P, "A", "honest"), make_strategy(P, "A", "honest")
    prepared.prepare(ctx)
    work = prepared.work
    assert work > 0  # the run was made at set-up
    plain.commit(ctx)
    prepared.commit(ctx)
    assert prepared.work == work  # ... and not made again at commit
    positions = np.arange(min(200, ctx.machine.length))
    assert np.array_equal(prepared.entries(ctx, positions), plain.entries(ctx, positions))
    prepared.commit(other)  # a second debate: built afresh for its own context
    fresh = make_strategy(P, "A", "honest")
    fresh.commit(other)
    positions = np.arange(min(200, other.machine.length))
    assert np.array_equal(prepared.entries(other, positions), fresh.entries(other, positions))


def test_a_prepared_honest_b_challenges_as_one_that_runs_m_in_the_call(monkeypatch) -> None:
    """B's run at set-up (beside A's) gives the same challenge and the same work in all."""
    from proofgames.protocols import _common
    from proofgames.protocols.cross_examination import play_cross_examination

    monkeypatch.setattr(_common, "THREADED_STEPS", 0)  # set-ups even on this short run
    inst = resolve_instance(P, "bb4")
    for a, claim in (("honest", 1), ("flip-step", 0), ("lie-output", 0), ("random-step", 0)):
        outs, works = [], []
        for prepare in (False, True):
            pa, pb = make_strategy(P, "A", a), make_strategy(P, "B", "honest")
            if not prepare:
                pb.prepare = lambda ctx: None  # no set-up: the challenge runs M itself
            else:
                ran = []
                own = pb.prepare
                pb.prepare = lambda ctx, own=own, ran=ran: (ran.append(1), own(ctx))
            out = play_cross_examination(inst.target, claim, pa, pb, seed=3)
            outs.append((out.winner, out.reason, out.messages))
            works.append(out.costs.prover_steps["B"])
        assert ran == [1] and outs[0] == outs[1] and works[0] == works[1] > 0, a
