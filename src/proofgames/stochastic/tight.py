"""The tight tier: V's completeness and soundness errors bounded separately.

The Lean argument bounds V's error by one probability ``v``, used twice: for completeness
(V wrongly rejects an announcement within ``c`` of the truth: a two-sided tail) and for
soundness (V wrongly accepts one more than ``s`` off: only a one-sided tail).  Bounding
the two separately, ``v_c`` and ``v_s``, with exact binomial tails and V's threshold
``theta`` anywhere between ``c`` and ``s``, the same protocol (external coin, B decides
before it, V samples only on an abort) needs far fewer V queries.  The argument is
written out in ``docs/stochastic-tight.md``; it is **not machine-checked**.  What it
needs of a parameter set is :func:`tight_conditions`, every one an inequality between
rationals decided exactly (the tails by :func:`~.tail_bounds.certify_tail`):

* order: ``0 < c < theta < s < theta_B < b``, ``K b <= w``, ``0 < v_c, v_s < 1``,
  ``q_a T < 1``, ``q_b T < 1``, ``0 < d``;
* A's and B's counts are at least Hoeffding's (certified) for errors ``c`` and
  ``min(theta_B - s, b - theta_B)`` with failure ``q_a``, ``q_b``;
* ``T2(n_V, theta - c) <= v_c`` and ``T1(n_V, s - theta) <= v_s``;
* completeness ``d <= (1 - v_c)(w - K c - q_a T)`` and soundness
  ``d <= (1 - v_s)(1 - q_b T)(w - K b)``.

:func:`optimize_tight` searches them: ``q_a`` and ``c`` to leave completeness the most
room, ``v_s`` over a fine grid with the ``q_b`` and ``b`` best for it, then the smallest
``n_V`` its search finds for which some ``theta`` meets both tails (bisection on ``n``
and a downward scan: a search result, not a proven minimum), and accepts the set only if
every condition holds in exact arithmetic.

Example:
    >>> r = optimize_tight(1.0, 10)
    >>> r.params.v_samples <= 1200, all(c.holds for c in tight_conditions(r.params))
    (True, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..errors import ProtocolError
from .optimize import Condition, OptimizedParams, _check_inputs, _round_grid
from .params import EXTERNAL, PRESETS, StochasticParams, _check_k_t
from .tail_bounds import certify_tail, tail_float
from .tails import TIER_BACKING, certified_hoeffding

NAME = "optimized-tight"
V_TAIL_LABEL = (
    "exact binomial tails, two-sided for completeness and one-sided for soundness, "
    "certified in exact rational arithmetic (not machine-checked)"
)
SCAN_DOWN = 24
"""How many counts below the bisection's ``n_V`` are also tried (the condition is not
monotone in ``n``)."""
SEARCH_MARGIN = 1e-6
"""The search asks each double-precision tail to be within ``(1 - this)`` of its bound."""
METHOD = (
    "search: q_a, c for the most completeness room; v_s over a grid (3 significant digits) "
    "with the best q_b, b; the smallest n_V found by bisection and a downward scan of "
    f"{SCAN_DOWN} (not a proven minimum); every condition then checked in exact arithmetic"
)


def _cond(name: str, lhs: Fraction | int, op: str, rhs: Fraction | int) -> Condition:
    lhs, rhs = Fraction(lhs), Fraction(rhs)
    return Condition(name, lhs, op, rhs, lhs < rhs if op == "<" else lhs <= rhs)


def tight_conditions(p: StochasticParams) -> list[Condition]:
    """Every condition of the tight argument for ``p``, each decided exactly.

    The values are the rationals the floats hold.  The tail conditions are skipped
    (reported as failing) when an order condition they rely on fails.

    Raises:
        ProtocolError: ``p`` is not a set of the tight tier.
    """
    if p.tight is None:
        raise ProtocolError(f"{p.name} is not a set of the tight tier (no tight constants)")
    f = {key: Fraction(value) for key, value in p.tight.items()}
    k, t = Fraction(p.k), p.steps
    c, s, b, w, d = f["c"], f["s"], f["b"], f["w"], f["d"]
    theta, theta_b = Fraction(p.v_threshold), Fraction(p.b_threshold)
    order = [
        _cond("0 < c", 0, "<", c), _cond("c < theta_V", c, "<", theta),
        _cond("theta_V < s", theta, "<", s), _cond("s < theta_B", s, "<", theta_b),
        _cond("theta_B < b", theta_b, "<", b), _cond("K b <= w", k * b, "<=", w),
        _cond("0 < d", 0, "<", d), _cond("0 < v_c", 0, "<", f["v_c"]),
        _cond("v_c < 1", f["v_c"], "<", 1), _cond("0 < v_s", 0, "<", f["v_s"]),
        _cond("v_s < 1", f["v_s"], "<", 1), _cond("0 < q_a", 0, "<", f["q_a"]),
        _cond("q_a T < 1", f["q_a"] * t, "<", 1), _cond("0 < q_b", 0, "<", f["q_b"]),
        _cond("q_b T < 1", f["q_b"] * t, "<", 1),
    ]  # fmt: skip
    out = list(order)
    if not all(x.holds for x in order):
        return out
    e_b = min(theta_b - s, b - theta_b)
    out += [
        _cond("A's samples >= Hoeffding(c, q_a)", certified_hoeffding(c, f["q_a"]), "<=",
              p.a_samples),
        _cond("B's samples >= Hoeffding(min(theta_B - s, b - theta_B), q_b)",
              certified_hoeffding(e_b, f["q_b"]), "<=", p.b_samples),
    ]  # fmt: skip
    for name, eps, delta, two in (
        ("V's completeness tail T2(n_V, theta_V - c) <= v_c", theta - c, f["v_c"], True),
        ("V's soundness tail T1(n_V, s - theta_V) <= v_s", s - theta, f["v_s"], False),
    ):
        check = certify_tail(p.v_samples, eps, delta, two_sided=two)
        # worst is an upper bound on the tail when the check passes, and above delta if not
        out.append(Condition(name, check.worst, "<=", delta, check.ok))
    out += [
        _cond("completeness: d <= (1 - v_c)(w - K c - q_a T)", d, "<=",
              (1 - f["v_c"]) * (w - k * c - f["q_a"] * t)),
        _cond("soundness: d <= (1 - v_s)(1 - q_b T)(w - K b)", d, "<=",
              (1 - f["v_s"]) * (1 - f["q_b"] * t) * (w - k * b)),
    ]  # fmt: skip
    return out


def _err_min(q: np.ndarray, cap: int) -> np.ndarray:
    """The smallest error whose Hoeffding count at failure ``q`` is within ``cap``."""
    return np.asarray(np.sqrt(np.log(2 / q) / (2 * cap)) * (1 + 1e-9))


def _ceil3(x: float) -> float:
    """``x`` rounded up to 3 significant digits."""
    e = math.floor(math.log10(x)) - 2
    return float(f"{math.ceil(x / 10.0**e * (1 - 1e-12)) * 10.0**e:.3g}")


def _floor_sig(x: float, digits: int) -> float:
    """``x`` rounded down to ``digits`` significant digits."""
    e = math.floor(math.log10(x)) - digits + 1
    return float(f"{math.floor(x / 10.0**e * (1 + 1e-12)) * 10.0**e:.{digits}g}")


def _q_grid(steps: int) -> np.ndarray:
    return _round_grid(1e-18, 0.5 / steps)


@lru_cache(maxsize=16)
def _errors(t: int, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The failure grid and, for each, the smallest error within the cap (3 digits, up)."""
    q = _q_grid(t)
    return q, np.array([_ceil3(x) for x in _err_min(q, cap)])


def _completeness_side(k: float, t: int, w: float, d: float, cap: int) -> tuple[float, float]:
    """``(q_a, c)`` leaving completeness the most room ``w - K c - q_a T``."""
    q, c = _errors(t, cap)
    room = w - k * c - q * t
    i = int(np.argmax(room))
    if not room[i] > d:
        raise ProtocolError(
            f"no tight set at K = {k:g}, T = {t}: with at most {cap:,} samples per round "
            f"honest A's error is at least c = {c[i]:.3g}, so w - K c - q_a T = {room[i]:.4g} "
            f"is not above d = {d:g} (completeness fails for every V); raise the cap or "
            "lower K"
        )
    return float(q[i]), float(c[i])


def _soundness_side(
    k: float, t: int, w: float, d: float, cap: int, v_s: float
) -> tuple[float, float, float] | None:
    """``(q_b, b, s)`` with the largest ``s`` for V's soundness error ``v_s`` (or ``None``)."""
    q, e_b = _errors(t, cap)
    b = (w - d / ((1 - v_s) * (1 - q * t))) / k
    s = b - 2 * e_b
    i = int(np.argmax(s))
    if not s[i] > 0:
        return None
    b_i = _floor_sig(float(b[i]), 4)
    return float(q[i]), b_i, _floor_sig(b_i - 2 * float(e_b[i]), 6)


def _eps_needed(n: int, v: float, two_sided: bool, guess: float) -> float:
    """The smallest ``eps`` (to 1e-7 relative) with the tail at most ``v (1 - margin)``.

    Bisection, bracketed around ``guess``; tails are pruned at the target (the decision
    "at most the target" is the same).
    """
    target = v * (1 - SEARCH_MARGIN)

    def ok(eps: float) -> bool:
        return eps < 1 and tail_float(n, Fraction(eps), two_sided, target) <= target

    lo, hi = guess * 0.97, guess * 1.03
    while not ok(hi):
        lo, hi = hi, hi * 1.2
        if hi >= 1:
            return math.inf
    while lo > 1e-12 and ok(lo):
        lo, hi = lo * 0.8, lo
    while hi - lo > 1e-7 * hi:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _feasible(n: int, gap: float, v_c: float, v_s: float) -> tuple[float, float] | None:
    """``(eps_c, eps_s)`` when both tails fit in ``gap = s - c`` at ``n``, else ``None``."""
    from scipy import special

    scale = 1 / (2 * math.sqrt(n))
    e_c = _eps_needed(n, v_c, True, float(special.ndtri(1 - v_c / 2)) * scale)
    e_s = _eps_needed(n, v_s, False, float(special.ndtri(1 - v_s)) * scale)
    return (e_c, e_s) if e_c + e_s <= gap * (1 - 1e-9) else None


def _normal_n(gap: float, v_c: float, v_s: float) -> float:
    from scipy import special

    z = special.ndtri(1 - v_c / 2) + special.ndtri(1 - v_s)
    return float((z / (2 * gap)) ** 2)


def _smallest_n(gap: float, v_c: float, v_s: float) -> tuple[int, float, float] | None:
    """The smallest feasible ``n_V`` the search finds (bisection, then a downward scan)."""
    lo = max(1, int(0.8 * _normal_n(gap, v_c, v_s)))
    hi = lo + lo // 2 + 2
    while _feasible(hi, gap, v_c, v_s) is None:
        lo, hi = hi, 2 * hi
        if hi > 2**22:
            return None
    while lo > 1 and _feasible(lo, gap, v_c, v_s) is not None:
        lo, hi = lo // 2, lo
    while hi - lo > 1:  # lo infeasible (or 1), hi feasible
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _feasible(mid, gap, v_c, v_s) is not None else (mid, hi)
    best = hi
    for n in range(hi - 1, max(0, hi - 1 - SCAN_DOWN), -1):
        if _feasible(n, gap, v_c, v_s) is not None:
            best = n
    found = _feasible(best, gap, v_c, v_s)
    assert found is not None
    return best, found[0], found[1]


def _theta(low: float, high: float) -> float:
    """A short decimal in ``[low, high]`` (the middle if none is shorter)."""
    for digits in range(2, 12):
        x = float(f"{(low + high) / 2:.{digits}g}")
        if low <= x <= high:
            return x
    return (low + high) / 2


def _v_s_grid() -> list[float]:
    return sorted({_floor_sig(float(x), 3) for x in np.geomspace(1e-4, 0.3, 600)})


def _build(
    k: float, t: int, w: float, d: float, side_a: tuple[float, float],
    side_b: tuple[float, float, float], v: tuple[float, float], n_v: int, theta: float,
) -> StochasticParams:  # fmt: skip
    (q_a, c), (q_b, b, s), (v_c, v_s) = side_a, side_b, v
    theta_b = (s + b) / 2
    e_b = min(Fraction(theta_b) - Fraction(s), Fraction(b) - Fraction(theta_b))
    n_a = certified_hoeffding(Fraction(c), Fraction(q_a))
    n_b = certified_hoeffding(e_b, Fraction(q_b)) if e_b > 0 else 2**62
    tight = {"c": c, "s": s, "b": b, "q_a": q_a, "q_b": q_b, "v_c": v_c, "v_s": v_s,
             "w": w, "d": d}  # fmt: skip
    return StochasticParams(
        NAME, float(k), t, n_a, n_b, n_v, theta_b, theta, EXTERNAL,
        completeness_target=d, soundness_target=1 - d,
        tails={"A": "hoeffding", "B": "hoeffding", "V": V_TAIL_LABEL}, tight=tight,
    )  # fmt: skip


@dataclass(frozen=True)
class _Candidate:
    approx: float
    v_s: float
    side_b: tuple[float, float, float]


def _candidates(k: float, t: int, w: float, d: float, cap: int, c: float, v_c: float
                ) -> list[_Candidate]:  # fmt: skip
    """The ``v_s`` grid points with a soundness side, best (normal approximation) first."""
    out = []
    for v_s in _v_s_grid():
        side_b = _soundness_side(k, t, w, d, cap, v_s)
        if side_b is not None and side_b[2] > c:
            out.append(_Candidate(_normal_n(side_b[2] - c, v_c, v_s), v_s, side_b))
    if not out:
        raise ProtocolError(
            f"no tight set at K = {k:g}, T = {t}: with at most {cap:,} prover samples per "
            f"round, soundness leaves no room between A's error c = {c:.3g} and B's threshold "
            f"(K b <= w - d/((1 - v_s)(1 - q_b T)) with b - 2 e_B > c for no v_s); raise the "
            "cap or lower K"
        )
    return sorted(out, key=lambda x: x.approx)


def optimize_tight(
    k: float, steps: int, *, w: float = 2 / 3, d: float = 3 / 5, max_prover_samples: int = 10**8
) -> OptimizedParams:
    """The tight tier's set with the fewest V queries the search finds (module docstring).

    Raises:
        ProtocolError: a bad input, or a target the cap cannot meet (naming which side
            fails: completeness or soundness).
    """
    start = time.perf_counter()
    _check_k_t(k, steps)
    _check_inputs(w, d, max_prover_samples, "tight", None)
    k, cap = float(k), max_prover_samples
    side_a = _completeness_side(k, steps, w, d, cap)
    v_c = _floor_sig(1 - d / (w - k * side_a[1] - side_a[0] * steps), 4)
    candidates = _candidates(k, steps, w, d, cap, side_a[1], v_c)
    tries = 2 if candidates[0].approx <= 10_000 else 1
    best: tuple[StochasticParams, list[Condition]] | None = None
    for cand in candidates[:tries]:
        s = cand.side_b[2]
        found = _smallest_n(s - side_a[1], v_c, cand.v_s)
        if found is None or (best is not None and found[0] >= best[0].v_samples):
            continue
        n_v, e_c, e_s = found
        theta = _theta(side_a[1] + e_c, s - e_s)
        for extra in range(3):  # the search is in double precision: confirm exactly
            p = _build(k, steps, w, d, side_a, cand.side_b, (v_c, cand.v_s), n_v + extra, theta)
            if max(p.a_samples, p.b_samples) > cap:
                break
            conditions = tight_conditions(p)
            if all(x.holds for x in conditions):
                best = (p, conditions)
                break
    if best is None:
        raise ProtocolError(
            f"no tight set at K = {k:g}, T = {steps} with w = {w:g}, d = {d:g} and at most "
            f"{cap:,} prover samples per round passed the exact check"
        )
    p, conditions = best
    return OptimizedParams(p, w, d, "tight", cap, None, float(p.v_samples),
                           time.perf_counter() - start, tuple(conditions), METHOD)  # fmt: skip


@lru_cache(maxsize=32)
def _preset(k: float, steps: int) -> StochasticParams:
    return optimize_tight(k, steps).params


def tight_preset(k: float, steps: int) -> StochasticParams:
    """The ``optimized-tight`` preset: the tight tier at (K, T), default w, d and cap."""
    _check_k_t(k, steps)
    return _preset(float(k), steps)


PRESETS[NAME] = tight_preset
BACKING = TIER_BACKING["tight"]
