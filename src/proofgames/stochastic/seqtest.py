"""An anytime-valid sequential V with a worst-case cap (the sequential tier's test).

On an abort, V must tell whether A's announcement ``a`` is *close* to the true probability
``x`` (``|a - x| <= c``: it should accept) or *far* (``|a - x| > s``: it should reject).
This V draws samples one at a time and watches four likelihood ratios, each a product over
the samples so far of ``p1/p0`` (a one) or ``(1 - p1)/(1 - p0)`` (a zero):

* **upper acceptance** ``p0 = a + s``, ``p1 = a``: rules out ``x >= a + s``;
* **lower acceptance** ``p0 = a - s``, ``p1 = a``: rules out ``x <= a - s``;
* **upper rejection** ``p0 = a + c``, ``p1 = a + delta`` (capped below 1): evidence that
  ``x > a + c``;
* **lower rejection** ``p0 = a - c``, ``p1 = a - delta``: evidence that ``x < a - c``.

V rejects as soon as a rejection ratio reaches ``2 / v_r``.  An acceptance side is
*settled* once its ratio has reached ``1 / v_a`` (it stays settled; a side with no
alternative in [0, 1], such as ``a + s >= 1``, is settled from the start); V accepts once
both sides are settled.  If neither happened after ``n`` samples (the cap), V decides as
the fixed-``n`` V does: accept iff ``|X/n - a| < theta``.  An announcement outside [0, 1]
is rejected with no sample (honest A announces a sample mean, always in [0, 1]).

Each ratio is a nonnegative supermartingale starting at 1 under its null (``x >= a + s``
for the upper acceptance ratio, ``x <= a + c`` for the upper rejection ratio, ...), so by
Ville's inequality it ever reaches ``1/alpha`` with probability at most ``alpha``, whatever
the stopping.  ``docs/stochastic-sequential.md`` turns this into the tier's completeness
and soundness bounds; :mod:`.seq_tier` checks them.

Every ratio condition is linear in the count of ones ``X`` after ``i`` samples, so V's
rule is a table of integer thresholds (:func:`thresholds`), and :func:`expected_queries`
computes V's exact expected number of samples and its verdict probabilities at a true
probability ``x`` by dynamic programming over ``(i, X, settled sides)``.

Example:
    >>> v = SequentialTest(n=400, theta=0.09, c=0.001, s=0.2, v_r=0.05, v_a=0.01, delta=0.2)
    >>> r = expected_queries(v, 0.5, 0.5)
    >>> r.expected < 400, round(r.accept + r.reject, 12)
    (True, 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from .sequential import acceptance_interval

IntArray = NDArray[np.int64]
MARGIN = 1e-9
"""Added to every log-threshold before V's integer thresholds are rounded (double
precision; the argument ignores rounding in V's own arithmetic, as the other tiers do)."""
NEVER = 2**40
"""A threshold no count reaches."""


@dataclass(frozen=True)
class SequentialTest:
    """The sequential V's constants (module docstring).

    Attributes:
        n: the cap: V never draws more samples.
        theta: the fixed-``n`` rule's threshold at the cap.
        c, s: close (``|a - x| <= c``) and far (``|a - x| > s``) announcements.
        v_r: the rejection ratios' level (each side ``v_r / 2``).
        v_a: the acceptance ratios' level (each side ``v_a``).
        delta: the rejection ratios' alternative offset.
    """

    n: int
    theta: float
    c: float
    s: float
    v_r: float
    v_a: float
    delta: float

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ProtocolError(f"the cap n must be a positive integer, got {self.n!r}")
        if not 0 < self.c < self.theta < self.s < 1:
            raise ProtocolError(
                f"need 0 < c < theta < s < 1, got c = {self.c}, theta = {self.theta}, s = {self.s}"
            )
        if not (0 < self.v_r < 1 and 0 < self.v_a < 1 and self.c < self.delta < 1):
            raise ProtocolError(
                f"need v_r, v_a in (0, 1) and c < delta < 1, got v_r = {self.v_r}, "
                f"v_a = {self.v_a}, delta = {self.delta}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The constants as a JSON-friendly dict."""
        return {"n_cap": self.n, "theta": self.theta, "c": self.c, "s": self.s,
                "v_r": self.v_r, "v_a": self.v_a, "delta": self.delta}  # fmt: skip


@dataclass(frozen=True)
class Thresholds:
    """V's rule at one announcement, for ``i = 1 .. n`` (index ``i - 1``).

    Reject at ``i`` if ``X >= reject_hi`` or ``X <= reject_lo``; the upper side settles
    if ``X <= settle_hi``, the lower if ``X >= settle_lo``; at the cap accept iff
    ``low <= X <= high``.  ``start_hi`` / ``start_lo``: a side settled before any sample.
    """

    reject_hi: IntArray
    reject_lo: IntArray
    settle_hi: IntArray
    settle_lo: IntArray
    start_hi: bool
    start_lo: bool
    low: int
    high: int


def _upper_settle(i: IntArray, a: float, s: float, v_a: float) -> IntArray:
    """``X <= this``: the upper acceptance ratio (p0 = a + s, p1 = a) is at least 1/v_a."""
    need = math.log(1 / v_a) + MARGIN
    l0 = math.log((1 - a) / (1 - a - s))  # a zero's log-ratio (> 0)
    if a == 0:  # a one makes the ratio 0
        return np.asarray(np.where(i * l0 >= need, 0, -1), dtype=np.int64)
    l1 = math.log(a / (a + s))  # a one's (< 0)
    return np.asarray(np.floor((i * l0 - need) / (l0 - l1)), dtype=np.int64)


def _upper_reject(i: IntArray, a: float, c: float, delta: float, v_r: float) -> IntArray:
    """``X >= this``: the upper rejection ratio (p0 = a + c) is at least 2/v_r."""
    need = math.log(2 / v_r) + MARGIN
    p0 = a + c
    p1 = min(a + delta, (p0 + 1) / 2)
    m1, m0 = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))  # > 0, < 0
    return np.asarray(np.ceil((need - i * m0) / (m1 - m0)), dtype=np.int64)


def thresholds(test: SequentialTest, a: float) -> Thresholds:
    """V's integer thresholds at announcement ``a`` in [0, 1] (module docstring).

    The lower sides are the upper ones of the mirrored problem (ones and zeros swapped,
    ``a -> 1 - a``).
    """
    if not 0 <= a <= 1:
        raise ProtocolError(f"the announcement must be in [0, 1] here, got {a!r}")
    i = np.arange(1, test.n + 1, dtype=np.int64)
    never = np.full(test.n, NEVER, dtype=np.int64)
    start_hi, start_lo = a + test.s >= 1, a - test.s <= 0
    settle_hi = never if start_hi else _upper_settle(i, a, test.s, test.v_a)
    settle_lo = -never if start_lo else i - _upper_settle(i, 1 - a, test.s, test.v_a)
    reject_hi = never if a + test.c >= 1 else _upper_reject(i, a, test.c, test.delta, test.v_r)
    reject_lo = (-never if a - test.c <= 0
                 else i - _upper_reject(i, 1 - a, test.c, test.delta, test.v_r))  # fmt: skip
    low, high = acceptance_interval(test.n, a, test.theta)
    return Thresholds(reject_hi, reject_lo, settle_hi, settle_lo, start_hi, start_lo, low, high)


def run_test(test: SequentialTest, a: float, samples: NDArray[Any]) -> tuple[bool, int]:
    """V's verdict (True: accept) and the samples it drew, on a stream of 0/1 ``samples``.

    Raises:
        ProtocolError: fewer than ``n`` samples given and V needed more.
    """
    if not 0 <= a <= 1:
        return False, 0
    th = thresholds(test, a)
    hi, lo = th.start_hi, th.start_lo
    if hi and lo:
        return True, 0
    x = 0
    for i in range(1, test.n + 1):
        if i > len(samples):
            raise ProtocolError(f"V needed sample {i}; only {len(samples)} given")
        x += int(samples[i - 1])
        if x >= th.reject_hi[i - 1] or x <= th.reject_lo[i - 1]:
            return False, i
        hi = hi or x <= th.settle_hi[i - 1]
        lo = lo or x >= th.settle_lo[i - 1]
        if hi and lo:
            return True, i
    return th.low <= x <= th.high, test.n


@dataclass(frozen=True)
class Outcome:
    """V's exact behaviour at one (announcement, true probability).

    Attributes:
        a, x: the announcement and the true probability.
        expected: the expected number of samples V draws (exact dynamic programming in
            double precision).
        accept, reject: the probabilities of V's two verdicts.
        worst: the most samples V can draw (the cap).
    """

    a: float
    x: float
    expected: float
    accept: float
    reject: float
    worst: int


def expected_queries(test: SequentialTest, a: float, x: float) -> Outcome:
    """V's exact expected samples and verdict probabilities at announcement ``a``, truth ``x``.

    Dynamic programming over the count of ones after ``i`` samples and which acceptance
    sides are settled; only the counts between the rejection thresholds carry mass.

    Raises:
        ProtocolError: ``x`` outside [0, 1].
    """
    if not 0 <= x <= 1:
        raise ProtocolError(f"the true probability must be in [0, 1], got {x!r}")
    if not 0 <= a <= 1:
        return Outcome(a, x, 0.0, 0.0, 1.0, test.n)
    th = thresholds(test, a)
    if th.start_hi and th.start_lo:
        return Outcome(a, x, 0.0, 1.0, 0.0, test.n)
    size = test.n + 2
    # mass by count, for: no side settled, only the upper, only the lower
    none, up, down = np.zeros(size), np.zeros(size), np.zeros(size)
    (up if th.start_hi else down if th.start_lo else none)[0] = 1.0
    lo_w, hi_w, expected, accept, reject = 0, 0, 0.0, 0.0, 0.0
    for i in range(1, test.n + 1):
        expected += float(none[lo_w:hi_w + 1].sum() + up[lo_w:hi_w + 1].sum()
                           + down[lo_w:hi_w + 1].sum())  # fmt: skip
        hi_w += 1
        for m in (none, up, down):  # one more sample: the count moves up with probability x
            m[lo_w + 1 : hi_w + 1] = m[lo_w + 1 : hi_w + 1] * (1 - x) + m[lo_w:hi_w] * x
            m[lo_w] *= 1 - x
        r_hi, r_lo = int(th.reject_hi[i - 1]), int(th.reject_lo[i - 1])
        counts = np.arange(lo_w, hi_w + 1)
        out = (counts >= r_hi) | (counts <= r_lo)
        for m in (none, up, down):
            window = m[lo_w : hi_w + 1]
            reject += float(window[out].sum())
            window[out] = 0.0
        new_lo, new_hi = max(lo_w, r_lo + 1), min(hi_w, r_hi - 1)
        lo_w, hi_w = new_lo, max(new_hi, new_lo - 1)
        if lo_w > hi_w:
            break
        accept += _settle(none, up, down, lo_w, hi_w, int(th.settle_hi[i - 1]),
                          int(th.settle_lo[i - 1]))  # fmt: skip
    else:
        live = none + up + down
        inside = float(live[max(th.low, 0) : th.high + 1].sum()) if th.high >= th.low else 0.0
        accept += inside
        reject += float(live.sum()) - inside
    return Outcome(a, x, expected, accept, reject, test.n)


def _settle(
    none: NDArray[np.float64], up: NDArray[np.float64], down: NDArray[np.float64],
    lo_w: int, hi_w: int, settle_hi: int, settle_lo: int,
) -> float:  # fmt: skip
    """Move mass between the settled-side arrays; return the mass accepted now."""
    counts = np.arange(lo_w, hi_w + 1)
    s_hi, s_lo = counts <= settle_hi, counts >= settle_lo
    w_none, w_up, w_down = none[lo_w : hi_w + 1], up[lo_w : hi_w + 1], down[lo_w : hi_w + 1]
    accepted = float(w_none[s_hi & s_lo].sum() + w_up[s_lo].sum() + w_down[s_hi].sum())
    w_up[s_lo] = 0.0
    w_down[s_hi] = 0.0
    w_up += np.where(s_hi & ~s_lo, w_none, 0.0)
    w_down += np.where(s_lo & ~s_hi, w_none, 0.0)
    w_none[s_hi | s_lo] = 0.0
    return accepted
