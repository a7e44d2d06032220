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
