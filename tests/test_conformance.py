"""Every registered strategy of every protocol, against the honest opponent.

Completeness: on a true claim honest A wins against every registered B.
Soundness: on a false claim honest B wins against every registered A.
"""

from __future__ import annotations

import math

import pytest

from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.protocols import Outcome, play_bisection, play_cross_examination
from proofgames.strategies import is_honest, make_strategy, strategy_names

PROTOCOLS = ("bisection", "cross-examination")


def play(
    protocol: str, tm: TuringMachine, steps: int, claim: int, a: str, b: str, seed: int = 0
) -> Outcome:
    pa, pb = make_strategy(protocol, "A", a), make_strategy(protocol, "B", b)
    if protocol == "bisection":
        return play_bisection(tm, steps, claim, pa, pb, seed=seed)
    return play_cross_examination(TableauTranscript(tm, steps), claim, pa, pb, seed=seed)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_honest_a_wins_true_claims_against_every_b(protocol, small_run):
    tm, steps = small_run
    truth = tm.known_output
    for b in strategy_names(protocol, "B"):
        for seed in (0, 1):
            out = play(protocol, tm, steps, truth, "honest", b, seed)
            assert out.winner == "A", (b, out.reason)
            assert out.verdict == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_honest_b_wins_false_claims_against_every_a(protocol, small_run):
    tm, steps = small_run
    false = 1 - tm.known_output
    for a in strategy_names(protocol, "A"):
        for seed in (0, 1):
            out = play(protocol, tm, steps, false, a, "honest", seed)
            assert out.winner == "B", (a, out.reason)
            assert out.verdict == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_strategy_is_registered_with_an_honest_one(protocol):
    for role in ("A", "B"):
        names = strategy_names(protocol, role)
        assert len(names) >= 3
        assert is_honest(protocol, role, names[0])


def test_bisection_costs_match_theorem_5_1(small_run):
    tm, steps = small_run
    out = play("bisection", tm, steps, tm.known_output, "honest", "honest")
    rounds = math.ceil(math.log2(steps)) if steps > 1 else 0
    assert out.costs.rounds <= rounds
    assert out.costs.verifier_reads <= rounds + 2
    assert out.costs.verifier_read_unit == "configurations"
    assert out.costs.verifier_steps == 1
    assert out.costs.prover_steps["A"] <= 1.5 * steps + 1
    assert out.costs.prover_steps["B"] <= 1.5 * steps + 1


def test_cross_examination_reads_a_constant_number_of_entries(small_run):
    tm, steps = small_run
    for claim, a, b in (
        (tm.known_output, "honest", "random"),
        (1 - tm.known_output, "flip-step", "honest"),
    ):
        out = play("cross-examination", tm, steps, claim, a, b)
        assert out.costs.verifier_reads <= 5
        assert out.costs.verifier_read_unit == "entries"
        assert out.costs.verifier_steps <= 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_seed_gives_identical_outcome_record(protocol):
    tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107)
    for a, b, claim in (("honest", "random", 1), ("random-step", "honest", 0)):
        first = play(protocol, tm, 107, claim, a, b, seed=7)
        again = play(protocol, tm, 107, claim, a, b, seed=7)
        assert first == again
        assert first.to_dict()["messages"] == again.to_dict()["messages"]


def test_random_strategies_depend_on_the_seed():
    tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107)
    challenges = {
        play("cross-examination", tm, 107, 1, "honest", "random", seed=s).messages[1].content
        for s in range(8)
    }
    assert len(challenges) > 1


BIG = ("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 10_000_000)  # bb5, still running at 10^7


@pytest.fixture(scope="module")
def big_machine() -> TuringMachine:
    return TuringMachine.sized(*BIG)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ten_million_step_debates_are_decided_correctly(protocol, big_machine):
    steps = BIG[1]
    truth = big_machine.known_output
    assert truth == 0
    for b in strategy_names(protocol, "B"):
        out = play(protocol, big_machine, steps, truth, "honest", b)
        assert out.winner == "A", (b, out.reason)
    for a in strategy_names(protocol, "A"):
        out = play(protocol, big_machine, steps, 1 - truth, a, "honest")
        assert out.winner == "B", (a, out.reason)
        assert out.costs.prover_steps["B"] <= 1.5 * steps
    honest = play(protocol, big_machine, steps, truth, "honest", "honest")
    assert honest.costs.prover_steps["A"] <= 1.5 * steps
    if protocol == "bisection":
        assert honest.costs.verifier_reads <= math.ceil(math.log2(steps)) + 2
    else:
        assert honest.costs.verifier_reads <= 5
