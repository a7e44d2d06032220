"""Each side's single decisions, checked against the machine (selfplay.decisions)."""

import numpy as np
import pytest

from proofgames.selfplay import StochasticFamily, TuringFamily
from proofgames.selfplay.decisions import decision_shares
from proofgames.selfplay.evaluate import EvalSet

FAMILIES = {
    "bisection": TuringFamily(space=2, max_steps=4, states=1, halt_share=0.5),
    "cross-examination": TuringFamily(space=2, max_steps=1, states=1, halt_share=0.5),
}


@pytest.mark.parametrize("protocol", sorted(FAMILIES))
def test_the_honest_parties_make_every_decision_right_and_fixed_moves_do_not(
    protocol: str,
) -> None:
    ev = EvalSet.make(protocol, FAMILIES[protocol], np.random.SeedSequence(0), 4, 6)
    honest = decision_shares(ev, None, None, np.random.default_rng(0))
    assert honest == {"a_correct": 1.0, "b_correct": 1.0}
    fixed = decision_shares(ev, lambda r, s: 0, lambda r, s: 0, np.random.default_rng(0))
    assert 0.0 <= fixed["a_correct"] < 1.0 and 0.0 <= fixed["b_correct"] < 1.0
    again = decision_shares(ev, lambda r, s: 0, lambda r, s: 0, np.random.default_rng(0))
    assert again == fixed  # the lies are drawn from the generator given


def test_a_b_that_disputes_by_the_midpoint_alone_is_scored_on_the_right_half() -> None:
    ev = EvalSet.make("bisection", FAMILIES["bisection"], np.random.SeedSequence(1), 4, 6)
    first, second = (decision_shares(ev, None, lambda r, s, h=h: h, np.random.default_rng(2))
                     for h in (0, 1))  # fmt: skip
    # every dispute is one half or the other: the two fixed B's right shares add up to 1
    assert first["b_correct"] + second["b_correct"] == pytest.approx(1.0)


def test_other_protocols_have_no_decision_shares() -> None:
    ev = EvalSet.make("stochastic", StochasticFamily(grid=4), np.random.SeedSequence(0), 1, 1)
    assert decision_shares(ev, None, None, np.random.default_rng(0)) == {}
