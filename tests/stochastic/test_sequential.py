"""The curtailed V: same verdicts as the fixed-n V, fewer expected queries, computed exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from proofgames.errors import ProtocolError
from proofgames.stochastic.sequential import acceptance_interval, curtailed_queries


def _simulate(n: int, a: float, theta: float, p: float, paths: int, seed: int):
    """Per-sample paths: (queries drawn, curtailed verdict, fixed-n verdict) for each."""
    low, high = acceptance_interval(n, a, theta)
    draws = np.random.default_rng(seed).random((paths, n)) < p
    counts = np.cumsum(draws, axis=1)
    out = []
    for row in counts:
        fixed = bool(low <= row[-1] <= high)
        for i in range(n + 1):
            x = 0 if i == 0 else int(row[i - 1])
            left = n - i
            if x > high or x + left < low:
                out.append((i, False, fixed))
                break
            if x >= low and x + left <= high:
                out.append((i, True, fixed))
                break
    return out


@pytest.mark.parametrize("p", [0.5, 0.45, 0.3, 0.9])
def test_curtailed_verdicts_equal_the_fixed_n_verdicts_and_the_mean_matches(p: float) -> None:
    n, a, theta = 60, 0.5, 0.1
    runs = _simulate(n, a, theta, p, 4000, seed=1)
    assert all(curtailed == fixed for _, curtailed, fixed in runs)
    r = curtailed_queries(n, a, theta, p)
    queries = np.array([q for q, _, _ in runs], dtype=float)
    sem = queries.std() / np.sqrt(queries.size) + 1e-9
    assert abs(queries.mean() - r.expected) < 5 * sem
    assert queries.max() <= r.worst_case == n


@pytest.mark.parametrize("p", [0.5, 0.47, 0.44, 0.2])
def test_acceptance_is_the_fixed_n_binomial_probability(p: float) -> None:
    n, a, theta = 1861, 0.5, 0.029542
    r = curtailed_queries(n, a, theta, p)
    fixed = stats.binom.cdf(r.high, n, p) - stats.binom.cdf(r.low - 1, n, p)
    assert r.accept == pytest.approx(fixed, rel=1e-9, abs=1e-15)
    assert r.expected < n


def test_far_off_announcements_are_rejected_sooner_than_honest_ones_are_accepted() -> None:
    honest = curtailed_queries(1861, 0.5, 0.029542, 0.5).expected
    far = curtailed_queries(1861, 0.5, 0.029542, 0.3).expected
    assert far < 0.8 * honest < honest < 1861


def test_curtailed_queries_refuses_bad_input() -> None:
    with pytest.raises(ProtocolError, match="positive integer"):
        curtailed_queries(0, 0.5, 0.1, 0.5)
    with pytest.raises(ProtocolError, match="threshold > 0"):
        curtailed_queries(10, 0.5, 0.0, 0.5)
