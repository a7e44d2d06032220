"""Strategies for stochastic debate with a witness (Figure 2 with Figure 1).

Prover A chooses witnesses, then debates as a registered stochastic A:
``honest`` (the witness with the largest P[M(x, w) = 1], honest announcements),
``random`` (a random witness), ``evade`` (the best witness, shaded announcements) and
``choose:pick=best|worst|first|random,debate=NAME`` (any witness rule with any stochastic
A strategy, e.g. ``choose:pick=random,debate=evade``).  Prover B: every stochastic B.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import (
    Player,
    check_instance,
    make_strategy,
    names_so_far,
    register_strategy,
)
from ..errors import SpecError
from ..protocols.stochastic import Round, StochasticA
from ._runs import require_range

P = "stochastic-witness"
PICKS = ("best", "worst", "first", "random")


class _WitnessA(Player, StochasticA):
    def __init__(self, pick: str, debate: str) -> None:
        if pick not in PICKS:
            raise SpecError(f"strategy argument pick must be one of {PICKS}, got {pick!r}")
        self.pick = pick
        self.inner: Any = make_strategy("stochastic", "A", debate)

    def witnesses(self, problem: Any, n: int, rng: np.random.Generator) -> list[bytes]:
        cands = problem.candidates()
        if self.pick == "random":
            return [cands[i] for i in rng.integers(0, len(cands), size=n)]
        if self.pick == "first":
            return [cands[0]] * n
        score = [problem.machine(w).p_accept or 0.0 for w in cands]
        best = int(np.argmax(score) if self.pick == "best" else np.argmin(score))
        return [cands[best]] * n

    def check_instance(self, problem: Any) -> None:
        """Refuse, before play, a problem the inner strategy cannot play."""
        for w in problem.candidates():
            check_instance(self.inner, problem.machine(w))

    def announce(self, r: Round, rng: np.random.Generator) -> object:
        return self.inner.announce(r, rng)

    def coin(self, r: Round, rng: np.random.Generator) -> object:
        return self.inner.coin(r, rng)


@register_strategy(P, "A", "honest", honest=True)
def honest_a() -> _WitnessA:
    """Sends the witness most likely to make M output 1, then announces honestly."""
    return _WitnessA("best", "honest")


@register_strategy(P, "A", "random")
def random_a() -> _WitnessA:
    """Sends a uniformly random witness, then announces honestly."""
    return _WitnessA("random", "honest")


@register_strategy(P, "A", "evade")
def evade_a(margin: float = 0.9) -> _WitnessA:
    """Sends its best witness, then shades every announcement just under B's threshold."""
    require_range("margin", margin, 0.0, 1e6)
    return _WitnessA("best", f"evade:margin={margin}")


@register_strategy(P, "A", "choose")
def choose_a(pick: str = "best", debate: str = "evade") -> _WitnessA:
    """Picks a witness by rule (best, worst, first, random), then debates as ``debate``."""
    return _WitnessA(pick, debate)


def _delegate(name: str) -> None:
    def factory() -> Player:
        return make_strategy("stochastic", "B", name)

    factory.__doc__ = f"As the stochastic protocol's B ``{name}``."
    register_strategy(P, "B", name, honest=name == "honest")(factory)


for _name in names_so_far("stochastic", "B"):  # not strategy_names: no plugins yet
    _delegate(_name)  # each witness's debate gets a fresh player, so ``optimal`` works too
