"""A sequential V: stop sampling once the verdict is settled (curtailed sampling).

On an abort, V draws ``n`` samples and rejects A's announcement ``a`` iff its estimate is
at least ``theta`` away: it accepts iff the count of ones ``X`` lies in an interval of
integers ``[low, high]`` (``low = floor(n (a - theta)) + 1``, ``high = ceil(n (a +
theta)) - 1``, in exact arithmetic).  Drawing the samples one at a time, V can stop as
soon as the remaining samples cannot change that verdict:

* reject once ``x > high`` (too many ones already) or ``x + (n - i) < low`` (too few
  can still come), after ``i`` samples with ``x`` ones;
* accept once ``x >= low`` and ``x + (n - i) <= high``.

Every sample path gets the same verdict as the fixed-``n`` V, so the protocol's
guarantees are unchanged (an argument, not machine-checked; it ignores floating-point
ties in the protocol's own comparison), and the worst case is still ``n`` queries.  The
expected number of queries at a true probability ``p`` is computed exactly here
(:func:`curtailed_queries`) by dynamic programming over ``(i, x)``.  The saving is
large when V rejects a far-off announcement and small when it accepts: acceptance is
settled only after ``n - (high - low)``, about ``n (1 - 2 theta)``, samples.

This is an analysis, not part of the simulated protocol: ``debate`` and ``estimate`` count
V's fixed ``n``.

Example:
    >>> r = curtailed_queries(100, 0.5, 0.1, 0.9)
    >>> r.worst_case, round(r.expected)
    (100, 68)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import ProtocolError


@dataclass(frozen=True)
class CurtailedV:
    """Expected and worst-case queries of the curtailed V at one true probability.

    Attributes:
        n: the fixed-``n`` V's sample count (the worst case).
        low, high: V accepts iff the count of ones is in ``[low, high]``.
        p: the true probability of a one.
        expected: the exact expected number of samples drawn.
        accept: the probability that V accepts (the same as the fixed-``n`` V's).
    """

    n: int
    low: int
    high: int
    p: float
    expected: float
    accept: float

    @property
    def worst_case(self) -> int:
        """The most samples the curtailed V can draw: ``n``."""
        return self.n


def acceptance_interval(n: int, announced: float, threshold: float) -> tuple[int, int]:
    """``[low, high]``: the counts of ones for which ``|x/n - announced| < threshold``."""
    a, t = Fraction(announced), Fraction(threshold)
    return math.floor(n * (a - t)) + 1, math.ceil(n * (a + t)) - 1


def curtailed_queries(n: int, announced: float, threshold: float, p: float) -> CurtailedV:
    """The curtailed V's exact expected queries and acceptance probability at ``p``.

    Raises:
        ProtocolError: ``n < 1``, ``threshold <= 0``, or ``p`` or ``announced`` outside
            [0, 1].
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ProtocolError(f"n must be a positive integer, got {n!r}")
    if not threshold > 0 or not 0 <= p <= 1 or not 0 <= announced <= 1:
        raise ProtocolError(
            f"need threshold > 0 and p, announced in [0, 1], got {threshold}, {p}, {announced}"
        )
    low, high = acceptance_interval(n, announced, threshold)
    x = np.arange(n + 1)
    running = np.zeros(n + 1)
    running[0] = 1.0  # P[still sampling after i samples, with x ones]
    expected, accept = 0.0, 0.0
    for i in range(n + 1):
        left = n - i
        rejected = (x > high) | (x + left < low)
        accepted = ~rejected & (x >= low) & (x + left <= high)
        accept += float(running[accepted].sum())
        running[rejected | accepted] = 0.0
        if i == n:
            break
        expected += float(running.sum())  # every path still running draws sample i + 1
        running = np.concatenate(([0.0], running[:-1])) * p + running * (1 - p)
    return CurtailedV(n, low, high, p, expected, accept)
