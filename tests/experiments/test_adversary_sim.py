"""The vectorized round simulation: the same verdicts and counts as V's own loop on the
same draws, and the fixed-n V's and honest B's checks as the protocol compares."""

from __future__ import annotations

import numpy as np

from proofgames.experiments import _adversary_sim as sim
from proofgames.stochastic.seqtest import SequentialTest, run_test

MID = SequentialTest(n=300, theta=0.1, c=0.002, s=0.2, v_r=0.05, v_a=0.01, delta=0.2)


def test_sequential_v_matches_run_test_on_the_same_draws() -> None:
    a = np.array([0.5] * 40 + [0.31] * 30 + [0.9] * 30 + [1.2] * 3)
    accept, used = sim.sequential_v(MID, a, 0.45, np.random.default_rng(7))
    rng = np.random.default_rng(7)  # replay: one draw of (rows, n) per announcement, sorted
    for value in np.unique(a):
        rows = np.flatnonzero(a == value)
        if not 0 <= value <= 1:
            assert not accept[rows].any() and not used[rows].any()
            continue
        draws = rng.random((rows.size, MID.n)) < 0.45
        for row, bits in zip(rows, draws, strict=True):
            assert (bool(accept[row]), int(used[row])) == run_test(MID, float(value), bits)
    assert used.max() <= MID.n and (used[a <= 1] > 0).all()


def test_fixed_v_and_honest_b_compare_strictly() -> None:
    rng = np.random.default_rng(0)
    accept, used = sim.fixed_v(100, 0.1, np.array([0.5, 0.0, 1.0]), 0.5, rng)
    assert (used == 100).all() and bool(accept[0]) and not accept[1:].any()
    stays = sim.honest_b_stays(10**6, 0.01, np.array([0.3, 0.5, 0.52]), 0.3, rng)
    assert stays.tolist() == [True, False, False]
