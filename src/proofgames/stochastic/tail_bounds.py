"""The tails the tight argument needs, in floating point (search) and certified (check).

The tight argument (``docs/stochastic-tight.md``) bounds V's two errors separately, each by
a supremum over the true probability ``x`` in [0, 1] of a Binomial(n, x) tail:

two-sided, ``T2(n, eps) = sup_x P[|X/n - x| >= eps]``
    V's false rejection of an honest announcement (completeness);
    :func:`~.tails.tail_sup` evaluates it in double precision.
one-sided, ``T1(n, eps) = sup_x P[X/n - x >= eps]``
    V's false acceptance of an announcement more than ``s`` off (soundness; the lower
    side has the same supremum, by the symmetry ``X -> n - X``, ``x -> 1 - x``).  For a
    fixed threshold ``j = ceil(n (x + eps))`` the probability ``P[X >= j]`` increases with
    ``x``, and the threshold steps up just after ``x = j/n - eps``, so the supremum is the
    largest value at the points ``x = j/n - eps``: :func:`one_sided_sup`.

:func:`certify_tail` decides ``T <= delta`` rigorously: at every point where the
supremum can be attained (the breakpoints; :mod:`.tails` explains them for ``T2``) it
computes a rational upper bound on the tail and compares it with ``delta`` exactly.  The
bound sums the tail's terms, each rounded *up* to a dyadic rational with :data:`BITS`
significant bits (``C(n, j) x^j (1-x)^(n-j)`` by products rounded up, ``C(n, j)`` carried
from one point to the next by ``C(n, j+1) = C(n, j) (n-j)/(j+1)`` rounded up, the next
term by the exact ratio of consecutive terms, rounded up), and bounds the terms not summed by a
geometric series (the ratios of consecutive tail terms decrease away from the mean).
Points whose Bernstein bound is already within ``delta`` are skipped (the bound's
exponent is compared with a certified upper bound on ``ln(1/delta)``).

Example:
    >>> from fractions import Fraction
    >>> round(one_sided_sup(100, Fraction(1, 10))[0], 5)
    0.02857
    >>> certify_tail(100, Fraction(1, 10), Fraction(29, 1000), two_sided=False).ok
    True
    >>> certify_tail(100, Fraction(1, 10), Fraction(28, 1000), two_sided=False).ok
    False
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import ProtocolError
from .tails import _kl, ln_bounds, tail_sup

BITS = 96
"""Significant bits kept by every rounded-up product of :func:`certify_tail`."""


def one_sided_sup(n: int, eps: Fraction, prune_below: float = 0.0) -> tuple[float, float]:
    """``(sup_x P[X/n - x >= eps], an x attaining it)`` in double precision (module docstring).

    With ``prune_below > 0`` the points whose Chernoff bound is below it are skipped (the
    result is then the supremum only if it is at least ``prune_below``).
    """
    from scipy import special

    if n <= 0 or not 0 < eps < 1:
        raise ProtocolError(f"need n >= 1 and eps in (0, 1), got n = {n}, eps = {eps}")
    j = np.arange(math.ceil(n * eps), n + 1, dtype=np.float64)
    x = np.clip(j / n - float(eps), 0.0, 1.0)
    if prune_below > 0:
        keep = np.exp(-n * _kl(j / n, x)) * (1 + 1e-6) > prune_below
        j, x = j[keep], x[keep]
        if j.size == 0:
            return 0.0, 0.0
    values = special.bdtrc(j - 1, n, x)
    i = int(np.argmax(values))
    return float(values[i]), float(x[i])


def tail_float(n: int, eps: Fraction, two_sided: bool, prune_below: float = 0.0) -> float:
    """``T2(n, eps)`` or ``T1(n, eps)`` in double precision (for the search only)."""
    if two_sided:
        return tail_sup(n, eps, prune_below)[0]
    return one_sided_sup(n, eps, prune_below)[0]


# ---------------------------------------------------------------- dyadic rounding up
def _up(num: int, den: int) -> tuple[int, int]:
    """``(m, e)`` with ``m 2^e >= num/den`` and ``m`` of about :data:`BITS` bits."""
    if num == 0:
        return 0, 0
    shift = BITS - (num.bit_length() - den.bit_length())
    if shift >= 0:
        return -((-num << shift) // den), -shift
    return -(-num // (den << -shift)), -shift


def _mul(x: tuple[int, int], num: int, den: int) -> tuple[int, int]:
    """An upper bound on ``x * num / den`` (``x`` dyadic), rounded up."""
    m, e = _up(x[0] * num, den)
    return m, e + x[1]


def _pow(num: int, den: int, k: int) -> tuple[int, int]:
    """An upper bound on ``(num/den)^k``, by squaring with every product rounded up."""
    result, base = (1, 0), _up(num, den)
    while k:
        if k & 1:
            result = _mul(result, base[0], 1)
            result = (result[0], result[1] + base[1])
        k >>= 1
        if k:
            sq = _up(base[0] * base[0], 1)
            base = (sq[0], sq[1] + 2 * base[1])
    return result


def _ceil_units(m: int, e: int, unit: int) -> int:
    """``ceil(m 2^e / 2^unit)`` for ``m >= 0``."""
    shift = e - unit
    return m << shift if shift >= 0 else -(-m >> -shift)


def _tail_upper(
    n: int, a: int, big_d: int, start: int, up: bool, unit: int, comb: tuple[int, int]
) -> int:
    """An upper bound on ``P[X >= start]`` (``up``) or ``P[X <= start]``, x = a/D, in units.

    ``comb`` is a dyadic upper bound on ``C(n, start)``; the result counts units of
    ``2^unit``.  Requires ``start`` past the mean on its side (so the ratios of consecutive
    terms are below 1 and decrease outwards).  Stops once the geometric bound on the terms
    not summed is below ``2^(unit + 8)``.
    """
    b = big_d - a
    m, e = _mul(_pow(a, big_d, start), comb[0], 1)
    m, e = _mul((m, e + comb[1]), *_ratio_pow(b, big_d, n - start))
    total, j = 0, start
    while True:
        total += _ceil_units(m, e, unit)
        # the ratio of the next term outwards to this one, exactly
        num, den = ((n - j) * a, (j + 1) * b) if up else (j * b, (n - j + 1) * a)
        if num == 0:
            return total
        if num >= den:
            raise ProtocolError("internal: a tail started before the mean")
        # every further ratio is at most num/den: the rest is at most term num/(den - num)
        rest = _up(m * num, den - num)
        if _ceil_units(rest[0], rest[1] + e, unit + 8) <= 1:
            return total + _ceil_units(rest[0], rest[1] + e, unit)
        m, e = _mul((m, e), num, den)
        j = j + 1 if up else j - 1


def _ratio_pow(num: int, den: int, k: int) -> tuple[int, int]:
    """``(M, 2^E)``-style multiplier: an upper bound on ``(num/den)^k`` as an integer ratio."""
    m, e = _pow(num, den, k)
    return (m << e, 1) if e >= 0 else (m, 1 << -e)


@dataclass(frozen=True)
class TailCheck:
    """The outcome of :func:`certify_tail`.

    Attributes:
        ok: every point's rational upper bound is at most ``delta``.
        worst: the largest rational upper bound found (an upper bound on the supremum
            when ``ok``; where a Bernstein bound sufficed it is not computed).
        at: the true probability ``x`` at which ``worst`` was found.
        points: how many points were bounded term by term (the rest by Bernstein).
    """

    ok: bool
    worst: Fraction
    at: Fraction
    points: int


def _bernstein_exponent(n: int, eps: Fraction, x: Fraction) -> Fraction:
    """``n eps^2 / (2 (x (1 - x) + eps/3))``: ``P[X/n - x >= eps] <= exp(-this)``."""
    return n * eps * eps / (2 * (x * (1 - x) + eps / 3))


def certify_tail(n: int, eps: Fraction, delta: Fraction, *, two_sided: bool) -> TailCheck:
    """Whether ``T2(n, eps) <= delta`` (``two_sided``) or ``T1(n, eps) <= delta``, rigorously.

    Every comparison is exact on rational upper bounds (module docstring).  Stops at the
    first point whose bound exceeds ``delta`` (``ok`` False, ``worst`` that bound).

    Raises:
        ProtocolError: ``n < 1``, ``eps`` outside (0, 1) or ``delta`` outside (0, 1).
    """
    eps, delta = Fraction(eps), Fraction(delta)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ProtocolError(f"n must be a positive integer, got {n!r}")
    if not 0 < eps < 1 or not 0 < delta < 1:
        raise ProtocolError(f"need eps and delta in (0, 1), got {eps}, {delta}")
    sides = 2 if two_sided else 1
    skip_above = ln_bounds(sides / delta)[1]  # exp(-z) <= delta / sides once z >= this
    unit = math.floor(math.log2(delta)) - 56  # terms not summed: below 2^-48 delta in all
    m = math.ceil(2 * n * eps)
    worst, at, points = Fraction(0), Fraction(0), 0
    big_d = n * eps.denominator
    shift = n * eps.numerator  # x = k/n + eps = (k den + n num) / (n den)
    span = _points(n, eps, two_sided)
    # upper bounds on C(n, k) and C(n, k + m), carried from point to point (k -> k + 1)
    comb = _up(math.comb(n, span.start), 1)
    comb_m = _up(math.comb(n, span.start + m), 1) if two_sided else (0, 0)
    for k in span:
        if k > span.start:
            comb = _mul(comb, n - k + 1, k)
            comb_m = _mul(comb_m, n - k - m + 1, k + m) if two_sided and k + m <= n else (0, 0)
        a = k * eps.denominator + (shift if two_sided else -shift)
        if a <= 0 or a >= big_d:
            continue  # x = 0 or x = 1: the tail event is empty
        x = Fraction(a, big_d)
        if _bernstein_exponent(n, eps, x) >= skip_above:
            continue
        points += 1
        if two_sided:
            units = _tail_upper(n, a, big_d, k, False, unit, comb)
            if k + m <= n:
                units += _tail_upper(n, a, big_d, k + m, True, unit, comb_m)
        else:
            units = _tail_upper(n, a, big_d, k, True, unit, comb)
        bound = Fraction(units, 2**-unit) if unit < 0 else Fraction(units * 2**unit)
        if bound > worst:
            worst, at = bound, x
        if bound > delta:
            return TailCheck(False, worst, at, points)
    return TailCheck(True, worst, at, points)


def _points(n: int, eps: Fraction, two_sided: bool) -> range:
    """The breakpoints: ``x = k/n + eps`` (two-sided) or ``x = j/n - eps`` (one-sided)."""
    if two_sided:
        return range(0, math.floor(n * (1 - eps)) + 1)
    return range(math.ceil(n * eps), n + 1)
