"""Stochastic debate with a witness (Theorem 7.2) against its bounds."""

from __future__ import annotations

import pytest

from proofgames import ProtocolError
from proofgames._registry import Player, StrategySpec
from proofgames.experiments.montecarlo import clopper_pearson_interval
from proofgames.protocols.stochastic_witness import play_stochastic_witness
from proofgames.stochastic import lean_params, paper_params
from proofgames.stochastic.problems import PanelChoice
from proofgames.strategies import make_strategy, strategy_names

P = "stochastic-witness"


def run(problem, params, a, b, n=3000, seed=0):
    res = play_stochastic_witness(
        problem, params, make_strategy(P, "A", a), make_strategy(P, "B", b), debates=n, seed=seed
    )
    return res, clopper_pearson_interval(int(res.verdicts.sum()), n)


@pytest.mark.parametrize("family", [lean_params, paper_params])
def test_honest_a_with_a_good_witness_wins_against_every_b(family):
    problem = PanelChoice((0.2, 0.85, 0.4))
    params = family(problem.lipschitz, problem.steps)
    for b in strategy_names(P, "B"):
        res, (lo, _) = run(problem, params, "honest", b)
        assert lo >= 3 / 5, (b, res.acceptance)
        assert res.details["witnesses"] == {"01": 3000}


@pytest.mark.parametrize("family", [lean_params, paper_params])
def test_without_a_good_witness_no_a_gets_past_honest_b(family):
    problem = PanelChoice((0.2, 0.3, 0.1))
    params = family(problem.lipschitz, problem.steps)
    spec = [
        *strategy_names(P, "A"),
        "choose:pick=random,debate=evade",
        "choose:pick=worst,debate=blatant",
        "choose:pick=first,debate=shift",
    ]
    for a in spec:
        res, (_, hi) = run(problem, params, a, "honest")
        assert hi <= 2 / 5, (a, res.acceptance)


class BadWitness(Player):
    def witnesses(self, problem, n, rng):
        return [b"\x01\x01\x01"] * n


def test_malformed_witnesses_lose_with_a_reason():
    problem = PanelChoice((0.9, 0.9))
    a = BadWitness()
    a.spec = StrategySpec(P, "A", "bad")
    res = play_stochastic_witness(
        problem,
        lean_params(problem.lipschitz, problem.steps),
        a,
        make_strategy(P, "B", "honest"),
        debates=20,
    )
    assert res.acceptance == 0 and "malformed witness" in res.forfeits[0].reason


def test_problem_input_errors_are_clear():
    with pytest.raises(ProtocolError, match=r"\[0, 1\]"):
        PanelChoice((1.2,))
    problem = PanelChoice((0.5, 0.5))
    with pytest.raises(ProtocolError, match="T ="):
        play_stochastic_witness(
            problem,
            lean_params(1.0, 1),
            make_strategy(P, "A", "honest"),
            make_strategy(P, "B", "honest"),
        )
