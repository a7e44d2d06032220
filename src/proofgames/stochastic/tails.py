"""Sample counts for one estimate: Hoeffding's, certified, and the exact binomial tail's.

Each party of the stochastic protocol estimates a probability ``p`` by the mean of ``n``
Bernoulli(p) samples, and the proof needs, for the party's error ``eps`` and failure
probability ``delta``, that ``P[|X/n - p| >= eps] <= delta`` for every ``p`` in [0, 1]
(``X ~ Binomial(n, p)``).  Two ways to choose ``n``:

Hoeffding (:func:`certified_hoeffding`)
    ``n = ceil(ln(2/delta) / (2 eps^2))``, the count of the Lean formalization, which proves
    the requirement from Hoeffding's inequality for every ``n`` at least this large.  Here
    it is computed in exact rational arithmetic: ``ln`` is enclosed between two rationals
    (:func:`ln_bounds`, a truncated ``atanh`` series with its remainder bounded), so the
    ceiling is certified, not a floating-point guess.
exact binomial tail (:func:`exact_tail_samples`), *not machine-checked*
    The smallest ``n0`` such that *every* ``n >= n0`` meets the requirement.  The condition
    is not monotone in ``n`` (the lattice of attainable means shifts with ``n``), so the
    smallest ``n`` that works may be followed by some that fail; ``n0`` is after the last
    failure.  Every ``n`` from Hoeffding's count on passes, and so does every ``n`` from
    the smallest at which a smooth bound on the tail, decreasing in ``n``, is within
    ``delta`` (:func:`smooth_bound`, a few percent above ``n0``); ``n0`` is found by
    checking each ``n`` below that, downwards, until one fails.

For one ``n`` the worst ``p`` is found exactly (:func:`tail_sup`): the event
``|X - n p| >= n eps`` is ``X <= n(p - eps)`` or ``X >= n(p + eps)``, a set of counts that
changes only at the breakpoints ``p = k/n + eps`` and ``p = k/n - eps``.  Between two
breakpoints the set is fixed, and the probability of a fixed lower-and-upper tail set is
quasi-convex in ``p`` (its derivative is ``n [b(j_hi - 1; n - 1, p) - b(j_lo; n - 1, p)]``,
whose sign changes at most once, from - to +, because the ratio of the two terms increases
with ``p``), so the supremum of a piece is at an end of it.  At a breakpoint the set is
closed (it contains the sets of both neighbouring pieces), so the supremum over all ``p``
is the largest value at a breakpoint.  By the symmetry ``X -> n - X``, ``p -> 1 - p`` the
breakpoints ``k/n - eps`` give the same values as ``(n - k)/n + eps``, so only
``p = k/n + eps`` is evaluated, with the event ``X <= k`` or ``X >= k + ceil(2 n eps)``
(the ceiling in exact arithmetic).  The probabilities are evaluated in double precision
(SciPy's regularized incomplete beta) and ``n`` passes only if the largest is at most
``delta (1 - 1e-9)``; breakpoints whose Chernoff bound is below that are skipped.

Example:
    >>> from fractions import Fraction
    >>> certified_hoeffding(Fraction(1, 200), Fraction(1, 100))  # the Lean default V at K = 1
    105967
    >>> t = exact_tail_samples(Fraction(1, 10), Fraction(1, 20))
    >>> t.n0 <= t.hoeffding, t.hoeffding
    (True, 185)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..errors import ProtocolError

EXACT_LABEL = "exact binomial tail, not machine-checked"
"""How the exact-tail tier is labelled wherever a count of it is shown."""
HOEFFDING_LABEL = "Hoeffding (the Lean theorem's counts: machine-checked)"
"""How the Hoeffding tier is labelled."""
TIER_BACKING = {
    "hoeffding": "machine-checked: the Lean theorem (its Params conditions, Hoeffding counts)",
    "exact": "Lean's argument with an exact binomial tail substituted for Hoeffding's "
    "(not machine-checked)",
    "tight": "a written proof (docs/stochastic-tight.md) checked numerically in exact "
    "rational arithmetic (not machine-checked)",
    "sequential": "a written proof (docs/stochastic-sequential.md: Ville's inequality and "
    "the tight argument) checked numerically in exact rational arithmetic (not "
    "machine-checked)",
}
"""What backs each tier's guarantee, as every report and the CLI label it: only the
``hoeffding`` tier is covered by the machine-checked theorem."""
SCAN_LIMIT = 100_000
"""Largest Hoeffding count for which :func:`exact_tail_samples` runs (its scan grows as the
square of the count: about a minute at 75,000)."""
MARGIN = 1e-9
"""Relative margin by which a double-precision tail must stay below ``delta`` to pass."""


def _atanh_bounds(z: Fraction, terms: int) -> tuple[Fraction, Fraction]:
    """``lo <= atanh(z) <= hi`` for ``0 <= z < 1`` from ``terms`` terms of its series."""
    total, power, z2 = Fraction(0), z, z * z
    for j in range(terms):
        total += power / (2 * j + 1)
        power *= z2
    # the rest is sum_{j >= terms} z^(2j+1)/(2j+1) <= z^(2 terms + 1) / ((2 terms + 1)(1 - z^2))
    return total, total + power / ((2 * terms + 1) * (1 - z2))


@lru_cache(maxsize=256)
def ln_bounds(x: Fraction, bits: int = 96) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= ln(x) <= hi`` with ``hi - lo`` about ``2^-bits`` times ``|ln x| + 1``.

    Raises:
        ProtocolError: ``x <= 0``.

    Example:
        >>> lo, hi = ln_bounds(Fraction(200))
        >>> float(lo) <= math.log(200) <= float(hi), float(hi - lo) < 1e-25
        (True, True)
    """
    if x <= 0:
        raise ProtocolError(f"ln needs a positive argument, got {x}")
    if x < 1:
        lo, hi = ln_bounds(1 / x, bits)
        return -hi, -lo
    k = x.numerator.bit_length() - x.denominator.bit_length()
    while x / Fraction(2) ** k >= 2:
        k += 1
    while x / Fraction(2) ** k < 1:
        k -= 1
    r = x / Fraction(2) ** k  # in [1, 2): z = (r - 1)/(r + 1) < 1/3
    terms = bits // 3 + 2  # (1/3)^(2 terms) < 2^-bits
    lo_r, hi_r = _atanh_bounds((r - 1) / (r + 1), terms)
    lo_2, hi_2 = _atanh_bounds(Fraction(1, 3), terms)  # ln 2 = 2 atanh(1/3)
    return 2 * (k * lo_2 + lo_r), 2 * (k * hi_2 + hi_r)


def certified_hoeffding(error: Fraction, failure: Fraction) -> int:
    """``ceil(ln(2/failure) / (2 error^2))`` for exact rationals, certified.

    Raises:
        ProtocolError: ``error <= 0`` or ``failure`` outside (0, 1].
    """
    if not error > 0 or not 0 < failure <= 1:
        raise ProtocolError(f"need error > 0 and failure in (0, 1], got {error}, {failure}")
    for bits in (96, 192, 384, 768):
        lo, hi = ln_bounds(2 / failure, bits)
        low, high = math.ceil(lo / (2 * error * error)), math.ceil(hi / (2 * error * error))
        if low == high:
            return low
    raise ProtocolError(  # ln(2/failure) is irrational: more bits always separate it
        f"cannot certify the Hoeffding count for error {error} and failure {failure}"
    )


def _binom_tails(k: np.ndarray, n: int, m: int, p: np.ndarray) -> np.ndarray:
    """``P[X <= k] + P[X >= k + m]`` for ``X ~ Binomial(n, p)``, elementwise."""
    from scipy import special

    lower = special.bdtr(k, n, p)
    hi = k + m
    upper = np.zeros_like(p)
    inside = hi <= n
    upper[inside] = special.bdtrc(hi[inside] - 1, n, p[inside])
    return np.asarray(lower + upper, dtype=np.float64)


def _kl(a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Bernoulli KL divergence ``KL(a || p)`` (with ``0 ln 0 = 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(a > 0, a * np.log(a / p), 0.0)
        t2 = np.where(a < 1, (1 - a) * np.log((1 - a) / (1 - p)), 0.0)
    return np.asarray(t1 + t2, dtype=np.float64)


def tail_sup(n: int, eps: Fraction, prune_below: float = 0.0) -> tuple[float, float]:
    """``(max over p of P[|X/n - p| >= eps], a p attaining it)`` for ``X ~ Binomial(n, p)``.

    The maximum is over the breakpoints ``p = k/n + eps`` (module docstring), evaluated
    in double precision.  With ``prune_below > 0`` breakpoints whose Chernoff bound on
    both tails is below ``prune_below`` are skipped (the result is then the maximum only
    if it is at least ``prune_below``).
    """
    if n <= 0 or not eps > 0:
        raise ProtocolError(f"need n >= 1 and eps > 0, got n = {n}, eps = {eps}")
    m = math.ceil(2 * n * eps)
    kmax = math.floor(n * (1 - eps))
    if kmax < 0:
        return 0.0, 0.0
    k = np.arange(kmax + 1, dtype=np.float64)
    p = np.minimum(k / n + float(eps), 1.0)
    if prune_below > 0:
        chernoff = np.exp(-n * _kl(k / n, p)) + np.where(
            k + m <= n, np.exp(-n * _kl(np.minimum((k + m) / n, 1.0), p)), 0.0
        )
        keep = chernoff * (1 + 1e-6) > prune_below  # the rest are below it: Chernoff bounds them
        k, p = k[keep], p[keep]
        if k.size == 0:
            return 0.0, 0.0
    values = _binom_tails(k, n, m, p)
    i = int(np.argmax(values))
    return float(values[i]), float(p[i])


def passes(n: int, eps: Fraction, delta: Fraction) -> bool:
    """Whether ``P[|X/n - p| >= eps] <= delta`` for every p (double precision, margin)."""
    bound = float(delta) * (1 - MARGIN)
    return tail_sup(n, eps, prune_below=bound)[0] <= bound


CELLS = 1 << 15
"""Cells of [0, 1] over which :func:`smooth_bound` bounds the tail for every p."""


def smooth_bound(n: int, eps: float) -> float:
    """An upper bound on ``sup_p P[|X/n - p| >= eps]`` that decreases with ``n``.

    Per side, with ``a = p + eps``: Feller's geometric bound on the upper tail (the ratio of
    consecutive terms beyond ``n a`` is at most ``r = (1 - a) p / (a (1 - p))``, and
    ``1/(1 - r) = a (1 - p) / eps``) times a Robbins--Stirling bound on the largest term
    (log-concave, past its mode when ``n eps >= 1``), capped by the Chernoff bound
    ``exp(-n KL(a || p))``; the lower side is the upper side at ``1 - p``.  Both are
    decreasing in ``n`` at every ``p``.  The supremum over ``p`` is bounded cell by cell:
    ``KL(p + eps || p)`` is convex in ``p`` (KL is jointly convex), so tangents at the
    cell's ends bound it from below, and the other factors are largest at an end.
    """
    if n * eps < 1:
        return 1.0
    edges = np.linspace(0.0, 1.0, CELLS + 1)
    lo, hi = edges[:-1], edges[1:]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kl_low = np.maximum.reduce([_kl_tangent(lo, hi, eps), _kl_tangent(hi, lo, eps),
                                    np.zeros_like(lo)])  # fmt: skip
        chernoff = np.exp(-n * kl_low)
        h = np.maximum((1 - lo) / np.sqrt(1 - lo - eps), (1 - hi) / np.sqrt(1 - hi - eps))
        feller = chernoff * math.exp(1 / (12 * n)) * np.sqrt(hi + eps) * h
        feller /= eps * math.sqrt(2 * math.pi * n)
        side = np.where(hi + eps < 1, np.minimum(chernoff, feller), chernoff)
        side = np.where(lo + eps > 1, 0.0, side)  # the upper tail is empty there
    return float(np.max(side + side[::-1]))


def _kl_tangent(at: np.ndarray, other: np.ndarray, eps: float) -> np.ndarray:
    """A lower bound on ``KL(p + eps || p)`` between ``at`` and ``other`` (its tangent)."""
    a = np.minimum(at + eps, 1.0)
    value = _kl(a, at)
    slope = np.log1p(eps / at) - np.log1p(-eps / (1 - at)) - eps / at - eps / (1 - at)
    out = value + slope * (other - at)
    return np.asarray(np.where(np.isfinite(out) & (at + eps < 1), out, 0.0), dtype=np.float64)


def _certified_from(eps: Fraction, delta: Fraction, top: int) -> int:
    """The smallest ``n <= top`` from which :func:`smooth_bound` is within ``delta``."""
    bound, e = float(delta) * (1 - MARGIN), float(eps)
    low, high = 1, top  # smooth_bound decreases with n; top is Hoeffding's (passes anyway)
    while low < high:
        mid = (low + high) // 2
        if smooth_bound(mid, e) <= bound:
            high = mid
        else:
            low = mid + 1
    return high


@dataclass(frozen=True)
class ExactTail:
    """The exact-tail sample count for one ``(eps, delta)``.

    Attributes:
        n0: every ``n >= n0`` meets the requirement (``n0 - 1`` does not, unless ``n0 = 1``).
        hoeffding: the certified Hoeffding count for the same ``(eps, delta)``.
        smallest: the smallest ``n`` that meets it at all (``<= n0``; ``None`` if not
            searched), showing where the condition is not monotone in ``n``.
        failing_above_smallest: how many ``n`` in ``[smallest, n0)`` fail.
    """

    n0: int
    hoeffding: int
    smallest: int | None = None
    failing_above_smallest: int | None = None
    label: str = EXACT_LABEL


@lru_cache(maxsize=1024)  # pure; the optimizer asks again for every candidate of one q
def exact_tail_samples(
    eps: Fraction, delta: Fraction, *, limit: int = SCAN_LIMIT, smallest: bool = False
) -> ExactTail:
    """The smallest ``n0`` from which every ``n`` meets ``P[|X/n - p| >= eps] <= delta``.

    Scans ``n`` down from where :func:`smooth_bound` certifies every larger ``n`` (at most
    the certified Hoeffding count) until one fails.  With ``smallest``, keeps scanning down
    to 1 for the smallest ``n`` that passes at all.

    Raises:
        ProtocolError: bad ``eps``/``delta``, or a Hoeffding count above ``limit`` (the scan
            would take too long; use the Hoeffding count instead).
    """
    eps, delta = Fraction(eps), Fraction(delta)
    if not 0 < eps < 1 or not 0 < delta <= 1:
        raise ProtocolError(f"need eps in (0, 1) and delta in (0, 1], got {eps}, {delta}")
    top = certified_hoeffding(eps, delta)
    if top > limit:
        raise ProtocolError(
            f"the exact-tail scan for eps = {float(eps):.4g}, delta = {float(delta):.3g} "
            f"would check {top:,} sample counts, more than the limit {limit:,}"
        )
    n = _certified_from(eps, delta, top) - 1
    while n >= 1 and passes(n, eps, delta):
        n -= 1
    n0 = n + 1
    if not smallest:
        return ExactTail(n0, top)
    passing = [n for n in range(1, n0) if passes(n, eps, delta)]
    low = min(passing, default=n0)
    return ExactTail(n0, top, low, (n0 - low) - sum(1 for n in passing if n >= low))


def binomial_tail_exact(n: int, eps: Fraction, p: Fraction) -> Fraction:
    """``P[|X/n - p| >= eps]`` in exact rational arithmetic (for checks on small ``n``)."""
    total = Fraction(0)
    for j in range(n + 1):
        if abs(Fraction(j, n) - p) >= eps:
            total += math.comb(n, j) * p**j * (1 - p) ** (n - j)
    return total
