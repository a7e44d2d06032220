"""The sequential V: its dynamic programme against brute-force enumeration in exact
arithmetic, its error bounds checked at the edges of their nulls, and its input checks."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from proofgames.errors import ProtocolError
from proofgames.stochastic.seqtest import SequentialTest, expected_queries, run_test, thresholds
from proofgames.stochastic.tail_bounds import certify_tail

SMALL = SequentialTest(n=10, theta=0.3, c=0.01, s=0.45, v_r=0.3, v_a=0.15, delta=0.45)
"""Loose levels, so that every kind of stop happens within 10 samples."""
MID = SequentialTest(n=300, theta=0.1, c=0.002, s=0.2, v_r=0.05, v_a=0.01, delta=0.2)


def _brute(test: SequentialTest, a: float, x: Fraction) -> tuple[Fraction, Fraction]:
    """Exact (P[accept], E[samples]) by running V on every sequence of n samples."""
    accept, queries = Fraction(0), Fraction(0)
    for bits in itertools.product((0, 1), repeat=test.n):
        ones = sum(bits)
        prob = x**ones * (1 - x) ** (test.n - ones)
        ok, used = run_test(test, a, np.array(bits))
        accept += prob * ok
        queries += prob * used
    return accept, queries


@pytest.mark.parametrize(
    ("a", "x"),
    [(0.0, Fraction(1, 8)), (0.2, Fraction(1, 8)), (0.5, Fraction(1, 2)),
     (0.62, Fraction(9, 10)), (0.97, Fraction(9, 10)), (1.0, Fraction(1, 2))],
)  # fmt: skip
def test_dp_matches_brute_force(a: float, x: Fraction) -> None:
    accept, queries = _brute(SMALL, a, x)
    r = expected_queries(SMALL, a, float(x))
    assert r.accept == pytest.approx(float(accept), abs=1e-12)
    assert r.expected == pytest.approx(float(queries), abs=1e-10)
    assert r.accept + r.reject == pytest.approx(1.0, abs=1e-12)


def test_every_kind_of_stop_happens() -> None:
    """The brute-force comparison covers early accepts and rejects and both cap verdicts."""
    kinds = set()
    for bits in itertools.product((0, 1), repeat=SMALL.n):
        verdict, used = run_test(SMALL, 0.5, np.array(bits))
        kinds.add((verdict, used < SMALL.n))
    assert kinds == {(True, True), (True, False), (False, True), (False, False)}


@pytest.mark.parametrize("a", [0.05, 0.3, 0.5, 0.75])
def test_errors_within_the_written_bounds(a: float) -> None:
    """At the nulls' edges (x = a +- c: completeness; x just past a +- s: soundness) V's
    exact verdict probabilities are within Ville's level plus the cap's tail."""
    t = MID
    t2 = certify_tail(t.n, Fraction(t.theta) - Fraction(t.c), Fraction(1, 2), two_sided=True)
    t1 = certify_tail(t.n, Fraction(t.s) - Fraction(t.theta), Fraction(1, 2), two_sided=False)
    for x in (a - t.c, a + t.c):
        assert expected_queries(t, a, x).reject <= t.v_r + float(t2.worst)
    for x in (a - t.s - 1e-12, a + t.s + 1e-12):
        if 0 <= x <= 1:
            assert expected_queries(t, a, x).accept <= t.v_a + float(t1.worst)


def test_far_announcements_are_rejected_sooner() -> None:
    honest = expected_queries(MID, 0.5, 0.5)
    liar = expected_queries(MID, 0.5, 0.9)
    assert liar.expected < honest.expected < MID.n
    assert liar.reject > 0.999 and honest.accept > 0.9


def test_outside_announcement_rejected_without_samples() -> None:
    assert run_test(MID, 1.2, np.ones(MID.n)) == (False, 0)
    r = expected_queries(MID, -0.1, 0.0)
    assert (r.expected, r.reject) == (0.0, 1.0)


def test_thresholds_at_the_edges() -> None:
    th = thresholds(MID, 0.0)
    assert th.start_lo and not th.start_hi  # no x below 0: the lower side is settled
    assert th.settle_hi.max() == 0  # at a = 0 a single one keeps the upper side open
    th = thresholds(MID, 0.9)
    assert th.start_hi and not th.start_lo


def test_symmetry() -> None:
    """Swapping ones and zeros (a -> 1 - a, x -> 1 - x) gives the same behaviour
    (away from ties, where the cap's strict comparison in floats may round either way)."""
    for a, x in ((0.3125, 0.35), (0.40625, 0.2)):  # dyadic: 1 - a exact, no ties at n
        r, m = expected_queries(MID, a, x), expected_queries(MID, 1 - a, 1 - x)
        assert r.expected == pytest.approx(m.expected, rel=1e-9)
        assert r.accept == pytest.approx(m.accept, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, "positive integer"),
        ({"theta": 0.3}, "theta < s"),
        ({"c": 0.2}, "c < theta"),
        ({"v_a": 1.0}, "v_a"),
        ({"delta": 0.001}, "delta"),
    ],
)
def test_bad_constants_refused(kwargs: dict[str, float], match: str) -> None:
    base = {"n": 10, "theta": 0.1, "c": 0.01, "s": 0.2, "v_r": 0.1, "v_a": 0.01, "delta": 0.2}
    with pytest.raises(ProtocolError, match=match):
        SequentialTest(**{**base, **kwargs})  # type: ignore[arg-type]


def test_short_stream_refused() -> None:
    with pytest.raises(ProtocolError, match="needed sample"):
        run_test(MID, 0.5, np.array([0, 1]))
    with pytest.raises(ProtocolError, match="true probability"):
        expected_queries(MID, 0.5, 1.5)
