"""Optimal adversaries for tiny stochastic debates, by dynamic programming over histories.

For a machine of T binary steps (T up to about 14) and parameters ``params``:

* :func:`optimal_liar` -- the dishonest A against honest B.  At every history (A's bits so
  far) A picks its announcement from a grid: ``grid`` values spread over [0, 1] plus
  ``grid`` values within three abort thresholds of the true p (where the best lies sit,
  just under what B and V can detect); honest B's abort
  and V's verdict are Binomial tail probabilities, computed exactly; the coin then sets the
  bit to 1 with probability equal to the announcement (honest B's uniform share makes the
  shared coin uniform whatever A contributes, so A's coin cannot help).  Backward induction
  gives the largest acceptance probability any A restricted to the grid can reach.
* :func:`optimal_disputer` -- the dishonest B against honest A.  Honest A's announcement is
  its sample mean; its distribution (Binomial(R, p) / R) is integrated over ``quantiles``
  equal-probability buckets.  B aborts exactly when V's acceptance probability on an
  abort is below the value of continuing (after seeing the bit with a shared coin; before
  it, in expectation, with the Lean external coin).

Both return the game value (V's acceptance probability of A's claim) and the policy, which
the registered strategies ``optimal`` (A and B) play.

Example:
    >>> from proofgames.stochastic import StochasticBuilder, lean_params
    >>> b = StochasticBuilder([0.2]); _ = b.query(0)
    >>> m = b.build("single-query:p=0.2", lipschitz=1.0, p_accept=0.2)
    >>> liar = optimal_liar(m, lean_params(1.0, 1), claim=1)
    >>> bool(liar.value < 0.4)
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from .._errors import ProtocolError
from .machine import FloatArray, StochasticMachine
from .params import EXTERNAL, StochasticParams

MAX_STEPS = 14


def _within(samples: int, p: FloatArray, centre: FloatArray, thr: float) -> FloatArray:
    """P[|X / samples - centre| < thr] for X ~ Binomial(samples, p), elementwise."""
    hi = np.ceil(samples * (centre + thr)) - 1
    lo = np.floor(samples * (centre - thr))
    out = stats.binom.cdf(hi, samples, p) - stats.binom.cdf(lo, samples, p)
    return np.clip(np.asarray(out, dtype=np.float64), 0.0, 1.0)


def _exact_within(p: FloatArray, centre: FloatArray, thr: float) -> FloatArray:
    return (np.abs(p - centre) < thr).astype(np.float64)


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


def _conditional(machine: StochasticMachine, t: int) -> FloatArray:
    bits = _prefix_bits(t)
    rel = list(machine.relevant(t))
    return machine.probability_batch(
        t, bits[:, rel] if rel else np.zeros((bits.shape[0], 0), dtype=np.int64)
    )


@dataclass(frozen=True)
class OptimalPolicy:
    """The value of the game under an optimal adversary, and how to play it.

    Attributes:
        value: V's acceptance probability of A's claim under optimal play.
        role: ``"A"`` (the liar) or ``"B"`` (the disputer).
        values: ``values[t][h]``: the value at history ``h`` (bits as a binary number,
            bit 0 first) before round ``t``.
        announce: for the liar, ``announce[t][h]`` is the announcement to make.
        grid: the announcement grid searched (liar) or quantile count (disputer).
    """

    value: float
    role: str
    values: list[FloatArray] = field(repr=False)
    announce: list[FloatArray] = field(repr=False)
    grid: int = 0


def verdict_probabilities(
    machine: StochasticMachine, params: StochasticParams, t: int, p: FloatArray, c: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(P[honest B aborts], P[V accepts | abort]) for announcements ``c`` at probs ``p``."""
    if machine.is_query(t):
        aborts = 1 - _within(params.b_samples, p, c, params.b_threshold)
        accept = _within(params.v_samples, p, c, params.v_threshold)
    elif params.exact_step_tolerance() is not None:  # strict: any difference is caught
        aborts = 1 - _exact_within(p, c, 1e-12)
        accept = _exact_within(p, c, 1e-12)
    else:
        aborts = 1 - _exact_within(p, c, params.b_threshold)
        accept = _exact_within(p, c, params.v_threshold)
    return aborts, accept


def optimal_liar(
    machine: StochasticMachine, params: StochasticParams, claim: int, grid: int = 401
) -> OptimalPolicy:
    """The best any A (announcing on a ``grid``) does against honest B (module docstring)."""
    _check(machine, params, claim)
    steps = machine.length
    uniform = np.linspace(0.0, 1.0, grid)
    local = np.linspace(-3.0, 3.0, grid) * max(params.b_threshold, params.v_threshold)
    nxt = (_prefix_bits(steps)[:, -1] == claim).astype(np.float64)
    values, announce = [nxt], []
    for t in range(steps - 1, -1, -1):
        p = _conditional(machine, t)  # (2^t,)
        cc = np.concatenate(
            [np.broadcast_to(uniform, (p.size, grid)), np.clip(p[:, None] + local, 0.0, 1.0)],
            axis=1,
        )
        pp = np.broadcast_to(p[:, None], cc.shape)
        aborts, accept = verdict_probabilities(machine, params, t, pp.ravel(), cc.ravel())
        aborts, accept = aborts.reshape(cc.shape), accept.reshape(cc.shape)
        h = np.arange(1 << t)
        v0, v1 = nxt[h], nxt[h | (1 << t)]
        cont = cc * v1[:, None] + (1 - cc) * v0[:, None]
        total = aborts * accept + (1 - aborts) * cont
        best = np.argmax(total, axis=1)
        rows = np.arange(total.shape[0])
        nxt = total[rows, best]
        values.append(nxt)
        announce.append(cc[rows, best])
    values.reverse()
    announce.reverse()
    return OptimalPolicy(float(nxt[0]), "A", values, announce, grid)


def optimal_disputer(
    machine: StochasticMachine, params: StochasticParams, claim: int, quantiles: int = 64
) -> OptimalPolicy:
    """The best any B does against honest A (module docstring)."""
    _check(machine, params, claim)
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == claim).astype(np.float64)
    values = [nxt]
    levels = (np.arange(quantiles) + 0.5) / quantiles
    for t in range(steps - 1, -1, -1):
        p = _conditional(machine, t)
        if machine.is_query(t):
            r = params.a_samples
            est = stats.binom.ppf(levels[None, :], r, p[:, None]) / r  # (2^t, Q)
        else:
            est = np.repeat(p[:, None], quantiles, axis=1)
        _, accept = verdict_probabilities(machine, params, t, np.repeat(p, quantiles), est.ravel())
        accept = accept.reshape(est.shape)
        h = np.arange(1 << t)
        v0, v1 = nxt[h][:, None], nxt[h | (1 << t)][:, None]
        if params.coin == EXTERNAL:
            total = np.minimum(accept, est * v1 + (1 - est) * v0)
        else:
            total = est * np.minimum(accept, v1) + (1 - est) * np.minimum(accept, v0)
        nxt = total.mean(axis=1)
        values.append(nxt)
    values.reverse()
    return OptimalPolicy(float(nxt[0]), "B", values, [], quantiles)


def history_index(prefix: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row-wise binary index of histories (bit 0 first), as used by :class:`OptimalPolicy`."""
    if prefix.shape[1] == 0:
        return np.zeros(prefix.shape[0], dtype=np.int64)
    return np.asarray(prefix @ (1 << np.arange(prefix.shape[1], dtype=np.int64)), np.int64)


def step_lipschitz(machine: StochasticMachine, grid: int = 60) -> float:
    """Lipschitz constant of P[M=1] when *every* step's conditional probability may move.

    The paper defines K through the oracle's answers only, but its proof (and the Lean
    formalization, whose oracle is the whole next-bit distribution) lets the dishonest
    prover shade every step -- deterministic ones included -- by less than the abort
    threshold.  This computes sup over eps of max |P'[M=1] - P[M=1]| / eps over all
    perturbations of size eps of every step's conditional probability at every history:
    by backward induction the extremes pick p +- eps at each history.  The sup is taken
    over a geometric grid of eps in [1e-6, 1] (a lower bound on the exact sup, exact for
    the grid); T, the number of steps, is always a sound upper bound.
    """
    if machine.length > MAX_STEPS:
        raise ProtocolError(f"{machine.name}: T = {machine.length} > {MAX_STEPS} for this search")
    base = _extreme(machine, 0.0, +1)
    best = 0.0
    for eps in np.geomspace(1e-6, 1.0, grid):
        hi, lo = _extreme(machine, float(eps), +1), _extreme(machine, float(eps), -1)
        best = max(best, (hi - base) / eps, (base - lo) / eps)
    return best


def _extreme(machine: StochasticMachine, eps: float, sign: int, only: int | None = None) -> float:
    steps = machine.length
    nxt = (_prefix_bits(steps)[:, -1] == 1).astype(np.float64)
    for t in range(steps - 1, -1, -1):
        p = _conditional(machine, t)
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
