"""Optimal adversaries for tiny stochastic debates, by dynamic programming over histories.

For a machine of T binary steps (T up to 14) and parameters ``params``, backward induction
over A's histories (its bits so far) computes V's acceptance probability under the best
adversary against an honest opponent.  Each step is treated as the protocol treats it: a
deterministic step or an internal coin is *known* (B and V compare the announcement with
the exact p; with ``strict_deterministic`` any difference is caught), an oracle step is
*sampled* (B and V compare it with a Binomial sample mean).  B's and V's verdicts are the
protocol's own floating-point comparisons (:mod:`._verdicts`).

* :func:`optimal_liar` -- the dishonest A against honest B.  At a history with true
  probability p and continuation values ``v0``, ``v1`` (after the bit 0 or 1), announcing
  ``c`` is worth ``P[B aborts] P[V accepts] + P[B stays] (c v1 + (1 - c) v0)`` (honest B's
  uniform share makes the shared coin a Bernoulli(c) whatever A contributes).  Both
  probabilities are step functions of ``c``, constant between the announcements where some
  estimate enters or leaves a window; between two such breakpoints the value is linear in
  ``c``.  So its maximum over every floating-point announcement in [0, 1] is at a
  breakpoint or a float next to one, and ``method="exact"`` (the default) evaluates them
  all: the result is the exact optimum, attained by the announcements in the returned
  policy, up to floating-point rounding and the Binomial tails beyond
  :data:`~._verdicts.TAIL` whose breakpoints are not listed (``OptimalPolicy.gap``
  bounds what they could add).  ``method="grid"`` searches only ``grid`` points spread
  over [0, 1] plus ``grid`` points within three thresholds of p: a *lower bound* on the
  liar's best value, kept for comparison.
* :func:`optimal_disputer` -- the dishonest B against honest A.  Honest A announces its
  sample mean ``X / R`` (the exact p at a known step); B aborts exactly when V's acceptance
  probability on an abort is below the value of continuing (after seeing the bit with a
  shared coin; before it, in expectation, with the Lean external coin).  ``method="exact"``
  sums over every count ``X`` but the tails beyond :data:`~._verdicts.TAIL` (so the value
  is exact up to ``gap``, from below); ``method="quantiles"`` integrates over
  ``quantiles`` equal-probability buckets (an approximation of either sign).

Both return the game value (V's acceptance probability of A's claim) and the policy, which
the registered strategies ``optimal`` (A and B) play.

Example:
    >>> from proofgames.stochastic import StochasticBuilder, lean_params
    >>> b = StochasticBuilder([0.2]); _ = b.query(0)
    >>> m = b.build("single-query:p=0.2", lipschitz=1.0, p_accept=0.2)
    >>> liar = optimal_liar(m, lean_params(1.0, 1), claim=1)
    >>> bool(liar.value < 0.4), liar.label
    (True, 'exact')
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from ._verdicts import TAIL, Check, breakpoints, pass_probability, support
from .model import FloatArray, StochasticMachine
from .params import EXTERNAL, StochasticParams

MAX_STEPS = 14
EXACT, GRID, QUANTILES = "exact", "grid", "quantiles"
BoolArray = NDArray[np.bool_]
_CELLS = 1 << 22  # histories x candidate announcements evaluated at once


def _prefix_bits(t: int) -> NDArray[np.int64]:
    """All 2^t prefixes of length t as rows of bits (prefix index = binary, bit 0 first)."""
    idx = np.arange(1 << t, dtype=np.int64)
    return ((idx[:, None] >> np.arange(t, dtype=np.int64)) & 1).astype(np.int64)


def _check(machine: StochasticMachine, params: StochasticParams, claim: int) -> None:
    if machine.length > MAX_STEPS:
        raise ProtocolError(
            f"{machine.name}: the optimal adversary searches all 2^T histories; "
            f"T = {machine.length} > {MAX_STEPS}"
        )
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    if params.steps != machine.length:
        raise ProtocolError(f"params are for T = {params.steps}; the machine has {machine.length}")


def _relevant_values(machine: StochasticMachine, t: int) -> NDArray[np.int64]:
    bits = _prefix_bits(t)
    rel = list(machine.relevant(t))
    return bits[:, rel] if rel else np.zeros((bits.shape[0], 0), dtype=np.int64)


def _conditional(machine: StochasticMachine, t: int) -> tuple[FloatArray, BoolArray]:
    """Per history before step t: P[y_t = 1 | history], and whether the step is known."""
    values = _relevant_values(machine, t)
    known = ~np.full(values.shape[0], machine.is_query(t)) | machine.internal_batch(t, values)
    return machine.probability_batch(t, values), known


def step_known(machine: StochasticMachine, t: int) -> bool:
    """Whether step ``t`` is known exactly (deterministic or an internal coin) at every history.

    Raises:
        ProtocolError: if it tosses an internal coin at some histories and asks the oracle at
            others (then pass ``known`` per row to :func:`verdict_probabilities`).
    """
    if not machine.is_query(t):
        return True
    rel = machine.relevant(t)
    if len(rel) <= 16:
        combos = list(itertools.product((0, 1), repeat=len(rel)))
        coins = machine.internal_batch(t, np.array(combos, np.int64).reshape(len(combos), len(rel)))
        if coins.all() or not coins.any():
            return bool(coins.all())
    raise ProtocolError(
        f"{machine.name}: step {t} tosses an internal coin at some histories and asks the "
        "oracle at others; give known= for each row"
    )


def checks(params: StochasticParams, known: bool) -> tuple[Check, Check]:
    """Honest B's and V's checks at a step known exactly or sampled from the oracle."""
    if known:
        tol = params.exact_step_tolerance()
        if tol is not None:
            return Check(None, tol, inclusive=True), Check(None, tol, inclusive=True)
        return Check(None, params.b_threshold), Check(None, params.v_threshold)
    return (Check(params.b_samples, params.b_threshold),
            Check(params.v_samples, params.v_threshold))  # fmt: skip


@dataclass(frozen=True)
class OptimalPolicy:
    """The value of the game under an optimal adversary, and how to play it.

    Attributes:
        value: V's acceptance probability of A's claim under the adversary's policy.
        role: ``"A"`` (the liar) or ``"B"`` (the disputer).
        values: ``values[t][h]``: the value at history ``h`` (bits as a binary number,
            bit 0 first) before round ``t``.
        announce: for the liar, ``announce[t][h]`` is the announcement to make.
        grid: the announcement grid searched (liar, ``method="grid"``) or quantile count
            (disputer, ``method="quantiles"``); 0 for the exact methods.
        method: ``"exact"``, ``"grid"`` or ``"quantiles"``.
        gap: for the exact methods, a bound on ``|true optimum - value|`` (Binomial tails
            beyond :data:`~._verdicts.TAIL`, plus floating-point rounding); ``None`` for
            the approximate methods (a grid optimum is a lower bound on the liar's best
            value; a quantile approximation may err either way).
    """

    value: float
    role: str
    values: list[FloatArray] = field(repr=False)
    announce: list[FloatArray] = field(repr=False)
    grid: int = 0
    method: str = EXACT
    gap: float | None = 0.0

    @property
    def label(self) -> str:
        """How to describe ``value``: ``"exact"``, or which approximation it is."""
        if self.method == EXACT:
            return "exact"
        if self.method == GRID:
            return (
                f"grid optimum ({self.grid}+{self.grid} points; a lower bound on the liar's best)"
            )
        return f"quantile approximation ({self.grid} buckets; error of either sign)"


def verdict_probabilities(
    machine: StochasticMachine,
    params: StochasticParams,
    t: int,
    p: FloatArray,
    c: FloatArray,
    known: BoolArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """(P[honest B aborts], P[V accepts | abort]) for announcements ``c`` at probs ``p``.

    ``known`` marks the rows whose step is known exactly (deterministic, or an internal
    coin); by default it is taken from the step (:func:`step_known`).
    """
    p, c = np.broadcast_arrays(np.asarray(p, np.float64), np.asarray(c, np.float64))
    rows = np.full(p.shape, step_known(machine, t)) if known is None else np.asarray(known)
    rows = np.broadcast_to(rows, p.shape)
    aborts, accept = np.empty(p.shape), np.empty(p.shape)
    for kind in (True, False):
        sel = rows == kind
        if sel.any():
            b_check, v_check = checks(params, kind)
            aborts[sel] = 1.0 - pass_probability(b_check, p[sel], c[sel])
            accept[sel] = pass_probability(v_check, p[sel], c[sel])
    return aborts, accept


def _continue(c: FloatArray, v0: FloatArray, v1: FloatArray) -> FloatArray:
    """Value of the round's bit being 1 with probability ``c``."""
    return v0 + c * (v1 - v0)


def _argmax_rows(
    alpha: FloatArray, stay: FloatArray, cands: FloatArray, v0: FloatArray, v1: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """For each (v0, v1): the best ``alpha + stay * continue(c)`` over the candidates."""
    best, arg = np.empty(v0.size), np.empty(v0.size, dtype=np.int64)
    step = max(1, _CELLS // max(1, cands.size))
    for i in range(0, v0.size, step):
        sl = slice(i, i + step)
        total = alpha + stay * _continue(cands[None, :], v0[sl, None], v1[sl, None])
        arg[sl] = np.argmax(total, axis=1)
        best[sl] = total[np.arange(total.shape[0]), arg[sl]]
    return best, cands[arg]


def _exact_liar_step(
    params: StochasticParams, p: FloatArray, known: BoolArray, v0: FloatArray, v1: FloatArray,
    cache: dict[tuple[float, bool], tuple[FloatArray, FloatArray, FloatArray]],
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """The liar's exact best announcement and value at each history of one step."""
    keys = np.stack([p, known.astype(np.float64), v0, v1], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    best, choice = np.empty(uniq.shape[0]), np.empty(uniq.shape[0])
    groups = itertools.groupby(range(uniq.shape[0]), key=lambda i: (uniq[i, 0], uniq[i, 1]))
    for (pk, kk), group in groups:
        rows = np.fromiter(group, dtype=np.int64)
        key = (float(pk), bool(kk))
        if key not in cache:
            b_check, v_check = checks(params, key[1])
            cands = np.unique(np.concatenate(
                [[0.0, 1.0, key[0]], breakpoints(b_check, key[0]), breakpoints(v_check, key[0])]
            ))  # fmt: skip
            stay = pass_probability(b_check, key[0], cands)
            cache[key] = (cands, (1.0 - stay) * pass_probability(v_check, key[0], cands), stay)
        cands, alpha, stay = cache[key]
        best[rows], choice[rows] = _argmax_rows(alpha, stay, cands, uniq[rows, 2], uniq[rows, 3])
    inverse = inverse.reshape(-1)
    return best[inverse], choice[inverse]


def _grid_liar_step(
    machine: StochasticMachine, params: StochasticParams, t: int, p: FloatArray,
    known: BoolArray, v0: FloatArray, v1: FloatArray, grid: int,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """The liar's best announcement and value at each history among grid points only."""
    uniform = np.linspace(0.0, 1.0, grid)
    local = np.linspace(-3.0, 3.0, grid) * max(params.b_threshold, params.v_threshold)
    cc = np.concatenate(
        [np.broadcast_to(uniform, (p.size, grid)), np.clip(p[:, None] + local, 0.0, 1.0)], axis=1
    )
    aborts, accept = verdict_probabilities(
        machine, params, t, p[:, None], cc, np.broadcast_to(known[:, None], cc.shape)
    )
    total = aborts * accept + (1 - aborts) * _continue(cc, v0[:, None], v1[:, None])
    best = np.argmax(total, axis=1)
    rows = np.arange(p.size)
    return total[rows, best], cc[rows, best]


def optimal_liar(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    grid: int = 401,
    *,
    method: str = EXACT,
) -> OptimalPolicy:
    """The best any A does against honest B (module docstring).

    Args:
        machine: the machine (at most :data:`MAX_STEPS` steps).
        params: the protocol's parameters.
        claim: the output A asserts.
        grid: grid size, used only by ``method="grid"``.
        method: ``"exact"`` (every announcement) or ``"grid"`` (a lower bound).

    Example:
        The best liar claiming that a 3-vote majority (P[M = 1] = 0.896) comes out 0 is
        accepted with probability 0.134: above P[M = 0] = 0.104, but under the theorem's
        proven bound for these parameters.  Its first announcement shades 0.8 down:

        >>> from proofgames import machine_params, make_stochastic_machine, optimal_liar
        >>> m = make_stochastic_machine("majority:n=3,p=0.8")
        >>> params = machine_params("lean", m)
        >>> liar = optimal_liar(m, params, claim=0)
        >>> first = liar.announce[0].item()  # round 0 has one history: no bits yet
        >>> round(liar.value, 4), liar.gap < 1e-12, round(first, 4)
        (0.1339, True, 0.7903)
        >>> round(params.proven_soundness(1 - m.p_accept), 4)
        0.1708
    """
    _check(machine, params, claim)
    if method not in (EXACT, GRID):
        raise ProtocolError(f"the liar's method must be 'exact' or 'grid', got {method!r}")
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == claim).astype(np.float64)
    values, announce = [nxt], []
    cache: dict[tuple[float, bool], tuple[FloatArray, FloatArray, FloatArray]] = {}
    for t in range(steps - 1, -1, -1):
        p, known = _conditional(machine, t)
        h = np.arange(1 << t)
        v0, v1 = nxt[h], nxt[h | (1 << t)]
        if method == EXACT:
            nxt, choice = _exact_liar_step(params, p, known, v0, v1, cache)
        else:
            nxt, choice = _grid_liar_step(machine, params, t, p, known, v0, v1, grid)
        values.append(nxt)
        announce.append(choice)
    values.reverse()
    announce.reverse()
    if method == GRID:
        return OptimalPolicy(float(nxt[0]), "A", values, announce, grid, GRID, None)
    return OptimalPolicy(float(nxt[0]), "A", values, announce, 0, EXACT, _tail_gap(steps))


def liar_policy_value(
    machine: StochasticMachine, params: StochasticParams, claim: int, announce: list[FloatArray]
) -> float:
    """V's exact acceptance probability when A announces ``announce[t][h]`` against honest B.

    ``announce[t]`` has one announcement per history before round ``t`` (bits as a binary
    number, bit 0 first), as in :class:`OptimalPolicy`.
    """
    _check(machine, params, claim)
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == claim).astype(np.float64)
    for t in range(steps - 1, -1, -1):
        p, known = _conditional(machine, t)
        h = np.arange(1 << t)
        c = np.asarray(announce[t], dtype=np.float64)
        if c.shape != p.shape or not ((c >= 0) & (c <= 1)).all():
            raise ProtocolError(f"round {t} needs {p.size} announcements in [0, 1]")
        aborts, accept = verdict_probabilities(machine, params, t, p, c, known)
        nxt = aborts * accept + (1 - aborts) * _continue(c, nxt[h], nxt[h | (1 << t)])
    return float(nxt[0])


def _tail_gap(steps: int) -> float:
    """What Binomial tails beyond :data:`~._verdicts.TAIL` and rounding could hide."""
    return steps * (8 * TAIL + 1e-15)


def _honest_announcements(
    params: StochasticParams, p: float, known: bool, quantiles: int | None
) -> tuple[FloatArray, FloatArray]:
    """Honest A's possible announcements at probability ``p`` and their probabilities."""
    from scipy import stats  # imported here: it takes 0.4 s

    if known:
        return np.array([p]), np.array([1.0])
    r = params.a_samples
    if quantiles is not None:
        levels = (np.arange(quantiles) + 0.5) / quantiles
        return stats.binom.ppf(levels, r, p) / r, np.full(quantiles, 1.0 / quantiles)
    counts = support(r, p)
    return counts / r, stats.binom.pmf(counts, r, p)


def _disputer_step(
    params: StochasticParams, p: FloatArray, known: BoolArray, v0: FloatArray, v1: FloatArray,
    quantiles: int | None,
) -> FloatArray:  # fmt: skip
    """The value at each history of one step when B plays its best against honest A."""
    keys = np.stack([p, known.astype(np.float64), v0, v1], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    out = np.empty(uniq.shape[0])
    groups = itertools.groupby(range(uniq.shape[0]), key=lambda i: (uniq[i, 0], uniq[i, 1]))
    for (pk, kk), group in groups:
        rows = np.fromiter(group, dtype=np.int64)
        est, weight = _honest_announcements(params, float(pk), bool(kk), quantiles)
        accept = pass_probability(checks(params, bool(kk))[1], float(pk), est)
        step = max(1, _CELLS // max(1, est.size))
        for i in range(0, rows.size, step):
            part = rows[i : i + step]
            a0, a1 = uniq[part, 2][:, None], uniq[part, 3][:, None]
            if params.coin == EXTERNAL:
                total = np.minimum(accept, _continue(est, a0, a1))
            else:
                total = est * np.minimum(accept, a1) + (1 - est) * np.minimum(accept, a0)
            out[part] = total @ weight
    return out[inverse.reshape(-1)]


def optimal_disputer(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    quantiles: int = 64,
    *,
    method: str = EXACT,
) -> OptimalPolicy:
    """The best any B does against honest A (module docstring).

    Args:
        machine: the machine (at most :data:`MAX_STEPS` steps).
        params: the protocol's parameters.
        claim: the output A asserts.
        quantiles: buckets of A's estimate, used only by ``method="quantiles"``.
        method: ``"exact"`` (every estimate but tails of :data:`~._verdicts.TAIL`) or
            ``"quantiles"`` (an approximation).
    """
    _check(machine, params, claim)
    if method not in (EXACT, QUANTILES):
        raise ProtocolError(f"the disputer's method must be 'exact' or 'quantiles', got {method!r}")
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == claim).astype(np.float64)
    values = [nxt]
    for t in range(steps - 1, -1, -1):
        p, known = _conditional(machine, t)
        h = np.arange(1 << t)
        v0, v1 = nxt[h], nxt[h | (1 << t)]
        nxt = _disputer_step(params, p, known, v0, v1, quantiles if method == QUANTILES else None)
        values.append(nxt)
    values.reverse()
    if method == QUANTILES:
        return OptimalPolicy(float(nxt[0]), "B", values, [], quantiles, QUANTILES, None)
    return OptimalPolicy(float(nxt[0]), "B", values, [], 0, EXACT, _tail_gap(steps))


def history_index(prefix: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row-wise binary index of histories (bit 0 first), as used by :class:`OptimalPolicy`."""
    if prefix.shape[1] == 0:
        return np.zeros(prefix.shape[0], dtype=np.int64)
    return np.asarray(prefix @ (1 << np.arange(prefix.shape[1], dtype=np.int64)), np.int64)


def _extreme(machine: StochasticMachine, eps: float, sign: int, only: int | None = None) -> float:
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == 1).astype(np.float64)
    for t in range(steps - 1, -1, -1):
        p, _ = _conditional(machine, t)
        h = np.arange(1 << t)
        v0, v1 = nxt[h], nxt[h | (1 << t)]
        up = sign * (v1 - v0) >= 0  # moving p up helps the chosen direction
        shift = eps if only is None or only == t else 0.0
        q = np.clip(np.where(up, p + shift, p - shift), 0.0, 1.0)
        nxt = q * v1 + (1 - q) * v0
    return float(nxt[0])


def step_influence(machine: StochasticMachine, eps: float = 1e-4) -> FloatArray:
    """|d P[M=1] / d p_t| for each step t alone (every history shifted the same way).

    Computed by backward induction with only step ``t`` perturbed by ``eps`` in its most
    effective direction at each history; used to find the most influential step to lie at.
    """
    if machine.length > MAX_STEPS:
        raise ProtocolError(f"{machine.name}: T = {machine.length} > {MAX_STEPS} for this search")
    base = _extreme(machine, 0.0, +1)
    return np.array([(_extreme(machine, eps, +1, only=t) - base) / eps
                     for t in range(machine.length)])  # fmt: skip
