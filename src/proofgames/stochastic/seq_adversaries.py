"""The sequential V's queries and verdicts under exact adversaries, outward-rounded.

V samples only in a round B aborts, and there its behaviour depends only on A's
announcement ``a`` and the true probability ``x`` at that prefix.  This module computes,
for the sequential tier's V (:mod:`.seqtest`):

* :func:`interval_queries` -- V's expected samples and verdict probabilities at ``(a, x)``
  by the same dynamic programming as :func:`.seqtest.expected_queries`, with every step
  rounded outward (masses are nonnegative and every operation is monotone in them, so one
  run rounding down and one rounding up enclose the exact values; each product-and-sum is
  shrunk or grown by a relative ``2^-50``, each array sum by ``2^-45``, both more than
  the double-precision error they cover).
* :func:`honest_pieces` -- an honest A announces its sample mean ``X / R``; V's rule
  (its integer thresholds) is the same for runs of neighbouring ``X``, so the estimates
  within ``sds`` standard deviations of ``x`` are grouped by the rule they get
  (V's own :func:`.seqtest.thresholds` evaluated at every one) and each group is solved
  once.
* :func:`disputed_honest` -- a liar B that disputes honest A's announcement in the
  sampled round: V's expected samples averaged over A's estimate, the largest over them
  (and which announcement attains it), and the acceptance; enclosures, with the mass of
  A's estimates beyond the groups counted at V's extremes (0 or the cap).
* :func:`optimal_liar_round` -- the exact optimal liar's announcement in one sampled
  round against honest B and this V (the value ``P[B aborts] P[V accepts] + P[B stays]
  (v0 + c (v1 - v0))``, maximized over every float ``c``), and V's samples there.

Example:
    >>> from proofgames.stochastic.seqtest import SequentialTest
    >>> t = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
    ...                    v_a=0.007057, delta=0.243256)
    >>> e = interval_queries(t, 0.5, 0.5)
    >>> e.expected[0] <= 52.04784488441 <= e.expected[1], e.expected[1] - e.expected[0] < 1e-9
    (True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from ._verdicts import Check, breakpoints, pass_probability
from .seqtest import SequentialTest, Thresholds, thresholds

FloatArray = NDArray[np.float64]
STEP = 2.0**-50
"""Relative outward step after each product-and-sum of masses."""
SUM = 2.0**-45
"""Relative outward step after each array sum (numpy's pairwise sum, under 2^12 terms)."""
Interval = tuple[float, float]


@dataclass(frozen=True)
class Enclosure:
    """Outward-rounded enclosures of V's exact behaviour at one ``(a, x)``.

    Attributes:
        a, x: the announcement and the true probability.
        expected: ``(low, high)`` around V's expected number of samples.
        accept, reject: ``(low, high)`` around its verdict probabilities.
        cap: the most samples V can draw.
    """

    a: float
    x: float
    expected: Interval
    accept: Interval
    reject: Interval
    cap: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"a": self.a, "x": self.x, "expected_queries": list(self.expected),
                "accept": list(self.accept), "reject": list(self.reject)}  # fmt: skip


def _one_minus(x: float) -> Interval:
    """``1 - x`` enclosed by floats (exact when representable)."""
    y = 1.0 - x
    if Fraction(y) == 1 - Fraction(x):
        return y, y
    return float(np.nextafter(y, -np.inf)), float(np.nextafter(y, np.inf))


def _dp(th: Thresholds, n: int, x: float, q: float, sign: int) -> tuple[float, float, float]:
    """One directed run of the DP: ``sign = -1`` rounds every step down, ``+1`` up."""
    step, add = 1 + sign * STEP, 1 + sign * SUM
    none, up, down = np.zeros(n + 2), np.zeros(n + 2), np.zeros(n + 2)
    (up if th.start_hi else down if th.start_lo else none)[0] = 1.0
    lo_w, hi_w = 0, 0
    expected: list[float] = []  # terms, summed once at the end (math.fsum)
    accept: list[float] = []
    reject: list[float] = []
    for i in range(1, n + 1):
        live = none[lo_w : hi_w + 1] + up[lo_w : hi_w + 1] + down[lo_w : hi_w + 1]
        expected.append(float(live.sum()) * add * add)
        hi_w += 1
        for m in (none, up, down):
            m[lo_w + 1 : hi_w + 1] = (m[lo_w + 1 : hi_w + 1] * q + m[lo_w:hi_w] * x) * step
            m[lo_w] = m[lo_w] * q * step
        counts = np.arange(lo_w, hi_w + 1)
        out = (counts >= th.reject_hi[i - 1]) | (counts <= th.reject_lo[i - 1])
        for m in (none, up, down):
            window = m[lo_w : hi_w + 1]
            reject.append(float(window[out].sum()) * add * add)
            window[out] = 0.0
        new_lo = max(lo_w, int(th.reject_lo[i - 1]) + 1)
        lo_w, hi_w = new_lo, max(min(hi_w, int(th.reject_hi[i - 1]) - 1), new_lo - 1)
        if lo_w > hi_w:
            break
        kept = np.arange(lo_w, hi_w + 1)
        s_hi, s_lo = kept <= th.settle_hi[i - 1], kept >= th.settle_lo[i - 1]
        w_none, w_up, w_down = none[lo_w : hi_w + 1], up[lo_w : hi_w + 1], down[lo_w : hi_w + 1]
        done = float(w_none[s_hi & s_lo].sum() + w_up[s_lo].sum() + w_down[s_hi].sum())
        accept.append(done * add * add * add)
        w_up[s_lo] = 0.0
        w_down[s_hi] = 0.0
        w_up += np.where(s_hi & ~s_lo, w_none, 0.0) * step
        w_down += np.where(s_lo & ~s_hi, w_none, 0.0) * step
        w_up *= step
        w_down *= step
        w_none[s_hi | s_lo] = 0.0
    else:
        live = none + up + down
        inside = np.zeros(n + 2, dtype=bool)
        inside[max(th.low, 0) : max(th.high + 1, 0)] = True
        accept.append(float(live[inside].sum()) * add * add)
        reject.append(float(live[~inside].sum()) * add * add)
    return _sum(expected, sign), _sum(accept, sign), _sum(reject, sign)


def _sum(terms: list[float], sign: int) -> float:
    """The exact sum of ``terms`` rounded down (``sign = -1``) or up (``+1``).

    ``math.fsum`` is correctly rounded (within half a unit of the exact sum); one step
    outward covers it.
    """
    return float(np.nextafter(math.fsum(terms), sign * np.inf))


def interval_queries(test: SequentialTest, a: float, x: float) -> Enclosure:
    """V's expected samples and verdict probabilities at ``(a, x)``, enclosed (module doc).

    Raises:
        ProtocolError: ``x`` outside [0, 1].
    """
    if not 0 <= x <= 1:
        raise ProtocolError(f"the true probability must be in [0, 1], got {x!r}")
    if not 0 <= a <= 1:
        return Enclosure(a, x, (0.0, 0.0), (0.0, 0.0), (1.0, 1.0), test.n)
    th = thresholds(test, a)
    if th.start_hi and th.start_lo:
        return Enclosure(a, x, (0.0, 0.0), (1.0, 1.0), (0.0, 0.0), test.n)
    q_lo, q_hi = _one_minus(x)
    low = _dp(th, test.n, x, q_lo, -1)
    high = _dp(th, test.n, x, q_hi, +1)
    e, acc, rej = ((low[j], min(high[j], float(test.n) if j == 0 else 1.0)) for j in range(3))
    return Enclosure(a, x, e, acc, rej, test.n)


def _rule_key(th: Thresholds) -> bytes:
    arrays = (th.reject_hi, th.reject_lo, th.settle_hi, th.settle_lo)
    flags = np.array([th.start_hi, th.start_lo, th.low, th.high], dtype=np.int64)
    return b"".join(np.ascontiguousarray(v).tobytes() for v in (*arrays, flags))


@dataclass(frozen=True)
class Piece:
    """A run of honest estimates ``X / R`` that get the same rule from V.

    Attributes:
        first, last: the run's counts (``X`` from ``first`` to ``last``, all the same rule;
            runs of one rule that are not adjacent are separate pieces).
        mass: the Binomial probability of the run (scipy, double precision).
        outcome: V's enclosures at the run's first estimate (the same for every one).
    """

    first: int
    last: int
    mass: float
    outcome: Enclosure


def honest_pieces(test: SequentialTest, r: int, x: float, sds: float = 5.0) -> list[Piece]:
    """V at every honest estimate ``X / r`` within ``sds`` standard deviations of ``x``.

    Raises:
        ProtocolError: ``r`` not a positive integer or ``x`` outside (0, 1).
    """
    from scipy import stats  # imported here: it takes 0.4 s

    if isinstance(r, bool) or not isinstance(r, int) or r < 1 or not 0 < x < 1:
        raise ProtocolError(f"need a positive sample count and x in (0, 1), got {r!r}, {x!r}")
    sd = math.sqrt(r * x * (1 - x))
    lo, hi = max(0, math.floor(r * x - sds * sd)), min(r, math.ceil(r * x + sds * sd))
    pieces: list[Piece] = []
    start, key = lo, _rule_key(thresholds(test, lo / r))
    for count in range(lo + 1, hi + 2):
        nxt = _rule_key(thresholds(test, count / r)) if count <= hi else b""
        if nxt != key:
            mass = float(stats.binom.cdf(count - 1, r, x) - stats.binom.cdf(start - 1, r, x))
            pieces.append(Piece(start, count - 1, mass, interval_queries(test, start / r, x)))
            start, key = count, nxt
    return pieces


@dataclass(frozen=True)
class Disputed:
    """V in the sampled round when a liar B disputes an honest announcement.

    Attributes:
        x: the true probability; ``r``: honest A's sample count.
        sds: the estimates within this many standard deviations are solved exactly.
        covered: their Binomial mass (the rest is counted at V's extremes).
        expected: ``(low, high)`` around V's expected samples, averaged over A's estimate.
        accept: ``(low, high)`` around V's acceptance probability, averaged likewise.
        worst: the piece with the most expected samples (by its upper end).
        pieces: how many distinct rules V applies to the covered estimates.
        optimal_b_aborts: the covered mass on which an optimal B (minimizing acceptance,
            external coin: abort iff V's acceptance is below ``v0 + a (v1 - v0)``) might
            abort, with ``v0 = 0``, ``v1 = 1`` (a single query deciding the output).
        completeness: ``(low, high)`` around the value against that optimal B,
            ``E[min(V's acceptance, a)]`` (at most ``E[a] = x``).
    """

    x: float
    r: int
    sds: float
    covered: float
    expected: Interval
    accept: Interval
    worst: Piece
    pieces: int
    optimal_b_aborts: float
    completeness: Interval

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        w = self.worst
        return {"x": self.x, "r": self.r, "sds": self.sds, "covered": self.covered,
                "expected_queries": list(self.expected), "accept": list(self.accept),
                "worst_announcements": [w.first / self.r, w.last / self.r],
                "worst_expected_queries": list(w.outcome.expected), "pieces": self.pieces,
                "optimal_b_abort_mass": self.optimal_b_aborts,
                "completeness": list(self.completeness)}  # fmt: skip


def disputed_honest(test: SequentialTest, r: int, x: float, sds: float = 4.0) -> Disputed:
    """V's samples and acceptance when B disputes honest A's estimate (module docstring)."""
    pieces = honest_pieces(test, r, x, sds)
    covered = math.fsum(p.mass for p in pieces)
    rest = max(0.0, 1.0 - covered) * (1 + SUM)
    e_lo = math.fsum(p.mass * p.outcome.expected[0] for p in pieces) * (1 - SUM)
    e_hi = math.fsum(p.mass * p.outcome.expected[1] for p in pieces) * (1 + SUM) + rest * test.n
    a_lo = math.fsum(p.mass * p.outcome.accept[0] for p in pieces) * (1 - SUM)
    a_hi = math.fsum(p.mass * p.outcome.accept[1] for p in pieces) * (1 + SUM) + rest
    aborts = math.fsum(p.mass for p in pieces if p.outcome.accept[0] <= p.last / r)
    worst = max(pieces, key=lambda p: p.outcome.expected[1])
    value = math.fsum(p.mass * min(p.outcome.accept[0], p.first / r) for p in pieces) * (1 - SUM)
    return Disputed(x, r, sds, covered, (e_lo, e_hi), (a_lo, a_hi), worst, len(pieces), aborts,
                    (value, x))  # fmt: skip


@dataclass(frozen=True)
class LiarRound:
    """The exact optimal liar's announcement in one sampled round, and V there.

    Attributes:
        p: the true probability; ``v0``, ``v1``: the continuation values.
        announcement: the best announcement found.
        value: ``(low, high)`` around its value (V's acceptance of the claim from here).
        runner_up: the highest upper end of any other candidate's value (the best is the
            optimum when its low end is at least this).
        abort: honest B's abort probability at the announcement.
        v: V's enclosures at the announcement (its samples per aborted round).
        evaluated: how many announcements were solved exactly by the DP.
    """

    p: float
    v0: float
    v1: float
    announcement: float
    value: Interval
    runner_up: float
    abort: float
    v: Enclosure
    evaluated: int

    @property
    def certified(self) -> bool:
        """Whether the enclosures separate the best announcement from every other."""
        return self.value[0] >= self.runner_up

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"p": self.p, "v0": self.v0, "v1": self.v1, "announcement": self.announcement,
                "value": list(self.value), "runner_up_high": self.runner_up,
                "certified_optimal": self.certified, "b_abort": self.abort,
                "v": self.v.to_dict(), "evaluated": self.evaluated}  # fmt: skip


def _rule_changes(test: SequentialTest, lo: float, hi: float) -> list[float]:
    """The last float of each run of one V rule in ``(lo, hi]`` (bisection on float bits)."""
    ends, left = [], lo
    key_hi = _rule_key(thresholds(test, hi))
    while _rule_key(thresholds(test, left)) != key_hi:
        key = _rule_key(thresholds(test, left))
        a, b = np.float64(left).view(np.int64), np.float64(hi).view(np.int64)
        while b - a > 1:  # the rule at a is key; at b it differs
            mid = a + (b - a) // 2
            same = _rule_key(thresholds(test, float(np.int64(mid).view(np.float64)))) == key
            a, b = (mid, b) if same else (a, mid)
        ends.append(float(np.int64(a).view(np.float64)))
        left = float(np.int64(b).view(np.float64))
    return ends


def optimal_liar_round(test: SequentialTest, b_check: Check, p: float, v0: float, v1: float,
                       v_s: float) -> LiarRound:  # fmt: skip
    """The best announcement against honest B (``b_check``) and the sequential V.

    The value of announcing ``c`` is ``(1 - stay) acc + stay (v0 + c (v1 - v0))`` with
    ``stay = P[B passes c]`` and ``acc = P[V accepts c]``.  Both are step functions of
    ``c``; on each step the value is linear, so its supremum is at a step's end float.
    B's steps are :func:`._verdicts.breakpoints` (its Binomial support but for
    :data:`._verdicts.TAIL` per side).  A lower bound on every candidate's value takes
    ``acc >= 0``; an upper bound takes ``acc <= v_s`` when ``|c - p| > s`` (the tier's
    (F4), a written proof checked numerically) and ``acc <= 1`` otherwise.  Only the
    steps whose upper bound reaches the best lower bound are split further at V's own
    rule changes and solved by :func:`interval_queries`.
    """
    cands = np.unique(np.concatenate([[0.0, 1.0, p], breakpoints(b_check, p)]))
    stay = pass_probability(b_check, p, cands)
    go = stay * (v0 + cands * (v1 - v0))
    bound = np.where(np.abs(cands - p) > test.s, v_s, 1.0)
    upper = go + (1 - stay) * bound
    best_low = float(go.max())
    keep = np.flatnonzero(upper >= best_low)
    points: set[float] = set()
    for j in keep.tolist():
        points.add(float(cands[j]))
        if j > 0 and stay[j] < 1:
            points.update(_rule_changes(test, float(cands[j - 1]), float(cands[j])))
    cache: dict[bytes, Enclosure] = {}
    rows = []
    for c in sorted(points):
        key = _rule_key(thresholds(test, c))
        if key not in cache:
            cache[key] = interval_queries(test, c, p)
        acc = cache[key].accept
        s_c = float(pass_probability(b_check, p, np.array([c]))[0])
        g = s_c * (v0 + c * (v1 - v0))
        rows.append((g + (1 - s_c) * acc[0], g + (1 - s_c) * acc[1], c, s_c, cache[key]))
    rows.sort(key=lambda row: row[0], reverse=True)
    low, high, c, s_c, enc = rows[0]
    enc = replace(enc, a=c)
    others = [row[1] for row in rows[1:]]
    outside = np.delete(upper, keep)
    runner = max([*others, float(outside.max()) if outside.size else 0.0])
    return LiarRound(p, v0, v1, c, (low, high), runner, 1 - s_c, enc, len(cache))
