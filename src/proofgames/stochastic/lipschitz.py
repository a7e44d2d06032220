"""Lipschitz constants of stochastic machines: exact values, lower and sound upper bounds.

A machine is K-Lipschitz at its oracle ``p`` if every other oracle ``q`` changes its
acceptance probability by at most ``K * max_z |p(z) - q(z)|`` (``PROTOCOLS.md`` section 3).
Internal coins are not the oracle and are never perturbed.  ``f(q) = P_q[M = 1]`` is a
polynomial in the oracle probabilities ``q`` (one variable per distinct query id), of
degree at most the number of steps asking that id; when every id is asked by at most one
step it is *multilinear*.  So ``K = sup_{q != p} |f(q) - f(p)| / ||q - p||_inf`` and:

* :func:`exact_lipschitz` computes it exactly in two cases.  *Multilinear, few ids*: for
  each radius ``eps`` the largest ``|f(q) - f(p)|`` over the box ``|q_i - p_i| <= eps``
  (clipped to ``[0, 1]``) sits at a vertex ``v_s(eps) = clip(p + eps * s)``, ``s`` a sign
  vector, because a multilinear function is affine in each coordinate.  Between the radii
  where a vertex coordinate hits 0 or 1, ``f(v_s(eps)) - f(p)`` is a polynomial ``P_s`` in
  ``eps``, so ``sup |P_s(eps)| / eps`` over each piece is attained at its ends or at a real
  root of ``eps P_s'(eps) - P_s(eps)``; the code finds every such root (companion-matrix
  eigenvalues) and takes the largest ratio.  Every candidate is a genuine perturbation, and
  the maximiser is among them, so the result is K up to floating-point rounding.
  *One oracle id, any number of uses*: the secant slope ``(f(q) - f(p)) / (q - p)`` is a
  polynomial of degree below the number of uses; it is interpolated exactly at Chebyshev
  points and maximised over ``[0, 1]`` at the ends and the roots of its derivative.
* :func:`lipschitz_bounds` brackets K for any machine: a lower bound by search (the
  gradient at ``p``, plus random and gradient-signed vertices at many radii, refined by
  single sign flips) and a sound upper bound, the least of (a) the *influence* bound
  ``sum_t max_state |P[M=1 | state, y_t=1] - P[M=1 | state, y_t=0]|`` over oracle query
  steps -- sound because ``f(q) - f(p)`` telescopes into one term per step, each at most
  ``||q - p||_inf`` times that step's largest influence; (b) for multilinear ``f``,
  ``sum_i max |df/dq_i|``, the maxima taken at the corners of ``[0, 1]^m``; (c) the number of
  oracle query steps the output depends on -- sound by coupling: answer each step of both
  runs from one uniform draw, so they part only where an answer differs, with probability
  at most ``||q - p||_inf`` per step.  Bound (c) needs no state enumeration.

The protocol needs ``K > 0``; :func:`require_lipschitz` checks a machine's constant.

Example:
    >>> from proofgames.stochastic import StochasticBuilder
    >>> from proofgames.stochastic.lipschitz import exact_lipschitz, lipschitz_bounds
    >>> b = StochasticBuilder([0.5]); votes = [b.query(0) for _ in range(3)]
    >>> _ = b.gate(lambda v: (v.sum(axis=1) >= 2).astype("int64"), relevant=votes)
    >>> m = b.build("majority-of-3")
    >>> round(exact_lipschitz(m), 6)
    1.5
    >>> bounds = lipschitz_bounds(m, exact=False)
    >>> bounds.lower <= 1.5 <= bounds.upper
    True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import Chebyshev

from ..errors import ProtocolError
from .exact import (
    MAX_STATES,
    FloatArray,
    TransitionGraph,
    acceptance_probabilities,
    acceptance_probability,
    transition_graph,
)
from .model import StochasticMachine

__all__ = [
    "LipschitzBounds",
    "acceptance_probabilities",
    "acceptance_probability",
    "exact_lipschitz",
    "lipschitz_bounds",
    "query_count_bound",
    "require_lipschitz",
    "parity_lipschitz",
    "secant_from_derivative",
    "tail_lipschitz",
    "univariate_lipschitz",
]

MAX_EXACT_IDS = 12
"""Default limit on distinct oracle ids for the multilinear (2^m vertex) algorithm."""


@dataclass(frozen=True)
class LipschitzBounds:
    """Bounds ``lower <= K <= upper`` on a machine's Lipschitz constant.

    Attributes:
        lower: a ratio attained by an actual perturbation (so ``K >= lower``).
        upper: a proven bound (``K <= upper``); use it as the protocol's K.
        exact: whether both equal the exact K (computed by :func:`exact_lipschitz`).
        lower_method: how ``lower`` was found (``"exact"``, ``"search"``, ``"none"``).
        upper_method: which bound gave ``upper`` (``"exact"``, ``"influence"``,
            ``"derivative-sum"``, ``"query-count"``).
    """

    lower: float
    upper: float
    exact: bool
    lower_method: str
    upper_method: str


def require_lipschitz(machine: StochasticMachine) -> float:
    """The machine's K, checked usable by the protocol: known, finite and positive.

    Raises:
        ProtocolError: if K is unknown, not finite, or ``<= 0``.
    """
    k = machine.lipschitz
    if k is None:
        raise ProtocolError(
            f"{machine.name}: no Lipschitz constant is known; compute one with "
            "lipschitz_bounds(machine).upper (a sound bound) or give K explicitly"
        )
    if not math.isfinite(k) or k <= 0:
        hint = " (its output ignores the oracle; any K > 0, e.g. 1, is valid)" if k == 0 else ""
        raise ProtocolError(f"{machine.name}: the protocol needs K > 0, got K = {k}{hint}")
    return float(k)


def query_count_bound(machine: StochasticMachine) -> int:
    """Oracle query steps the output depends on: a sound K bound (coupling), no enumeration.

    A query step counts unless every value of its relevant entries makes it toss an internal
    coin (checked exhaustively when it reads at most 16 entries).
    """
    needed = np.zeros(machine.length, dtype=bool)
    needed[-1] = True
    for t in range(machine.length - 1, -1, -1):
        if needed[t]:
            needed[list(machine.relevant(t))] = True
    count = 0
    for t in np.flatnonzero(needed).tolist():
        if machine.is_query(t):
            k = len(machine.relevant(t))
            if k <= 16:
                combos = list(itertools.product((0, 1), repeat=k))
                values = np.array(combos, dtype=np.int64).reshape(len(combos), k)
                if machine.internal_batch(t, values).all():
                    continue
            count += 1
    return count


def exact_lipschitz(
    machine: StochasticMachine, *, max_ids: int = MAX_EXACT_IDS, max_states: int = MAX_STATES
) -> float:
    """The exact Lipschitz constant K (see the module docstring for the two methods).

    Returns 0.0 for a machine whose output cannot depend on the oracle.

    Raises:
        ProtocolError: if the machine is too large, or asks several oracle ids of which one
            is asked by more than one step, or more than ``max_ids`` distinct ids.
    """
    graph = transition_graph(machine, max_states)
    ids = graph.oracle_ids
    if ids.size == 0:
        return 0.0
    if ids.size == 1:
        direction = np.zeros((1, machine.probabilities.size))
        direction[0, ids[0]] = 1.0

        def secant(q: FloatArray) -> FloatArray:
            batch = np.tile(machine.probabilities, (q.size, 1))
            batch[:, ids[0]] = q
            return graph.difference(batch, np.repeat(direction, q.size, axis=0))

        return univariate_lipschitz(secant, int(graph.uses[ids[0]]) - 1)[0]
    repeated = ids[graph.uses[ids] > 1]
    if repeated.size:
        raise ProtocolError(
            f"{machine.name}: exact K needs one oracle id, or ids each asked by one step; query "
            f"{int(repeated[0])} is asked by {int(graph.uses[repeated[0]])} steps "
            "(use lipschitz_bounds)"
        )
    if ids.size > max_ids:
        raise ProtocolError(
            f"{machine.name}: exact K enumerates 2^m vertices; m = {ids.size} oracle ids > "
            f"max_ids = {max_ids} (use lipschitz_bounds)"
        )
    return _multilinear_k(_corners(graph, ids), machine.probabilities[ids])


def _corners(graph: TransitionGraph, ids: np.ndarray) -> FloatArray:
    """``f`` at every 0/1 corner of the oracle ids, as a tensor of shape ``(2,) * m``."""
    m = ids.size
    batch = np.tile(graph.machine.probabilities, (1 << m, 1))
    bits = (np.arange(1 << m)[:, None] >> np.arange(m - 1, -1, -1)[None, :]) & 1
    batch[:, ids] = bits
    return graph.evaluate(batch).reshape((2,) * m)


def _contract(tensor: FloatArray, p: FloatArray) -> float:
    """The multilinear function with corner values ``tensor`` at the point ``p``."""
    out = tensor
    for x in p:
        out = (1.0 - x) * out[0] + x * out[1]
    return float(out)


def _multilinear_k(corners: FloatArray, p: FloatArray) -> float:
    m = p.size
    base = _contract(corners, p)
    breaks = np.unique(np.concatenate([[0.0], p, 1.0 - p]))
    best = 0.0
    for a, b in itertools.pairwise(breaks.tolist()):
        mid = 0.5 * (a + b)
        poly = np.zeros((*corners.shape, m + 1))
        poly[..., 0] = corners
        for i in range(m):
            g = np.moveaxis(poly, i, 0)
            rows = []
            for sign in (-1.0, 1.0):
                hit = mid > (p[i] if sign < 0 else 1.0 - p[i])
                u0, u1 = (float(sign > 0), 0.0) if hit else (float(p[i]), sign)
                lin = (1.0 - u0) * g[0] + u0 * g[1]
                lin[..., 1:] += u1 * (g[1] - g[0])[..., :-1]
                rows.append(lin)
            poly = np.moveaxis(np.stack(rows), 0, i)
        coef = poly.reshape(-1, m + 1)
        coef[:, 0] = 0.0 if a == 0.0 else coef[:, 0] - base
        best = max(best, _max_ratio(coef, a, b))
    return best


def _max_ratio(coef: FloatArray, a: float, b: float) -> float:
    """``max |P(eps)| / eps`` over ``eps`` in ``[a, b]`` for each row's polynomial ``P``."""
    deg = np.arange(coef.shape[1])
    crit = coef * (deg - 1.0)  # eps P' - P
    scale = np.abs(crit).max(axis=1, keepdims=True)
    top = np.where(np.abs(crit) > 1e-13 * scale + 1e-300, deg, -1).max(axis=1)
    points = [np.full(coef.shape[0], b)]
    if a > 0:
        points.append(np.full(coef.shape[0], a))
    for d in np.unique(top[top >= 1]).tolist():
        rows = np.flatnonzero(top == d)
        comp = np.zeros((rows.size, d, d))
        comp[:, np.arange(1, d), np.arange(d - 1)] = 1.0
        comp[:, :, -1] = -crit[rows, :d] / crit[rows, d : d + 1]
        roots = np.linalg.eigvals(comp)
        real = np.abs(roots.imag) <= 1e-6 * np.maximum(1.0, np.abs(roots))
        cand = np.where(real & (roots.real > a) & (roots.real < b), roots.real, b)
        full = np.full((coef.shape[0], d), b)
        full[rows] = cand
        points.extend(full.T)
    eps = np.stack(points, axis=1)  # (rows, candidates)
    ratio = coef[:, :1] / eps + np.einsum("rk,rck->rc", coef[:, 1:], _powers(eps, deg.size - 1))
    best = float(np.abs(ratio).max())
    if a == 0.0:
        best = max(best, float(np.abs(coef[:, 1]).max()))  # the limit eps -> 0
    return best


def _powers(x: FloatArray, n: int) -> FloatArray:
    return x[..., None] ** np.arange(n)


def univariate_lipschitz(
    secant: Callable[[FloatArray], FloatArray], degree: int
) -> tuple[float, float]:
    """``max_{q in [0,1]} |secant(q)|`` and a maximiser, for a polynomial of degree ``<= degree``.

    ``secant(q)`` must be the slope ``(f(q) - f(p)) / (q - p)`` (``f'(p)`` at ``q = p``) of
    a univariate ``f``, evaluated exactly; its max absolute value is ``f``'s K at ``p``.
    """
    degree = max(0, degree)
    interp = Chebyshev.interpolate(secant, degree, domain=[0.0, 1.0])
    nodes = np.polynomial.chebyshev.chebpts1(degree + 1) * 0.5 + 0.5
    cand = [np.array([0.0, 1.0]), nodes]
    if degree >= 2:
        roots = interp.deriv().roots()
        roots = roots[np.abs(np.imag(roots)) <= 1e-4]
        cand.append(np.clip(np.real(roots), 0.0, 1.0))
    q = np.concatenate(cand)
    values = np.abs(secant(q))
    i = int(np.argmax(values))
    return float(values[i]), float(q[i])


def secant_from_derivative(
    derivative: Callable[[FloatArray], FloatArray], p: float, degree: int
) -> Callable[[FloatArray], FloatArray]:
    """The secant slope of ``f`` at ``p`` from ``f'`` (a polynomial of degree ``<= degree``).

    ``(f(q) - f(p)) / (q - p)`` is the mean of ``f'`` over ``[p, q]``; Gauss-Legendre
    quadrature with ``degree // 2 + 1`` nodes computes it exactly, without cancellation.
    """
    nodes, weights = np.polynomial.legendre.leggauss(max(1, degree // 2 + 1))
    s, w = 0.5 * (nodes + 1.0), 0.5 * weights

    def secant(q: FloatArray) -> FloatArray:
        q = np.asarray(q, dtype=np.float64).reshape(-1)
        return np.asarray(derivative(p + (q[:, None] - p) * s[None, :]) @ w, dtype=np.float64)

    return secant


def lipschitz_bounds(
    machine: StochasticMachine,
    *,
    exact: bool = True,
    seed: int = 0,
    samples: int = 32,
    max_ids: int = MAX_EXACT_IDS,
    max_states: int = MAX_STATES,
    search: bool = True,
) -> LipschitzBounds:
    """Bracket the machine's Lipschitz constant (see the module docstring).

    Args:
        machine: the machine.
        exact: return the exact K (lower = upper) when :func:`exact_lipschitz` applies.
        seed: seed of the random sign patterns tried by the search.
        samples: random sign patterns tried (fewer on large machines).
        max_ids: largest number of oracle ids for the exact and corner computations.
        max_states: largest number of live states enumerated; beyond it only the
            query-count bound is given, with lower bound 0.
        search: search for a lower bound; ``False`` skips it (lower bound 0, method
            ``"none"``) when only the sound upper bound is wanted -- the search evaluates
            a gradient per oracle id, the most expensive part on machines with many ids.
    """
    count = float(query_count_bound(machine))
    try:
        graph = transition_graph(machine, max_states)
    except ProtocolError:
        return LipschitzBounds(0.0, count, False, "none", "query-count")
    ids = graph.oracle_ids
    if ids.size == 0:
        return LipschitzBounds(0.0, 0.0, True, "exact", "exact")
    multilinear = bool((graph.uses[ids] <= 1).all())
    if exact and (ids.size == 1 or (multilinear and ids.size <= max_ids)):
        k = exact_lipschitz(machine, max_ids=max_ids, max_states=max_states)
        return LipschitzBounds(k, k, True, "exact", "exact")
    uppers = {"query-count": count, "influence": float(graph.influence().sum())}
    if multilinear and ids.size <= max_ids:
        corners = _corners(graph, ids)
        uppers["derivative-sum"] = float(
            sum(np.abs(np.diff(corners, axis=i)).max() for i in range(ids.size))
        )
    method = min(uppers, key=lambda k: uppers[k])
    if not search:
        return LipschitzBounds(0.0, uppers[method], False, "none", method)
    lower = _search(graph, ids, np.random.default_rng(seed), samples)
    return LipschitzBounds(lower, uppers[method], False, "search", method)


def _search(
    graph: TransitionGraph, ids: np.ndarray, rng: np.random.Generator, samples: int
) -> float:
    """A lower bound on K: the best ratio over gradient and random sign-vertex perturbations."""
    p_all = graph.machine.probabilities
    p = p_all[ids]
    m = ids.size
    unit = np.zeros((m, p_all.size))
    unit[np.arange(m), ids] = 1.0
    grad = graph.difference(np.tile(p_all, (m, 1)), unit)
    lo, hi = np.where(p > 0, -1.0, 0.0), np.where(p < 1, 1.0, 0.0)
    best = max(
        float(np.maximum(grad * lo, grad * hi).sum()),
        float(np.maximum(-grad * lo, -grad * hi).sum()),
    )
    budget = max(4, int(2e7 // max(1, graph.work)))
    eps = np.unique(np.concatenate([np.geomspace(1e-3, 1.0, 16), p, 1.0 - p]))
    eps = eps[eps > 0]
    n_pat = max(2, min(2 + samples, budget // eps.size))
    lead = np.where(grad >= 0, 1.0, -1.0)
    signs = np.vstack([lead, -lead, rng.choice([-1.0, 1.0], size=(n_pat - 2, m))])

    def ratios(sg: FloatArray, ep: FloatArray) -> FloatArray:
        q = np.clip(p + sg * ep[:, None], 0.0, 1.0)
        norm = np.abs(q - p).max(axis=1)
        ok = norm > 0
        full = np.tile(p_all, (int(ok.sum()), 1))
        full[:, ids] = q[ok]
        direction = np.zeros_like(full)
        direction[:, ids] = (q[ok] - p) / norm[ok, None]
        out = np.zeros(sg.shape[0])
        out[ok] = np.abs(graph.difference(full, direction))
        return out

    sg = np.repeat(signs, eps.size, axis=0)
    ep = np.tile(eps, signs.shape[0])
    r = ratios(sg, ep)
    i = int(np.argmax(r))
    best = max(best, float(r[i]))
    s, e = sg[i].copy(), ep[i : i + 1]
    for _ in range(3 if m * 3 <= budget else 0):  # greedy single sign flips at that radius
        flips = np.repeat(s[None, :], m, axis=0)
        flips[np.arange(m), np.arange(m)] *= -1.0
        rf = ratios(flips, np.repeat(e, m))
        j = int(np.argmax(rf))
        if rf[j] <= best:
            break
        best, s = float(rf[j]), flips[j]
    return best


def tail_lipschitz(n: int, k: int, p: float) -> tuple[float, float]:
    """K of ``f(q) = P[Binomial(n, q) >= k]`` at ``p``, and a maximising ``q``, in O(log) work.

    ``f' `` is the Beta(k, n - k + 1) density, which is unimodal, so on each side of ``p``
    the secant slope ``s(q) = (f(q) - f(p)) / (q - p)`` -- the mean of ``f'`` over the
    interval -- increases and then decreases (at a critical point ``f'(q) = s(q)``, and past
    the mode, where ``f'`` decreases, ``f' - s`` cannot climb back to 0).  Each side's
    maximum is found by bounded Brent search on this unimodal function, ``s(p) = f'(p)``
    and the ends included.  Agrees with :func:`univariate_lipschitz` (exact interpolation of
    degree ``n - 1``, cubic in ``n``) to ~1e-12; used for large ``n``.
    """
    from scipy import optimize, special, stats

    if not 1 <= k <= n:
        return 0.0, p
    a, b = float(k), float(n - k + 1)
    nodes, weights = np.polynomial.legendre.leggauss(8)

    def density(q: FloatArray) -> FloatArray:
        return np.asarray(stats.beta.pdf(q, a, b), dtype=np.float64)

    def tail(q: float) -> tuple[float, float]:  # (f(q), 1 - f(q)), each accurate
        return float(special.betainc(a, b, q)), float(special.betaincc(a, b, q))

    fp, gp = tail(p)

    def secant(q: float) -> float:
        h = q - p
        if abs(h) <= 1e-4:  # mean of f' over [p, q]: no cancellation
            at = p + h * 0.5 * (nodes + 1.0)
            return float(density(at) @ weights) * 0.5
        fq, gq = tail(q)
        return (fq - fp) / h if fp <= 0.5 else (gp - gq) / h

    best_q, best = p, abs(float(density(np.array([p]))[0]))
    for lo, hi in ((p, 1.0), (0.0, p)):
        if hi - lo <= 0:
            continue
        res = optimize.minimize_scalar(
            lambda q: -abs(secant(q)), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-13},
        )  # fmt: skip
        for q in (float(res.x), lo, hi):
            value = abs(secant(q))
            if value > best:
                best_q, best = q, value
    return best, best_q


def parity_lipschitz(n: int, p: float) -> float:
    """K of ``f(q) = P[n answers have odd parity] = (1 - (1 - 2q)^n) / 2`` at ``p``, exactly.

    ``f'(q) = n (1 - 2q)^(n-1)`` is monotone (n even) or quasi-convex (n odd), so the secant
    slope from ``p`` has no interior maximum on either side: K is the largest of ``|f'(p)|``
    and the slopes to ``q = 0`` and ``q = 1``.
    """
    slope = abs(n * (1.0 - 2.0 * p) ** (n - 1))
    here = (1.0 - 2.0 * p) ** n
    for q, there in ((0.0, 1.0), (1.0, (-1.0) ** n)):
        if q != p:
            slope = max(slope, abs((here - there) / (2.0 * (q - p))))
    return float(slope)
