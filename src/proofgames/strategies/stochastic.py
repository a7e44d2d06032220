"""Strategies for the stochastic-oracle protocol (Figure 1), vectorized over debates.

Prover A: ``honest`` (announces the mean of its samples), ``shift:delta=D`` (honest plus D,
clipped), ``evade:margin=M`` (shifts toward its claim by M times B's abort threshold: just
under what honest B notices), ``lie-at:step=S,delta=D`` (lies at one step only; default the
most influential step), ``biased-coin:z=Z`` (honest announcements, a constant coin share) and
``blatant`` (announces the claimed bit with certainty).  Prover B: ``honest`` (aborts iff its
own estimate is at least the threshold away), ``always-abort``, ``never-abort``,
``random-abort:p=P`` and ``abort-against`` (aborts when the coin went A's way).  On tiny
machines both sides also have ``optimal``: the dynamic-programming best response to the
honest opponent (:mod:`proofgames.stochastic.optimal`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import Player, register_strategy
from .._transcript import IntArray
from ..errors import ProtocolError, SpecError
from ..protocols.stochastic import BoolArray, Round, StochasticA, StochasticB
from ..stochastic.model import FloatArray
from ..stochastic.optimal import (
    EXACT,
    GRID,
    MAX_STEPS,
    QUANTILES,
    OptimalPolicy,
    history_index,
    optimal_disputer,
    optimal_liar,
    step_influence,
    verdict_probabilities,
)
from ._runs import require_range

P = "stochastic"


class _Honest(Player, StochasticA):
    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        return r.estimate(r.params.a_samples)


class _Shift(_Honest):
    def __init__(self, delta: float, step: int | None = None, only_one: bool = False) -> None:
        self.delta, self.step, self.only_one = delta, step, only_one

    def check_instance(self, target: Any) -> None:
        """Refuse, before play, a step the machine does not have."""
        _check_step(self.step, target)

    def _lie_here(self, r: Round) -> bool:
        if not self.only_one:
            return True
        if self.step is None:
            self.step = _most_influential(r)
        return r.t == self.step

    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        honest = super().announce(r, rng)
        if not self._lie_here(r):
            return honest
        return np.clip(honest + self.delta, 0.0, 1.0)


def _most_influential(r: Round) -> int:
    """The step whose probability moves P[M=1] most (the last query step on long machines)."""
    if r.machine.length <= MAX_STEPS:
        return int(np.argmax(step_influence(r.machine)))
    return max((t for t in range(r.machine.length) if r.machine.is_query(t)), default=0)


class _Evade(_Honest):
    def __init__(self, margin: float) -> None:
        self.margin = margin

    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        sign = 1.0 if r.claim == 1 else -1.0
        shift = sign * self.margin * r.params.b_threshold
        return np.clip(super().announce(r, rng) + shift, 0.0, 1.0)


class _BiasedCoinA(_Honest):
    def __init__(self, z: float) -> None:
        self.z = z

    def coin(self, r: Round, rng: np.random.Generator) -> FloatArray:
        return np.full(r.n, self.z)


class _Blatant(Player, StochasticA):
    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        return np.full(r.n, float(r.claim))


@register_strategy(P, "A", "honest", honest=True)
def honest_a() -> Player:
    """Announces the mean of its own samples (exact values for deterministic steps)."""
    return _Honest()


@register_strategy(P, "A", "shift")
def shift_a(delta: float = 0.05) -> Player:
    """Announces the honest estimate plus ``delta`` at every step, clipped to [0, 1]."""
    require_range("delta", delta, -1.0, 1.0)
    return _Shift(delta)


@register_strategy(P, "A", "evade")
def evade_a(margin: float = 0.9) -> Player:
    """Shifts toward its claim by ``margin`` x B's abort threshold: just under detection."""
    require_range("margin", margin, 0.0, 1e6)
    return _Evade(margin)


@register_strategy(P, "A", "lie-at")
def lie_at_a(step: int = -1, delta: float = 0.3) -> Player:
    """Lies by ``delta`` at one step only (``step=-1``: the most influential step)."""
    require_range("step", step, -1)
    require_range("delta", delta, -1.0, 1.0)
    return _Shift(delta, None if step < 0 else step, only_one=True)


@register_strategy(P, "A", "biased-coin")
def biased_coin_a(z: float = 0.0) -> Player:
    """Honest announcements; always contributes ``z`` to the shared coin."""
    require_range("z", z, 0.0, 1.0, open_hi=True)
    return _BiasedCoinA(z)


@register_strategy(P, "A", "blatant")
def blatant_a() -> Player:
    """Announces its claimed bit with probability 1 at every step."""
    return _Blatant()


class _HonestB(Player, StochasticB):
    def abort(self, r: Round, rng: np.random.Generator, announced: FloatArray,
              bits: IntArray | None) -> BoolArray:  # fmt: skip
        mine = r.estimate(r.params.b_samples)
        gap = np.abs(mine - announced)
        out = gap >= r.params.b_threshold
        strict = r.params.exact_step_tolerance()
        if strict is not None:  # steps known exactly: any difference is a lie
            known = (not r.is_query) | r.machine.internal_batch(r.t, r.values)
            out = np.where(known, gap > strict, out)
        return np.asarray(out, dtype=np.bool_)


class _FixedB(Player, StochasticB):
    def __init__(self, rule: str, p: float = 0.5) -> None:
        self.rule, self.p = rule, p

    def abort(self, r: Round, rng: np.random.Generator, announced: FloatArray,
              bits: IntArray | None) -> BoolArray:  # fmt: skip
        if self.rule == "always":
            return np.ones(r.n, dtype=np.bool_)
        if self.rule == "never":
            return np.zeros(r.n, dtype=np.bool_)
        if self.rule == "random":
            return np.asarray(rng.random(r.n) < self.p, dtype=np.bool_)
        if bits is None:  # B moves before the coin: abort when the coin will likely favour A
            favours_a = announced > 0.5 if r.claim == 1 else announced < 0.5
            return np.asarray(favours_a, dtype=np.bool_)
        return np.asarray(bits == r.claim, dtype=np.bool_)


class _AbortAt(Player, StochasticB):
    def __init__(self, step: int) -> None:
        self.step = step

    def check_instance(self, target: Any) -> None:
        """Refuse, before play, a step the machine does not have."""
        _check_step(self.step, target)

    def abort(self, r: Round, rng: np.random.Generator, announced: FloatArray,
              bits: IntArray | None) -> BoolArray:  # fmt: skip
        if self.step >= 0:
            return np.full(r.n, r.t == self.step, dtype=np.bool_)
        return np.full(r.n, r.is_query, dtype=np.bool_)


@register_strategy(P, "B", "abort-at")
def abort_at_b(step: int = -1) -> Player:
    """Aborts at round ``step`` (``-1``: the first oracle query), making V check it."""
    require_range("step", step, -1)
    return _AbortAt(step)


@register_strategy(P, "B", "honest", honest=True)
def honest_b() -> Player:
    """Samples p itself and aborts iff A's announcement is at least the threshold away."""
    return _HonestB()


@register_strategy(P, "B", "always-abort")
def always_abort_b() -> Player:
    """Aborts in the first round."""
    return _FixedB("always")


@register_strategy(P, "B", "never-abort")
def never_abort_b() -> Player:
    """Never aborts."""
    return _FixedB("never")


@register_strategy(P, "B", "random-abort")
def random_abort_b(p: float = 0.5) -> Player:
    """Aborts each round with probability ``p``."""
    require_range("p", p, 0.0, 1.0)
    return _FixedB("random", p)


@register_strategy(P, "B", "abort-against")
def abort_against_b() -> Player:
    """Aborts when the round's bit went A's way (before the coin: when it likely will)."""
    return _FixedB("against")


class _OptimalA(Player, StochasticA):
    """Plays the dynamic-programming policy of :func:`~proofgames.stochastic.optimal_liar`."""

    def __init__(self, grid: int) -> None:
        self.grid = grid
        self._policy: OptimalPolicy | None = None

    def check_instance(self, machine: Any) -> None:
        """Refuse, before play, a machine too long for the exact search."""
        _check_optimal(machine)

    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        if self._policy is None:
            method = GRID if self.grid else EXACT
            self._policy = optimal_liar(r.machine, r.params, r.claim, self.grid, method=method)
        return self._policy.announce[r.t][history_index(r.prefix)]


class _OptimalB(Player, StochasticB):
    """Aborts exactly when V's acceptance on an abort is below the value of continuing."""

    def __init__(self, quantiles: int) -> None:
        self.quantiles = quantiles
        self._policy: OptimalPolicy | None = None

    def check_instance(self, machine: Any) -> None:
        """Refuse, before play, a machine too long for the exact search."""
        _check_optimal(machine)

    def abort(self, r: Round, rng: np.random.Generator, announced: FloatArray,
              bits: IntArray | None) -> BoolArray:  # fmt: skip
        if self._policy is None:
            method = QUANTILES if self.quantiles else EXACT
            self._policy = optimal_disputer(
                r.machine, r.params, r.claim, self.quantiles, method=method
            )
        h = history_index(r.prefix)
        after = self._policy.values[r.t + 1]
        v0, v1 = after[h], after[h | (1 << r.t)]
        known = (not r.is_query) | r.machine.internal_batch(r.t, r.values)
        _, accept = verdict_probabilities(r.machine, r.params, r.t, r.p, announced, known)
        if bits is None:
            cont = announced * v1 + (1 - announced) * v0
        else:
            cont = np.where(bits == 1, v1, v0)
        return np.asarray(accept < cont, dtype=np.bool_)


def _check_step(step: int | None, target: Any) -> None:
    """A step argument must be a step of the machine (or of every M(x, w))."""
    length = int(getattr(target, "length", getattr(target, "steps", 0)))
    if step is not None and step >= length:
        raise SpecError(
            f"strategy argument step={step} is not a step of {target.name} (T = {length}: "
            f"steps 0..{length - 1}, or -1 for the default)"
        )


def _check_optimal(target: Any) -> None:
    """A machine, or every M(x, w) of a witness problem, must be short enough to search."""
    machines = (
        [target.machine(w) for w in target.candidates()]
        if hasattr(target, "candidates")
        else [target]
    )
    for machine in machines:
        if machine.length > MAX_STEPS:
            raise ProtocolError(
                f"the optimal strategies search every history: {machine.name} has T = "
                f"{machine.length} > {MAX_STEPS} steps"
            )


@register_strategy(P, "A", "optimal")
def optimal_a(grid: int = 0) -> Player:
    """The exact best liar against honest B (tiny machines; grid=N: a grid approximation)."""
    if grid != 0:
        require_range("grid", grid, 2, 10**6)
    return _OptimalA(grid)


@register_strategy(P, "B", "optimal")
def optimal_b(quantiles: int = 0) -> Player:
    """The exact best disputer against honest A (tiny machines; quantiles=N: approximate)."""
    if quantiles != 0:
        require_range("quantiles", quantiles, 2, 10**6)
    return _OptimalB(quantiles)
