"""Stochastic-debate parameters that minimize the verifier's oracle queries (human judgements).

The Lean theorem holds for every ``Params (w d k t)`` meeting its conditions
(:mod:`.params`), and V's worst-case queries are its sample count on an abort,
``samples((s - c)/2, v)``.  A's and B's samples (``samples(c, q)``, ``samples((b - s)/2, q)``
per round) come from the provers' own model of the oracle: cheap, but capped here by
``max_prover_samples``.  For fixed ``v`` and ``q`` the best set is explicit:

* ``b`` as large as the soundness condition allows, ``K b = w - d / ((1 - v)(1 - q T))``
  (and ``K b <= w``);
* ``c`` and B's error ``(b - s)/2`` as small as the cap allows (V's error is
  ``(b - 2 (b - s)/2 - c)/2``), within the completeness condition ``K c <= w - q T -
  d/(1 - v)``.

So :func:`optimize_params` searches ``v`` and ``q`` over a grid of round numbers
(:data:`ROUND_MANTISSAS` times powers of ten) -- with a ``prover_weight`` it also searches
``c`` and B's error and minimizes ``V + prover_weight * T * (A + B)`` instead -- rounds the
continuous values to 4 significant digits in the safe direction, and accepts a candidate
only if :func:`~.params.lean_params` (the validator custom JSON parameters go through)
passes it in exact arithmetic with certified counts.  The result is a **grid optimum**: the
best over that grid, not a continuous optimum.

Two tiers (``tail``): ``"hoeffding"`` (the Lean theorem's counts: the result is covered by
the machine-checked proof) and ``"exact"`` (exact binomial tails, :mod:`.tails`; *not
machine-checked*).  In the exact tier the search ranks candidates by a normal
approximation of the exact count and computes the exact count for the best few; the
scan takes about a second at K = 2 and a minute at K = 5 (T = 10), and beyond
:data:`~.tails.SCAN_LIMIT` the count stays Hoeffding's, labelled so.

The sets are registered as the ``--params`` presets ``optimized`` and ``optimized-exact``
(derived for the machine's K and T with the defaults below).

Example:
    >>> r = optimize_params(1.0, 10)
    >>> r.params.v_samples <= 3000, r.params.a_samples <= DEFAULT_MAX_PROVER_SAMPLES
    (True, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import ProtocolError
from .params import PRESETS, StochasticParams, _check_k_t, _real, lean_params
from .tails import EXACT_LABEL, HOEFFDING_LABEL, SCAN_LIMIT, TIER_BACKING

DEFAULT_MAX_PROVER_SAMPLES = 10**8
"""Default cap on A's and on B's samples per round."""
ROUND_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
"""Mantissas of the grid values of v and q (and of c and B's error with a prover weight)."""
CANDIDATES_EXACT = 3
"""Candidates (best by the normal approximation) whose exact-tail count is computed, when
V's Hoeffding count is at most :data:`QUICK_SCAN` (else only the best)."""
QUICK_SCAN = 10_000
TIERS = ("hoeffding", "exact", "tight")
"""The tiers :func:`optimize_params` offers (``tight``: :mod:`.tight`)."""
METHOD = (
    "grid optimum: v and q over round numbers (mantissas 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 "
    "times powers of ten); b, s, c the best for each, rounded to 4 significant digits in the "
    "safe direction"
)


@dataclass(frozen=True)
class Condition:
    """One inequality a parameter set must meet, decided in exact rational arithmetic.

    Attributes:
        name: what it is (``"soundness"``, ``"V's soundness tail"``, ...).
        lhs, op, rhs: the inequality ``lhs op rhs`` (``op`` is ``"<"`` or ``"<="``).
        holds: whether it holds.
    """

    name: str
    lhs: Fraction
    op: str
    rhs: Fraction
    holds: bool


@dataclass(frozen=True)
class OptimizedParams:
    """An optimized parameter set and how it was found.

    Attributes:
        params: the validated parameters (from :func:`~.params.lean_params`).
        w, d: the theorem's thresholds the set was optimized for.
        tail: ``"hoeffding"`` or ``"exact"``.
        max_prover_samples: the cap on A's and B's samples per round.
        prover_weight: ``None`` (minimize V's queries) or the weight of prover samples.
        objective: the minimized cost (V's queries, or the weighted cost).
        seconds: the optimizer's wall time.
        conditions: for the ``tight`` tier, every condition of its argument as checked
            in exact arithmetic (:func:`~.tight.tight_conditions`); empty otherwise.
        method: how the set was searched for.
    """

    params: StochasticParams
    w: float
    d: float
    tail: str
    max_prover_samples: int
    prover_weight: float | None
    objective: float
    seconds: float
    conditions: tuple[Condition, ...] = ()
    method: str = METHOD

    @property
    def backed_by(self) -> str:
        """What backs the set's guarantee (:data:`~.tails.TIER_BACKING`)."""
        return TIER_BACKING[self.tail]

    @property
    def certified_by(self) -> str:
        """What vouches for the set: the exact check, and which tail bound."""
        if self.tail == "tight":
            held = sum(c.holds for c in self.conditions)
            return (f"the tight argument's {len(self.conditions)} conditions checked in exact "
                    f"rational arithmetic ({held} hold; tight.tight_conditions)")  # fmt: skip
        check = "Lean Params conditions checked in exact rational arithmetic (lean_params)"
        if self.tail == "exact":
            return f"{check}; sample counts: {EXACT_LABEL} where the scan ran, else Hoeffding"
        return f"{check}; certified Hoeffding counts: {HOEFFDING_LABEL}"

    def params_file(self) -> dict[str, Any]:
        """The ``--params`` JSON file form (:func:`~.params.load_params_file`).

        Raises:
            ProtocolError: a tight set (its constants are not Lean's ``Params``; use the
                ``optimized-tight`` preset).
        """
        if self.params.lean is None:
            raise ProtocolError(
                "a tight set has no --params file form (its constants are not Lean's "
                "c, s, b, q, v); use --params optimized-tight"
            )
        return {**self.params.lean, "tail": self.tail}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: the values, the counts, and how they are vouched for."""
        p = self.params
        values = p.lean if p.lean is not None else p.tight
        assert values is not None
        extra: dict[str, Any] = {}
        if self.tail == "tight":
            extra = {"theta_v": p.v_threshold, "theta_b": p.b_threshold,
                     "conditions": [{"condition": c.name, "lhs": float(c.lhs), "op": c.op,
                                     "rhs": float(c.rhs), "holds": c.holds}
                                    for c in self.conditions]}  # fmt: skip
        return {
            "name": p.name, "k": p.k, "t": p.steps, **values, **extra,
            "a_samples": p.a_samples, "b_samples": p.b_samples, "v_samples": p.v_samples,
            "tail": self.tail, "tails": p.tails or {x: "hoeffding" for x in "ABV"},
            "backed_by": self.backed_by, "certified_by": self.certified_by,
            "method": self.method,
            "objective": "V queries" if self.prover_weight is None
            else f"V queries + {self.prover_weight:g} * T * (A + B samples per round)",
            "cost": self.objective, "max_prover_samples": self.max_prover_samples,
            "seconds": self.seconds,
        }  # fmt: skip


def _round_grid(low: float, high: float) -> np.ndarray:
    """Round numbers (:data:`ROUND_MANTISSAS` x 10^e) in ``[low, high]``."""
    if not high >= low:
        return np.zeros(0)
    e0, e1 = math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1
    vals = [m * 10.0**e for e in range(e0, e1 + 1) for m in ROUND_MANTISSAS]
    return np.array(sorted({float(f"{x:.3g}") for x in vals if low <= x <= high}))


def _round(x: float, up: bool, digits: int = 4) -> float:
    """``x`` to ``digits`` significant digits, rounded up or down (as a decimal)."""
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    r = (math.ceil if up else math.floor)(x * scale * (1 - 1e-12 if up else 1 + 1e-12)) / scale
    return float(f"{r:.{digits}g}")


def _v_count(eps: np.ndarray, v: np.ndarray, tail: str) -> np.ndarray:
    """V's count by Hoeffding, or a normal approximation of the exact tail's (ranking only)."""
    from scipy import special

    hoeffding = np.log(2 / v) / (2 * eps**2)
    if tail != "exact":
        return np.asarray(hoeffding)
    approx = (special.ndtri(1 - v / 2) / (2 * eps)) ** 2
    return np.asarray(np.where(hoeffding <= SCAN_LIMIT, approx, hoeffding))


def _grid_costs(
    k: float,
    t: int,
    w: float,
    d: float,
    g: dict[str, np.ndarray],
    tail: str,
    weight: float | None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Costs of the grid points ``g`` (v, q, c, e_b) that meet the conditions, and b."""
    v, q, c, e_b = g["v"], g["q"], g["c"], g["e_b"]
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.minimum(w - d / ((1 - v) * (1 - q * t)), w) / k
    c_max = (w - q * t - d / (1 - v)) / k
    eps_v = (b - 2 * e_b - c) / 2
    ok = (q * t < 1) & (b > 0) & (c <= c_max) & (eps_v > 0)
    kept = {key: a[ok] for key, a in {**g, "b": b}.items()}
    cost = _v_count(eps_v[ok], kept["v"], tail)
    if weight is not None:
        cost = cost + weight * t * np.log(2 / kept["q"]) / 2 * (
            1 / kept["c"] ** 2 + 1 / kept["e_b"] ** 2
        )
    return cost, kept


def _candidates(
    k: float, t: int, w: float, d: float, cap: int, tail: str, weight: float | None
) -> list[tuple[float, dict[str, float]]]:
    """Grid points (cost, values) meeting the conditions, best first (floats; unrounded)."""
    v, q = (a.ravel() for a in np.meshgrid(_round_grid(1e-5, 0.5), _round_grid(1e-18, 0.5 / t),
                                           indexing="ij"))  # fmt: skip
    v, q = v[q <= v], q[q <= v]
    e_min = np.sqrt(np.log(2 / q) / (2 * cap)) * (1 + 1e-9)  # smallest errors within the cap
    errors = [None] if weight is None else list(_round_grid(1e-6, 0.2))
    costs, points = [], []
    for c_value in errors:  # with a prover weight: every c, and every B error per c
        if c_value is None:
            g = {"v": v, "q": q, "c": e_min, "e_b": e_min}
        else:
            e_b = np.array(errors, dtype=np.float64)
            g = {key: np.repeat(a, e_b.size) for key, a in (("v", v), ("q", q), ("m", e_min))}
            g["e_b"], g["c"] = np.tile(e_b, v.size), np.full(v.size * e_b.size, c_value)
            keep = (g["c"] >= g["m"]) & (g["e_b"] >= g["m"])
            g = {key: a[keep] for key, a in g.items() if key != "m"}
        cost, kept = _grid_costs(k, t, w, d, g, tail, weight)
        top = np.argsort(cost, kind="stable")[:64]
        costs.append(cost[top])
        points += [{key: float(a[i]) for key, a in kept.items()} for i in top]
    flat = np.concatenate(costs)
    order = np.argsort(flat, kind="stable")[:64]
    return [(float(flat[i]), points[i]) for i in order]


def _v_hoeffding(k: float, t: int, w: float, d: float, cap: int) -> float:
    """V's Hoeffding count at the best grid point (the size of an exact-tail scan)."""
    best = _candidates(float(k), t, w, d, cap, "hoeffding", None)
    return best[0][0] if best else 0.0


def _validated(
    k: float, t: int, w: float, d: float, x: dict[str, float], tail: str, name: str
) -> StochasticParams | None:
    """Round a candidate safely and pass it through :func:`lean_params`; ``None`` if refused."""
    c = _round(x["c"], up=True, digits=3)
    e_b = _round(x["e_b"], up=True, digits=3)
    b = _round(x["b"], up=False)
    s = _round(b - 2 * e_b, up=False)
    try:
        return lean_params(k, t, c=c, s=s, b=b, q=x["q"], v=x["v"], w=w, d=d, name=name,
                           tail=tail)  # fmt: skip
    except ProtocolError:
        return None


def _check_inputs(w: float, d: float, cap: int, tail: str, weight: float | None) -> None:
    w, d = _real("w", w), _real("d", d)
    if not 0 < d < w <= 1:
        raise ProtocolError(f"need 0 < d < w <= 1 (win d, gap w), got w = {w}, d = {d}")
    if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 2**53:
        raise ProtocolError(f"max_prover_samples must be an integer in 1..2^53, got {cap!r}")
    if tail not in TIERS:
        raise ProtocolError(f"tail must be one of {list(TIERS)}, got {tail!r}")
    if tail == "tight" and weight is not None:
        raise ProtocolError("--prover-weight is not available with the tight tier")
    if weight is not None and not (_real("prover_weight", weight) > 0):
        raise ProtocolError(f"prover_weight must be positive, got {weight!r}")


def optimize_params(
    k: float,
    steps: int,
    *,
    w: float = 2 / 3,
    d: float = 3 / 5,
    max_prover_samples: int = DEFAULT_MAX_PROVER_SAMPLES,
    tail: str = "hoeffding",
    prover_weight: float | None = None,
) -> OptimizedParams:
    """The grid-optimal parameter set for a K-Lipschitz machine of T steps (module docstring).

    Raises:
        ProtocolError: a bad input (named), or no grid point meets the conditions within
            the cap (e.g. a cap too small for the prover errors the conditions need).
    """
    start = time.perf_counter()
    _check_k_t(k, steps)
    _check_inputs(w, d, max_prover_samples, tail, prover_weight)
    if tail == "tight":
        raise ProtocolError("the tight tier has its own optimizer: tight.optimize_tight")
    name = "optimized-exact" if tail == "exact" else "optimized"
    found: list[tuple[float, StochasticParams]] = []
    tries = 1
    if tail == "exact" and _v_hoeffding(k, steps, w, d, max_prover_samples) <= QUICK_SCAN:
        tries = CANDIDATES_EXACT
    tried: set[float] = set()
    for _, x in _candidates(float(k), steps, w, d, max_prover_samples, tail, prover_weight):
        if x["v"] in tried:  # the exact counts of the same v differ little: try other v
            continue
        p = _validated(float(k), steps, w, d, x, tail, name)
        if p is None or max(p.a_samples, p.b_samples) > max_prover_samples:
            continue
        cost = float(p.v_samples)
        if prover_weight is not None:
            cost += prover_weight * steps * (p.a_samples + p.b_samples)
        found.append((cost, p))
        tried.add(x["v"])
        if len(found) >= tries:
            break
    if not found:
        raise ProtocolError(
            f"no parameter set meets the Lean conditions at K = {k:g}, T = {steps} with "
            f"w = {w:g}, d = {d:g} and at most {max_prover_samples:,} prover samples per round"
        )
    cost, best = min(found, key=lambda item: item[0])
    return OptimizedParams(best, w, d, tail, max_prover_samples, prover_weight, cost,
                           time.perf_counter() - start)  # fmt: skip


@lru_cache(maxsize=64)
def _preset(k: float, steps: int, tail: str) -> StochasticParams:
    return optimize_params(k, steps, tail=tail).params


def optimized_preset(k: float, steps: int) -> StochasticParams:
    """The ``optimized`` preset: Hoeffding tier, default w, d and cap, at (K, T)."""
    _check_k_t(k, steps)
    return _preset(float(k), steps, "hoeffding")


def optimized_exact_preset(k: float, steps: int) -> StochasticParams:
    """The ``optimized-exact`` preset: exact-tail tier (not machine-checked), at (K, T)."""
    _check_k_t(k, steps)
    return _preset(float(k), steps, "exact")


PRESETS["optimized"] = optimized_preset
PRESETS["optimized-exact"] = optimized_exact_preset
