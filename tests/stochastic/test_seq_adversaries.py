"""The sequential V under exact adversaries: the outward-rounded DP against exact rational
enumeration, the honest pieces against V's own rule, the optimal liar against a brute
search over announcements, and the disputed average against a direct sum."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from proofgames.errors import ProtocolError
from proofgames.stochastic import seq_adversaries
from proofgames.stochastic._verdicts import Check, pass_probability
from proofgames.stochastic.seq_adversaries import (
    disputed_honest,
    honest_pieces,
    interval_queries,
    optimal_liar_round,
)
from proofgames.stochastic.seqtest import SequentialTest, expected_queries, run_test, thresholds

SMALL = SequentialTest(n=10, theta=0.3, c=0.01, s=0.45, v_r=0.3, v_a=0.15, delta=0.45)
K025 = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
                      v_a=0.007057, delta=0.243256)  # fmt: skip


def _exact(test: SequentialTest, a: float, x: float) -> tuple[Fraction, Fraction]:
    """(P[accept], E[samples]) over every sequence, in rationals at the float ``x``."""
    xf = Fraction(x)
    accept, queries = Fraction(0), Fraction(0)
    for bits in itertools.product((0, 1), repeat=test.n):
        ones = sum(bits)
        prob = xf**ones * (1 - xf) ** (test.n - ones)
        ok, used = run_test(test, a, np.array(bits))
        accept += prob * ok
        queries += prob * used
    return accept, queries


@pytest.mark.parametrize(("a", "x"), [(0.5, 0.5), (0.2, 0.13), (0.62, 0.9), (0.97, 0.71)])
def test_enclosure_holds_the_exact_rational_value(a: float, x: float) -> None:
    accept, queries = _exact(SMALL, a, x)
    e = interval_queries(SMALL, a, x)
    assert Fraction(e.expected[0]) <= queries <= Fraction(e.expected[1])
    assert Fraction(e.accept[0]) <= accept <= Fraction(e.accept[1])
    assert Fraction(e.reject[0]) <= 1 - accept <= Fraction(e.reject[1])
    assert e.expected[1] - e.expected[0] < 1e-12


def test_enclosure_fails_when_rounding_is_turned_inward(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrinking the low run's masses far too little (or growing them) is caught."""
    _, queries = _exact(SMALL, 0.5, 0.5)
    monkeypatch.setattr(seq_adversaries, "STEP", -1e-6)  # rounds the wrong way
    e = interval_queries(SMALL, 0.5, 0.5)
    assert not Fraction(e.expected[0]) <= queries <= Fraction(e.expected[1])


def test_enclosure_matches_the_double_dp_at_the_k1_size() -> None:
    t = SequentialTest(n=400, theta=0.09, c=0.001, s=0.2, v_r=0.05, v_a=0.01, delta=0.2)
    for a, x in ((0.5, 0.5), (0.3, 0.52)):
        point, e = expected_queries(t, a, x), interval_queries(t, a, x)
        assert e.expected[0] <= point.expected <= e.expected[1]
        assert e.accept[0] <= point.accept <= e.accept[1]


def test_outside_announcement_and_bad_truth() -> None:
    e = interval_queries(SMALL, 1.5, 0.5)
    assert e.expected == (0.0, 0.0) and e.reject == (1.0, 1.0)
    with pytest.raises(ProtocolError, match="true probability"):
        interval_queries(SMALL, 0.5, 1.5)
    with pytest.raises(ProtocolError, match="positive sample count"):
        honest_pieces(SMALL, 0, 0.5)


def _key(test: SequentialTest, a: float) -> tuple[object, ...]:
    th = thresholds(test, a)
    return (tuple(th.reject_hi), tuple(th.reject_lo), tuple(th.settle_hi), tuple(th.settle_lo),
            th.start_hi, th.start_lo, th.low, th.high)  # fmt: skip


@pytest.mark.slow
def test_pieces_are_runs_of_one_rule() -> None:
    r, x = 2_000, 0.4
    pieces = honest_pieces(K025, r, x, sds=3.0)
    assert len(pieces) > 3
    for left, right in itertools.pairwise(pieces):
        assert right.first == left.last + 1
        assert _key(K025, left.last / r) != _key(K025, right.first / r)
    for piece in pieces:
        keys = {_key(K025, k / r) for k in range(piece.first, piece.last + 1)}
        assert len(keys) == 1
        exact = stats.binom.pmf(np.arange(piece.first, piece.last + 1), r, x).sum()
        assert piece.mass == pytest.approx(exact, rel=1e-9)


@pytest.mark.slow
def test_disputed_average_encloses_the_direct_sum() -> None:
    r, x = 2_000, 0.4
    d = disputed_honest(K025, r, x, sds=3.0)
    lo = math.floor(r * x - 3 * math.sqrt(r * x * (1 - x)))
    hi = math.ceil(r * x + 3 * math.sqrt(r * x * (1 - x)))
    counts = np.arange(lo, hi + 1)
    pmf = stats.binom.pmf(counts, r, x)
    direct = sum(
        p * expected_queries(K025, k / r, x).expected for k, p in zip(counts, pmf, strict=True)
    )
    assert d.expected[0] <= direct <= d.expected[1]
    assert direct - d.expected[0] < 1e-9  # the low end has nothing for the uncovered mass
    assert d.worst.outcome.expected[1] >= max(
        expected_queries(K025, k / r, x).expected for k in range(lo, hi + 1)
    )
    assert d.completeness[1] == x


@pytest.mark.slow
def test_optimal_liar_round_beats_every_announcement_on_a_fine_grid() -> None:
    b = Check(400, 0.26)
    p = 0.3
    best = optimal_liar_round(K025, b, p, 0.0, 1.0, 0.00941)
    assert best.certified
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, 101),
                                     np.linspace(p + 0.2, p + 0.32, 401)]))  # fmt: skip
    stay = pass_probability(b, p, grid)
    acc = np.array([expected_queries(K025, float(c), p).accept for c in grid])
    values = (1 - stay) * acc + stay * grid
    assert best.value[1] >= values.max() - 1e-12
    assert best.value[0] <= best.value[1]
    assert best.v.a == best.announcement
    exact = expected_queries(K025, best.announcement, p)
    assert best.v.expected[0] <= exact.expected <= best.v.expected[1]
