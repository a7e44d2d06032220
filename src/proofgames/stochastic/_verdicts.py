"""Honest B's and V's verdicts on an announcement, exactly as the protocol computes them.

The protocol compares in floating point: a party with ``n`` samples estimates ``X / n``
(``X ~ Binomial(n, p)``; the exact ``p`` at a step it knows -- deterministic, or an internal
coin) and finds an announcement ``c`` *within* its threshold when ``|estimate - c| < thr``
(``<= tol`` for the strict check of known steps).  So, as a function of the (floating-point)
announcement, every verdict probability is a step function whose steps sit where some
estimate enters or leaves the window, and the set of announcements that pass one estimate
is an interval of floats.  This module finds those intervals' end floats exactly (by
checking the protocol's own comparison on neighbouring floats) and the probabilities of
the verdicts at any announcement (the Binomial mass of the estimates that pass).

Estimates whose probability is below :data:`TAIL` on either side are left out when the
*steps* are listed (they move a verdict probability by less than ``2 * TAIL`` in all);
probabilities are always computed from the whole distribution.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from .model import FloatArray

TAIL = 1e-18
"""Binomial tail mass left out, on each side, when listing where verdicts change."""

IntArray = NDArray[np.int64]
_FIX = 4  # neighbouring counts tried when snapping a window's ends (one always suffices)


@dataclass(frozen=True)
class Check:
    """One party's check: ``samples`` estimates (``None``: the exact p) and its threshold.

    Attributes:
        samples: number of samples, or ``None`` when the party knows p exactly.
        threshold: the window's half-width.
        inclusive: ``|estimate - c| <= threshold`` passes (the strict check) rather than ``<``.
    """

    samples: int | None
    threshold: float
    inclusive: bool = False

    def passes(self, estimate: FloatArray, c: FloatArray) -> NDArray[np.bool_]:
        """The protocol's comparison: whether ``c`` is within the window around ``estimate``."""
        gap = np.abs(estimate - c)
        return np.asarray(gap <= self.threshold if self.inclusive else gap < self.threshold)


def announcement_interval(check: Check, estimate: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The least and greatest floats ``c`` in [0, 1] that ``check`` passes around each estimate.

    Found by bisection over the floats between 0 and the estimate, and between it and 1 (the
    comparison is monotone on each side; non-negative floats order as their bit patterns).
    The bisection starts from a few floats either side of ``estimate -+ threshold``, checked
    to hold the end (else from the whole side), so it takes a handful of comparisons, not 64.

    Raises:
        ProtocolError: if a window is empty (a threshold of 0 with a strict ``<``).
    """
    x = np.clip(np.asarray(estimate, dtype=np.float64), 0.0, 1.0)
    if not check.passes(x, x).all():
        raise ProtocolError(f"no announcement passes a window of {check.threshold}")

    def passes(bits: IntArray) -> NDArray[np.bool_]:
        return check.passes(x, bits.view(np.float64))

    xb, one = x.view(np.int64), np.float64(1.0).view(np.int64)
    lo, hi = _bracket(x, -check.threshold, 0.0, x)
    held = (passes(hi) & ((lo == 0) | ~passes(np.maximum(lo - 1, 0)))).astype(bool)
    lo, hi = np.where(held, lo, 0), np.where(held, hi, xb)
    while (lo < hi).any():  # least passing float in [0, x]
        mid = lo + (hi - lo) // 2
        ok = passes(mid)
        lo, hi = np.where(ok, lo, mid + 1), np.where(ok, mid, hi)
    lower = lo.view(np.float64)
    lo, hi = _bracket(x, check.threshold, x, 1.0)
    held = (passes(lo) & ((hi == one) | ~passes(np.minimum(hi + 1, one)))).astype(bool)
    lo, hi = np.where(held, lo, xb), np.where(held, hi, one)
    while (lo < hi).any():  # greatest passing float in [x, 1]
        mid = hi - (hi - lo) // 2
        ok = passes(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
    return lower, lo.view(np.float64)


def _bracket(
    x: FloatArray, shift: float, low: FloatArray | float, high: FloatArray | float
) -> tuple[IntArray, IntArray]:
    """Bit patterns a few rounding errors either side of ``x + shift``, within [low, high]."""
    guess = x + shift
    slack = 4 * (np.spacing(x) + np.spacing(abs(shift)) + np.spacing(np.abs(guess)))
    lo = np.clip(guess - slack, low, high).astype(np.float64) + 0.0  # never -0.0
    hi = np.clip(guess + slack, low, high).astype(np.float64)
    return lo.view(np.int64), hi.view(np.int64)


def passing_range(check: Check, c: FloatArray) -> tuple[IntArray, IntArray]:
    """For each announcement, the counts ``X`` in ``[lo, hi]`` whose estimate ``X / n`` passes."""
    n = check.samples
    assert n is not None
    c = np.asarray(c, dtype=np.float64)
    lo = np.ceil((c - check.threshold) * n).astype(np.int64)
    hi = np.floor((c + check.threshold) * n).astype(np.int64)
    for _ in range(_FIX):  # a round that moves nothing would be repeated unchanged: stop
        down = check.passes((lo - 1) / n, c) & (lo > 0)
        up = check.passes((hi + 1) / n, c) & (hi < n)
        if not (down.any() or up.any()):
            break
        lo, hi = np.where(down, lo - 1, lo), np.where(up, hi + 1, hi)
    for _ in range(_FIX):
        raise_lo = ~check.passes(lo / n, c) & (lo <= hi)
        lo = np.where(raise_lo, lo + 1, lo)
        lower_hi = ~check.passes(hi / n, c) & (hi >= lo)
        if not (raise_lo.any() or lower_hi.any()):
            break
        hi = np.where(lower_hi, hi - 1, hi)
    return np.clip(lo, 0, n + 1), np.clip(hi, -1, n)


def pass_probability(check: Check, p: FloatArray | float, c: FloatArray) -> FloatArray:
    """P[``check`` passes announcement ``c``] when its estimate comes from probability ``p``.

    ``p`` and ``c`` broadcast against each other.  The Binomial cdf is read from a table
    over :func:`support` for each distinct ``p``: exact there, within :data:`TAIL` beyond.
    """
    c = np.asarray(c, dtype=np.float64)
    if check.samples is None:
        return check.passes(np.asarray(p, dtype=np.float64), c).astype(np.float64)
    lo, hi = passing_range(check, c)
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 0 and not np.isnan(p):  # one p (the optimal adversaries'): no sort, no masks
        table = _cdf(check.samples, float(p))
        inside = table.at(hi) - table.at(lo - 1)
    else:
        p, lo, hi = np.broadcast_arrays(p, lo, hi)
        inside = np.zeros(p.shape)
        for q in np.unique(p).tolist():
            at = p == q
            table = _cdf(check.samples, q)
            inside[at] = table.at(hi[at]) - table.at(lo[at] - 1)
    return np.where(hi >= lo, np.clip(inside, 0.0, 1.0), 0.0)


@dataclass(frozen=True)
class _Table:
    """The Binomial cdf on :func:`support` (and one count below it)."""

    first: int  # the count of table[0]
    table: FloatArray

    def at(self, k: IntArray) -> FloatArray:
        """cdf(k), read off the table: exact inside, within :data:`TAIL` outside."""
        return self.table[np.clip(k - self.first, 0, self.table.size - 1)]


@functools.lru_cache(maxsize=64)
def _cdf(samples: int, p: float) -> _Table:
    from scipy import stats  # imported here: it takes 0.4 s

    counts = support(samples, p)
    keys = np.concatenate([[counts[0] - 1], counts])
    return _Table(int(keys[0]), np.asarray(stats.binom.cdf(keys, samples, p), dtype=np.float64))


def _first(pred: Callable[[IntArray], NDArray[np.bool_]], lo: int, hi: int) -> int:
    """The least ``k`` in ``[lo, hi]`` with ``pred(k)``, for ``pred`` monotone and ``pred(hi)``.

    ``pred`` is asked about :data:`_PROBES` counts at once, so that a search over a
    billion counts takes five vectorized calls rather than thirty single ones.
    """
    while True:
        probes = np.unique(np.linspace(lo, hi, _PROBES + 1).astype(np.int64))
        ok = np.asarray(pred(probes), dtype=bool)
        j = int(np.argmax(ok)) if ok.any() else probes.size - 1
        if j == 0 or probes[j] - probes[j - 1] == 1:
            return int(probes[j])
        lo, hi = int(probes[j - 1]) + 1, int(probes[j])


_PROBES = 64


def support(samples: int, p: float) -> IntArray:
    """The counts ``X`` of Binomial(samples, p) but for at most :data:`TAIL` on each side.

    Found by searching the Binomial cdf and survival function (``scipy``'s ``isf`` is not
    reliable this far out); the two ends are cached for each ``(samples, p)``.
    """
    lo, hi = _support_ends(int(samples), float(p))
    return np.arange(lo, hi + 1, dtype=np.int64)


@functools.lru_cache(maxsize=4096)
def _support_ends(samples: int, p: float) -> tuple[int, int]:
    from scipy import stats  # imported here: it takes 0.4 s

    lo = _first(lambda k: np.asarray(stats.binom.cdf(k, samples, p)) > TAIL, 0, samples)
    hi = _first(lambda k: np.asarray(stats.binom.sf(k, samples, p)) <= TAIL, 0, samples)
    return lo, hi


def breakpoints(check: Check, p: float) -> FloatArray:
    """Announcements in [0, 1] at which ``check``'s verdict probability may change.

    For every estimate listed (the exact p, or the Binomial support but for :data:`TAIL`
    per side) the first and last floats of its window and the floats just outside them.
    """
    if check.samples is None:
        estimates = np.array([p])
    else:
        estimates = support(check.samples, p) / check.samples
    lo, hi = announcement_interval(check, estimates)
    points = np.concatenate([lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)])
    return points[(points >= 0.0) & (points <= 1.0)]
