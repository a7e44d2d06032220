"""Sample counts for one estimate: certified Hoeffding counts and exact binomial tails.

The exact-tail count is checked against brute force: the tail probability at every
breakpoint in exact rational arithmetic and on a fine grid of p, for every n up to the
Hoeffding count, including cases where the condition is not monotone in n.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from proofgames.errors import ProtocolError
from proofgames.stochastic.tails import (
    binomial_tail_exact,
    certified_hoeffding,
    exact_tail_samples,
    ln_bounds,
    passes,
    smooth_bound,
    tail_sup,
)

GRID = 3000  # brute-force p grid: i / GRID


def _breakpoints(n: int, eps: Fraction) -> list[Fraction]:
    points = {Fraction(k, n) + s * eps for k in range(n + 1) for s in (1, -1)}
    return sorted(p for p in points if 0 <= p <= 1)


def _grid_max(n: int, eps: Fraction) -> float:
    """max over p = i/GRID of P[|X/n - p| >= eps]: exact membership, float probabilities."""
    i = np.arange(GRID + 1)[:, None]
    j = np.arange(n + 1)[None, :]
    far = np.abs(j * GRID - i * n) * eps.denominator >= eps.numerator * n * GRID
    pmf = stats.binom.pmf(j, n, i / GRID)
    return float((pmf * far).sum(axis=1).max())


def _brute_sup(n: int, eps: Fraction) -> Fraction:
    return max(binomial_tail_exact(n, eps, p) for p in _breakpoints(n, eps))


@pytest.mark.parametrize("x", [Fraction(2), Fraction(200), Fraction(1, 3), Fraction(10**40, 7)])
def test_ln_bounds_enclose_the_logarithm_tightly(x: Fraction) -> None:
    getcontext().prec = 60
    true = (Decimal(x.numerator) / Decimal(x.denominator)).ln()
    lo, hi = ln_bounds(x)
    assert Decimal(lo.numerator) / Decimal(lo.denominator) <= true
    assert true <= Decimal(hi.numerator) / Decimal(hi.denominator)
    assert hi - lo < Fraction(1, 10**25)


@pytest.mark.parametrize(
    ("error", "failure"),
    [(Fraction(1, 200), Fraction(1, 100)), (Fraction(1, 100), Fraction(1, 1000)),
     (Fraction(3, 10_000), Fraction(1, 10**6)), (Fraction(0.0298), Fraction(0.01))],
)  # fmt: skip
def test_certified_hoeffding_count_is_the_exact_ceiling(error: Fraction, failure: Fraction) -> None:
    n = certified_hoeffding(error, failure)
    getcontext().prec = 60
    target = (Decimal(2) * Decimal(failure.denominator) / Decimal(failure.numerator)).ln()
    two_e2 = Decimal(2) * Decimal(error.numerator) ** 2 / Decimal(error.denominator) ** 2
    assert two_e2 * n >= target > two_e2 * (n - 1)
    assert n == math.ceil(math.log(2 / float(failure)) / (2 * float(error) ** 2))


def test_certified_hoeffding_refuses_bad_input() -> None:
    with pytest.raises(ProtocolError, match="error > 0"):
        certified_hoeffding(Fraction(0), Fraction(1, 2))
    with pytest.raises(ProtocolError, match="failure in"):
        certified_hoeffding(Fraction(1, 10), Fraction(3, 2))


@pytest.mark.parametrize(("n", "eps"), [(7, Fraction(1, 10)), (12, Fraction(1, 4)),
                                        (25, Fraction(1, 10)), (40, Fraction(3, 20))])  # fmt: skip
def test_tail_sup_is_the_exact_maximum_and_no_grid_point_exceeds_it(n: int, eps: Fraction) -> None:
    value, _ = tail_sup(n, eps)
    exact = float(_brute_sup(n, eps))
    assert value == pytest.approx(exact, rel=1e-12)
    grid = _grid_max(n, eps)
    assert grid <= value * (1 + 1e-12)  # the sup over p is at a breakpoint
    assert grid >= value * (1 - 0.05)  # and the grid comes close to it


def test_smooth_bound_is_above_the_exact_tail() -> None:
    for n in (20, 60, 150, 400):
        for eps in (Fraction(1, 20), Fraction(1, 8), Fraction(1, 4)):
            assert smooth_bound(n, float(eps)) >= tail_sup(n, eps)[0]


@pytest.mark.parametrize(
    ("eps", "delta"),
    [(Fraction(1, 4), Fraction(1, 10)), (Fraction(1, 5), Fraction(1, 20)),
     (Fraction(3, 10), Fraction(1, 5)), (Fraction(1, 6), Fraction(3, 10))],
)  # fmt: skip
def test_exact_tail_count_matches_a_brute_force_scan(eps: Fraction, delta: Fraction) -> None:
    result = exact_tail_samples(eps, delta, smallest=True)
    ok = {n: _brute_sup(n, eps) <= delta for n in range(1, result.hoeffding + 1)}
    assert ok[result.hoeffding]
    failing = [n for n, good in ok.items() if not good]
    assert result.n0 == max(failing, default=0) + 1
    assert result.smallest == min(n for n, good in ok.items() if good)
    assert all(ok[n] == passes(n, eps, delta) for n in ok)
    for n in range(result.n0, result.hoeffding + 1):  # every n from n0 on, on a fine grid too
        assert _grid_max(n, eps) <= float(delta)


def test_the_condition_is_not_monotone_in_n_and_n0_is_after_the_last_failure() -> None:
    eps, delta = Fraction(1, 4), Fraction(1, 10)
    result = exact_tail_samples(eps, delta, smallest=True)
    assert _brute_sup(13, eps) <= delta < _brute_sup(14, eps)  # 13 works, 14 does not
    assert result.smallest == 13 and result.n0 == 15
    assert result.failing_above_smallest == 1
    assert result.n0 < result.hoeffding


def test_exact_tail_saves_samples_over_hoeffding_at_the_optimized_v() -> None:
    result = exact_tail_samples(Fraction(0.0298), Fraction(1, 100))
    assert result.n0 < 0.7 * result.hoeffding
    assert not passes(result.n0 - 1, Fraction(0.0298), Fraction(1, 100))


def test_exact_tail_refuses_scans_beyond_its_limit() -> None:
    with pytest.raises(ProtocolError, match="more than the limit"):
        exact_tail_samples(Fraction(1, 1000), Fraction(1, 100), limit=1000)


def test_an_exact_tail_asked_again_is_not_scanned_again(monkeypatch) -> None:
    """The optimizer validates many candidates that share one prover error: the scan
    (about 15 s near the 10^5 limit) runs once per (eps, delta)."""
    import proofgames.stochastic.tails as tails

    calls: list[int] = []
    real = tails.passes

    def counted(n: int, eps: Fraction, delta: Fraction) -> bool:
        calls.append(n)
        return real(n, eps, delta)

    monkeypatch.setattr(tails, "passes", counted)
    eps, delta = Fraction(7, 100), Fraction(1, 1000)
    tails.exact_tail_samples.cache_clear()
    first = tails.exact_tail_samples(eps, delta)
    scanned = len(calls)
    assert scanned > 0
    assert tails.exact_tail_samples(Fraction(14, 200), Fraction(1, 1000)) == first
    assert len(calls) == scanned  # the same (eps, delta): no second scan
    tails.exact_tail_samples(eps, delta, smallest=True)
    assert len(calls) > scanned  # other arguments: scanned
