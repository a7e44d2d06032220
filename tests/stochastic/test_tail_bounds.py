"""The certified tails against a brute force in exact rational arithmetic.

The brute force evaluates ``P[|X/n - x| >= eps]`` and ``P[X/n - x >= eps]`` exactly (Fractions)
at every breakpoint and on a grid of ``x`` between them, so it also checks that the
supremum is attained at the breakpoints the certificate visits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import pytest

from proofgames.errors import ProtocolError
from proofgames.stochastic.tail_bounds import certify_tail, one_sided_sup
from proofgames.stochastic.tails import tail_sup


def _tail(n: int, eps: Fraction, x: Fraction, two_sided: bool) -> Fraction:
    total = Fraction(0)
    for j in range(n + 1):
        dev = Fraction(j, n) - x
        if dev >= eps or (two_sided and -dev >= eps):
            total += math.comb(n, j) * x**j * (1 - x) ** (n - j)
    return total


@cache
def _brute_sup(n: int, eps: Fraction, two_sided: bool) -> Fraction:
    """The supremum over breakpoints and a grid of 16 points per 1/n (exact values)."""
    xs = {Fraction(j, n) + s * eps for j in range(n + 1) for s in (1, -1)}
    xs |= {Fraction(i, 16 * n) for i in range(16 * n + 1)}
    return max(_tail(n, eps, x, two_sided) for x in xs if 0 <= x <= 1)


CASES = [(7, Fraction(1, 5)), (12, Fraction(3, 20)), (20, Fraction(1, 10)), (25, Fraction(2, 9))]


@pytest.mark.parametrize(("n", "eps"), CASES)
@pytest.mark.parametrize("two_sided", [True, False])
def test_the_certificate_brackets_the_exact_supremum(
    n: int, eps: Fraction, two_sided: bool
) -> None:
    exact = _brute_sup(n, eps, two_sided)
    above = certify_tail(n, eps, exact * (1 + Fraction(1, 10**9)), two_sided=two_sided)
    assert above.ok and exact <= above.worst <= exact * (1 + Fraction(1, 10**12))
    below = certify_tail(n, eps, exact * (1 - Fraction(1, 10**9)), two_sided=two_sided)
    assert not below.ok and below.worst > exact * (1 - Fraction(1, 10**9))


@pytest.mark.parametrize(("n", "eps"), CASES)
def test_the_double_precision_suprema_match(n: int, eps: Fraction) -> None:
    assert one_sided_sup(n, eps)[0] == pytest.approx(float(_brute_sup(n, eps, False)), rel=1e-12)
    assert tail_sup(n, eps)[0] == pytest.approx(float(_brute_sup(n, eps, True)), rel=1e-12)


def test_a_large_n_agrees_with_double_precision() -> None:
    eps = Fraction(3, 100)
    for two_sided, delta in ((True, Fraction(1, 10)), (False, Fraction(1, 100))):
        check = certify_tail(1130, eps, delta, two_sided=two_sided)
        value = tail_sup(1130, eps)[0] if two_sided else one_sided_sup(1130, eps)[0]
        assert check.ok == (value <= float(delta))
        if check.ok:  # the worst point is bounded term by term: it matches to rounding
            assert float(check.worst) == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize(
    ("n", "eps", "delta"),
    [(0, Fraction(1, 10), Fraction(1, 10)), (10, Fraction(0), Fraction(1, 10)),
     (10, Fraction(1, 10), Fraction(1))],
)  # fmt: skip
def test_bad_arguments_are_refused(n: int, eps: Fraction, delta: Fraction) -> None:
    with pytest.raises(ProtocolError):
        certify_tail(n, eps, delta, two_sided=True)
