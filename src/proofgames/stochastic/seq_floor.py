"""A floor on any sequential V's expected queries, by a Lagrangian optimal-stopping DP.

The sequential tier asks two things of V in one aborted round at announcement ``a`` and
truth ``x`` (``docs/stochastic-sequential.md``): (F3) reject with probability at most
``v_c`` when ``|a - x| <= c``, and (F4) accept with probability at most ``v_s`` when
``|a - x| > s``.  Keep only three of those constraints, at ``a = x``: rejection at
``x`` itself, acceptance at ``x + s'`` and ``x - s'`` (any ``s' > s``).  For any test
(a stopping time ``N`` and a verdict, possibly randomized, possibly uncapped) and any
multipliers ``lam0, lam_up, lam_down >= 0``, a change of measure gives

    E_x[N] + lam0 P_x[reject] + lam_up P_up[accept] + lam_down P_down[accept]
        = E_x[N + lam0 1{reject} + (lam_up L_up + lam_down L_down) 1{accept}]
        >= W_0(0),

where ``L_up``, ``L_down`` are the likelihood ratios of the samples seen against ``x``
and ``W_i(k)`` is the least expected remaining cost of an optimal stopping problem in the
state "``i`` samples, ``k`` ones" (stop: the cheaper verdict; go on: one more sample).
With the constraints, ``E_x[N] >= W_0(0) - lam0 v_c - (lam_up + lam_down) v_s``
(weak duality: any multipliers give a floor; :func:`best_floor` searches for good ones).

``W`` is computed backward from a horizon ``H`` where the remaining cost is replaced by
``min(stop, 1)``, a lower bound on it (going on costs at least one more sample), so the
floor holds for every test, not only tests capped at ``H``.  The DP rounds every step
down (the likelihood ratios shrunk by a relative ``1e-9``, each continuation value by
``2^-50``, both more than the floating-point error they cover) and the last line is in
exact rational arithmetic: :func:`lagrangian_floor` is a lower bound, evaluated with
outward rounding.  **A written proof checked numerically, not machine-checked.**

:func:`family_floor` takes the floor over every constant set of the tight argument's
shape at a given K, w and d: soundness needs ``s < b <= (w - d / (1 - v_s)) / K`` and
completeness ``v_c < 1 - d / w``, so each interval ``[u, u']`` of ``v_s`` is covered by
one floor with ``v_s = u'``, ``s = (w - d / (1 - u)) / K`` and ``v_c = 1 - d / w``
(weaker constraints have a lower minimum).

Example:
    At the sequential tier's constants for K = 0.25, T = 10 (its V needs 52.05 samples at
    x = 1/2), with the multipliers :func:`best_floor` finds:

    >>> f = lagrangian_floor(0.5, 0.243256, 0.0999, 0.00941, (57.2, 474.4, 474.4), 300)
    >>> round(f, 1)
    42.6
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError

RATIO_SHRINK = 1 - 1e-9
"""Every likelihood ratio is multiplied by this before use (it covers the error of its
logarithm, a sum of at most ``H`` rounded terms, and of ``exp``)."""
STEP_SHRINK = 1 - 2.0**-50
"""Every continuation value is multiplied by this (it covers three roundings of 2^-53)."""
DEFAULT_HORIZON = 4_000
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Floor:
    """A floor on any V's expected samples at truth ``x`` for announcement ``a = x``.

    Attributes:
        floor: the lower bound (outward-rounded; a written proof checked numerically).
        x, s, v_c, v_s: the truth and the constants it is for.
        lam0, lam_up, lam_down: the multipliers it uses.
        horizon: the DP's horizon (the floor holds for every test, capped or not).
    """

    floor: float
    x: float
    s: float
    v_c: float
    v_s: float
    lam0: float
    lam_up: float
    lam_down: float
    horizon: int

    def to_dict(self) -> dict[str, Any]:
        """The floor and what it is for, JSON-friendly."""
        return {"floor": self.floor, "x": self.x, "s": self.s, "v_c": self.v_c,
                "v_s": self.v_s, "lam0": self.lam0, "lam_up": self.lam_up,
                "lam_down": self.lam_down, "horizon": self.horizon}  # fmt: skip


def _check(x: float, s: float, v_c: float, v_s: float, horizon: int) -> None:
    if not (s > 0 and x - s > 0 and x + s < 1):
        raise ProtocolError(f"need 0 < x - s < x + s < 1, got x = {x}, s = {s}")
    if not (0 < v_c < 1 and 0 < v_s < 1):
        raise ProtocolError(f"need v_c, v_s in (0, 1), got {v_c}, {v_s}")
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ProtocolError(f"the horizon must be a positive integer, got {horizon!r}")


def _stop_costs(i: int, x: float, s: float, lams: tuple[float, float, float],
                shrink: bool) -> FloatArray:  # fmt: skip
    """The cheaper verdict's cost in each state (``k = 0 .. i`` ones after ``i`` samples)."""
    lam0, lam_up, lam_down = lams
    k = np.arange(i + 1, dtype=np.float64)
    ratios = np.zeros(i + 1)
    for lam, y in ((lam_up, x + s), (lam_down, x - s)):
        one, zero = math.log(y / x), math.log((1 - y) / (1 - x))
        ratios = ratios + lam * np.exp(k * one + (i - k) * zero)
    if shrink:
        ratios = ratios * RATIO_SHRINK
    return np.minimum(lam0, ratios)


def _dp_value(x: float, s: float, lams: tuple[float, float, float], horizon: int,
              rigorous: bool) -> float:  # fmt: skip
    """``W_0(0)``: backward induction from the horizon (rounded down if ``rigorous``)."""
    w = np.minimum(_stop_costs(horizon, x, s, lams, rigorous), 1.0)
    for i in range(horizon - 1, -1, -1):
        go_on = 1.0 + (x * w[1 : i + 2] + (1 - x) * w[: i + 1])
        if rigorous:
            go_on = go_on * STEP_SHRINK
        w = np.minimum(_stop_costs(i, x, s, lams, rigorous), go_on)
    return float(w[0])


def lagrangian_floor(
    x: float, s: float, v_c: float, v_s: float, lams: tuple[float, float, float],
    horizon: int = DEFAULT_HORIZON,
) -> float:  # fmt: skip
    """The floor for multipliers ``lams = (lam0, lam_up, lam_down)`` (module docstring).

    Rounded down throughout; the last subtraction is exact (rationals), then rounded down.

    Raises:
        ProtocolError: constants out of range or a negative multiplier.
    """
    _check(x, s, v_c, v_s, horizon)
    if min(lams) < 0:
        raise ProtocolError(f"the multipliers must be nonnegative, got {lams}")
    value = Fraction(_dp_value(x, s, lams, horizon, rigorous=True))
    f = [Fraction(v) for v in lams]
    exact = value - f[0] * Fraction(v_c) - (f[1] + f[2]) * Fraction(v_s)
    low = float(exact)
    return low if Fraction(low) <= exact else float(np.nextafter(low, -np.inf))


def best_floor(s: float, v_c: float, v_s: float, *, x: float = 0.5,
               horizon: int = DEFAULT_HORIZON) -> Floor:  # fmt: skip
    """The floor at ``(s, v_c, v_s)`` and truth ``x``, multipliers by a Nelder-Mead search.

    The search uses the DP without the downward rounding; the floor returned is
    :func:`lagrangian_floor` at the multipliers found (any multipliers give a floor).

    Raises:
        ProtocolError: constants out of range.
    """
    from scipy.optimize import minimize  # imported here: scipy takes a while

    _check(x, s, v_c, v_s, horizon)
    symmetric = x == 0.5

    def lams_of(z: FloatArray) -> tuple[float, float, float]:
        up = math.exp(z[1])
        return math.exp(z[0]), up, up if symmetric else math.exp(z[2])

    def loss(z: FloatArray) -> float:
        lams = lams_of(z)
        return -(_dp_value(x, s, lams, horizon, False) - lams[0] * v_c
                 - (lams[1] + lams[2]) * v_s)  # fmt: skip

    n_guess = 2 * math.log(1 / v_s) / (s * s)  # about the scale of E[N]
    start = [math.log(n_guess), math.log(n_guess / v_s / 10)]
    found = minimize(loss, np.array(start if symmetric else start + start[1:]),
                     method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-3})  # fmt: skip
    lams = lams_of(found.x)
    return Floor(lagrangian_floor(x, s, v_c, v_s, lams, horizon), x, s, v_c, v_s, *lams, horizon)


@dataclass(frozen=True)
class FamilyFloor:
    """The least floor over every constant set of the tight argument's shape.

    Attributes:
        floor: the least of the cells' floors (a lower bound on any V of the shape).
        k, w, d: the Lipschitz constant and the targets.
        cells: one :class:`Floor` per interval of ``v_s`` (its ``v_s`` is the interval's
            top, its ``s`` the largest the interval's bottom allows).
        edges: the intervals' ends, from 0 to ``1 - d / w``.
        lowest: the cell with the least floor.
    """

    floor: float
    k: float
    w: float
    d: float
    cells: tuple[Floor, ...]
    edges: tuple[float, ...]

    @property
    def lowest(self) -> Floor:
        """The cell that sets the floor."""
        return min(self.cells, key=lambda f: f.floor)


def family_floor(k: float, *, w: float = 2 / 3, d: float = 3 / 5, x: float = 0.5,
                 edges: tuple[float, ...] | None = None,
                 horizon: int = DEFAULT_HORIZON) -> FamilyFloor:  # fmt: skip
    """The floor over every ``(c, s, v_c, v_s)`` the tight argument allows (module docstring).

    ``edges``: the ends of the ``v_s`` intervals, increasing from 0 to below ``1 - d / w``
    (the top interval runs to ``1 - d / w``); by default 0 then 40 points spaced
    geometrically from 10^-4.

    Raises:
        ProtocolError: ``w <= d``, ``K <= 0`` or edges that do not cover the range.
    """
    if not (0 < d < w <= 1 and k > 0):
        raise ProtocolError(f"need 0 < d < w <= 1 and K > 0, got w = {w}, d = {d}, K = {k}")
    top = 1 - d / w
    if edges is None:
        edges = (0.0, *np.geomspace(1e-4, top, 41)[:-1].tolist())
    if edges[0] != 0 or any(b <= a for a, b in itertools.pairwise(edges)) or edges[-1] >= top:
        raise ProtocolError(f"edges must rise from 0 to below 1 - d/w = {top:g}")
    ends = (*edges, top)
    cells = []
    for lo, hi in itertools.pairwise(ends):
        s = (w - d / (1 - lo)) / k
        cells.append(best_floor(s, top, hi, x=x, horizon=horizon))
    return FamilyFloor(min(c.floor for c in cells), k, w, d, tuple(cells), tuple(edges))


def ideal_fixed_n(
    k: float, *, w: float = 2 / 3, d: float = 3 / 5, grid: tuple[float, ...] | None = None
) -> tuple[int, float, float]:
    """The fewest fixed-``n`` V queries the tight argument allows with ideal provers.

    Ideal provers: ``c -> 0``, ``q_a, q_b -> 0``, so ``v_c -> 1 - d / w`` and ``s -> (w -
    d / (1 - v_s)) / K``; for each ``v_s`` on ``grid`` the tight tier's search
    (:func:`.tight._smallest_n`, double precision) gives the smallest ``n`` whose two tails
    fit.  Returns ``(n, v_s, s)`` at the grid minimum (a grid optimum of limits that no
    real set attains; the issue's "about 1,100").
    """
    from .tight import _smallest_n

    if not (0 < d < w <= 1 and k > 0):
        raise ProtocolError(f"need 0 < d < w <= 1 and K > 0, got w = {w}, d = {d}, K = {k}")
    top = 1 - d / w
    points = grid if grid is not None else tuple(np.geomspace(2e-3, top / 2, 25).tolist())
    best: tuple[int, float, float] | None = None
    for v_s in points:
        s = (w - d / (1 - v_s)) / k
        found = _smallest_n(s, top, v_s) if s > 0 else None
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], v_s, s)
    if best is None:
        raise ProtocolError("no fixed-n V on the grid meets the tails")
    return best
