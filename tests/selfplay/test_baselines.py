"""Consultancy and no debate: cross-examination's tableau with V's rule changed."""

import pytest

from proofgames.errors import ProtocolError
from proofgames.selfplay import TuringFamily, make_rules
from proofgames.selfplay.baselines import ConsultancyRules, NoDebateRules
from proofgames.selfplay.exploit import game_value, tableau_value
from proofgames.selfplay.rules import CHANCE, get_rules

HALTS = "1RZ1RZ"  # halts at its first step: output 1 for every T >= 1


def commit(rules, entries):
    s = rules.initial()
    for e in entries:
        s = rules.apply(s, e)
    return s


def test_both_baselines_are_registered_as_self_play_games() -> None:
    assert get_rules("consultancy").chance and not get_rules("no-debate").chance
    assert isinstance(make_rules("consultancy"), ConsultancyRules)
    assert isinstance(make_rules("no-debate"), NoDebateRules)


@pytest.mark.parametrize("wrong", [0, 2, 5])
def test_consultancy_accepts_a_lie_with_one_minus_its_wrong_share(wrong: int) -> None:
    rules = ConsultancyRules(HALTS, space=2, origin=0, steps=1, claim=1)
    true = rules.machine.run().tolist()
    assert len(true) == rules.length == 6
    s = commit(rules, true)
    assert (s.phase, s.player) == ("challenge", CHANCE)
    assert rules.legal(s) == [] and not rules.mask(s).any()
    outcomes = rules.chance_outcomes(s)
    assert [o for o, _ in outcomes] == list(range(6)) and {q for _, q in outcomes} == {1 / 6}
    assert game_value(rules, s, (None, None)) == pytest.approx(1.0)  # the truth passes
    if wrong < 5:  # corrupt one row entry: exactly the steps that read it may fail
        bad = list(true)
        bad[wrong] = (bad[wrong] + 1) % rules.alphabet
        s = commit(rules, bad)
        caught = sum(1 - rules.apply(s, o).verdict for o, _ in outcomes)
        assert caught >= 1
        assert game_value(rules, s, (None, None)) == pytest.approx(1 - caught / 6)


def test_consultancy_refuses_a_position_v_cannot_check() -> None:
    rules = ConsultancyRules(HALTS, space=2, origin=0, steps=1, claim=1)
    s = commit(rules, rules.machine.run().tolist())
    with pytest.raises(ProtocolError, match="not a position"):
        rules.apply(s, 6)


def test_an_illegal_entry_forfeits_under_both_baselines() -> None:
    for cls in (ConsultancyRules, NoDebateRules):
        rules = cls(HALTS, space=2, origin=0, steps=1, claim=0)
        s = rules.apply(rules.initial(), 99)
        assert (s.verdict, s.forfeited_by) == (0, "A")
        assert "A played 99 as its commit" in s.reason


def test_no_debate_accepts_any_transcript_of_any_claim() -> None:
    for claim in (0, 1):
        rules = NoDebateRules(HALTS, space=2, origin=0, steps=1, claim=claim)
        s = commit(rules, [0] * rules.length)
        assert s.verdict == 1 and s.reason == f"no debate: V accepts the claim {claim}"
        assert tableau_value(rules, claim) == 1.0


def test_tableau_values_match_the_generic_search_on_a_family() -> None:
    fam = TuringFamily(space=1, max_steps=1, states=1, halt_share=0.5)
    for inst in fam.split(seed=1, train=0, test=4)[1]:
        for protocol in ("cross-examination", "consultancy", "no-debate"):
            for claim in (0, 1):
                rules = make_rules(protocol, **inst.params(), claim=claim)
                exact = game_value(rules, rules.initial(), (None, None))
                assert tableau_value(rules, claim) == pytest.approx(exact)


@pytest.mark.parametrize("protocol", ["consultancy", "no-debate"])
def test_both_baselines_pass_openspiels_random_simulation(protocol: str) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    from proofgames.selfplay.openspiel import load_game

    for claim in (-1, 0, 1):
        for inst in TuringFamily(space=3, max_steps=4).split(claim + 20, 2, 0)[0]:
            game = load_game(protocol, **inst.params(), claim=claim, horizon=4)
            pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("protocol", ["consultancy", "no-debate"])
def test_both_baselines_pass_pettingzoos_api_and_seed_tests(protocol: str) -> None:
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test, seed_test

    from proofgames.selfplay.pettingzoo import DebateEnv

    fam = TuringFamily(space=2, max_steps=4)
    api_test(DebateEnv(protocol, fam, claim=-1), num_cycles=100)
    seed_test(lambda: DebateEnv(protocol, fam, claim=1), num_cycles=100)
