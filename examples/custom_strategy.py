"""Write, register and measure an adversary of your own: a bisection B who checks lazily.

Bisection (Figure 3 of the debate paper) asks B, each round, which half of A's claimed
run holds A's lie. The honest B simulates the first half and compares; it must be right
every round, since one wrong pick hands A a half in which nothing is false. This B
simulates only with probability ``p`` and otherwise guesses, so its work falls with
``p``: how often does it still catch a liar?

Run it from the repository root (a few seconds):

    .venv/bin/python examples/custom_strategy.py

A registered strategy is a factory whose annotated parameters a spec sets
(``spot-check:p=0.5``); its player sees only a copy of the protocol's state and loses, with
the reason recorded, if it raises or answers out of turn. Every random choice comes from
``ctx.rng``, the stream the harness gives this party from the debate's seed.
"""

from __future__ import annotations

import numpy as np

from proofgames import Configuration
from proofgames.harness import play
from proofgames.protocols import BisectionState, GameContext
from proofgames.protocols.bisection import FIRST, SECOND
from proofgames.strategies import Player, register_strategy


class SpotCheckB(Player):
    """Simulates the disputed first half with probability ``p``; otherwise guesses."""

    def __init__(self, p: float) -> None:
        self.p = p

    def dispute(self, ctx: GameContext, state: BisectionState, midpoint: Configuration) -> str:
        """``"first"`` or ``"second"``: the half of A's claim that B says holds the lie."""
        if ctx.rng.random() < self.p:
            truth, work = ctx.machine.run_steps(state.start, state.first_length, ctx.oracle)
            self.work += work  # counted in the outcome's costs
            return FIRST if truth != midpoint else SECOND
        return FIRST if ctx.rng.random() < 0.5 else SECOND


@register_strategy("bisection", "B", "spot-check")
def spot_check(p: float = 0.5) -> SpotCheckB:
    """Checks the disputed half with probability ``p``, else picks a half at random."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    return SpotCheckB(p)


def main() -> None:
    """B's win rate and work against a liar, over 200 seeded debates per ``p``."""
    debates = 200
    print(f"bisection on bb4 (107 steps), A lies at 30% of the run; {debates} debates each")
    for p in (1.0, 0.9, 0.5, 0.0):
        wins, work, disputes = 0, [], set()
        for seed in range(debates):
            out = play("bisection", "bb4", claim=0, a="flip-step:at=0.3",
                       b=f"spot-check:p={p}", seed=seed)  # fmt: skip
            wins += out.winner == "B"
            work.append(out.costs.prover_steps["B"])
            disputes.add(sum(m.sender == "B" for m in out.messages))
        # B wins only by being right at every dispute: each is a check or a lucky guess.
        right = (1 + p) / 2
        chance = f"{right ** max(disputes):.3f}-{right ** min(disputes):.3f}"
        print(f"p={p:.1f}: B wins {wins}/{debates} (exact chance {chance} for "
              f"{min(disputes)}-{max(disputes)} disputes), simulating {np.mean(work):.1f} "
              "steps a debate")  # fmt: skip


if __name__ == "__main__":
    main()
