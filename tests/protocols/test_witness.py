"""Debate with a witness (Figure 2): completeness, soundness, forfeits, reproducibility."""

from __future__ import annotations

import json
import re

import pytest

from proofgames import ProtocolError
from proofgames._registry import Player, StrategySpec
from proofgames.machines.examples import get_example
from proofgames.machines.sat import SatProblem
from proofgames.protocols import play_witness
from proofgames.protocols.witness import WitnessA
from proofgames.strategies import make_strategy, strategy_names

P = "witness"
UNSAT_TINY = SatProblem.from_dimacs("p cnf 2 3\n1 2 0\n-1 0\n-2 0\n", name="unsat-tiny")


def play(problem: SatProblem, a: str, b: str, seed: int = 0):
    return play_witness(problem, 1, make_strategy(P, "A", a), make_strategy(P, "B", b), seed=seed)


def custom(player: Player) -> Player:
    player.spec = StrategySpec(P, "A", type(player).__name__)
    return player


def test_the_required_strategies_are_registered_with_honest_first():
    a, b = strategy_names(P, "A"), strategy_names(P, "B")
    assert a[0] == "honest" and b[0] == "honest"
    assert {"honest", "guess", "lie-output", "flip-step", "malformed"} <= set(a)
    assert {"honest", "random", "first", "last"} <= set(b)


@pytest.mark.parametrize("example", ["sat-small", "sat-planted-40"])
@pytest.mark.parametrize("b", strategy_names(P, "B"))
def test_honest_a_wins_with_a_valid_witness_against_every_b(example: str, b: str):
    problem = get_example(example).build()
    for seed in range(3):
        out = play(problem, "honest", b, seed)
        assert (out.winner, out.verdict, out.protocol) == ("A", 1, "witness")
        witness = bytes(int(c) for c in out.messages[0].content)
        assert out.messages[0].kind == "witness" and problem.cnf.evaluate(list(witness))


A_STRATEGIES = [
    *strategy_names(P, "A"),
    "flip-step:at=0.0",
    "flip-step:at=0.9",
    "malformed:kind=symbols",
]


@pytest.mark.parametrize(
    "problem", [get_example("sat-php-3-2").build(), UNSAT_TINY], ids=lambda p: p.name
)
@pytest.mark.parametrize("a", A_STRATEGIES)
def test_honest_b_wins_when_the_formula_is_unsatisfiable_against_every_a(problem, a: str):
    for seed in range(3):
        out = play(problem, a, "honest", seed)
        assert (out.winner, out.verdict) == ("B", 0), out.reason


def test_honest_a_without_a_witness_sends_its_best_guess_and_the_true_transcript():
    out = play(get_example("sat-php-3-2").build(), "honest", "random")
    assert len(out.messages[0].content) == 6
    assert out.reason == "A loses: A's transcript ends in 0, not in its claim 1"


def test_a_liars_wrong_step_is_the_one_honest_b_challenges():
    out = play(get_example("sat-php-3-2").build(), "flip-step", "honest")
    check = next(m for m in out.messages if m.kind == "check")
    assert check.content["entry"] != check.content["recomputed"]
    assert "is wrong" in out.reason


@pytest.mark.parametrize(
    ("a", "message"),
    [
        ("malformed", "malformed witness: witness has 6 symbols; .* needs exactly 5"),
        ("malformed:kind=symbols", "malformed witness: witness symbol 0 .* is 2"),
    ],
)
def test_a_malformed_witness_makes_a_lose_with_a_recorded_reason(a: str, message: str):
    out = play(get_example("sat-small").build(), a, "honest")
    assert (out.winner, out.verdict) == ("B", 0)
    assert out.reason.startswith("A loses: ")
    assert pytest.approx(0) == out.costs.verifier_reads
    assert [m.kind for m in out.messages] == ["verdict"]  # nothing malformed enters the log
    assert re.search(message, out.reason)


class TextWitness(WitnessA):
    def witness(self, ctx):
        return "01101"


class RaisingWitness(WitnessA):
    def witness(self, ctx):
        raise RuntimeError("no idea")


class NotAWitnessPlayer(Player):
    pass


@pytest.mark.parametrize(
    ("player", "message"),
    [
        (TextWitness(), "malformed witness: witness must be bytes, got a str"),
        (RaisingWitness(), "witness raised RuntimeError: no idea"),
        (NotAWitnessPlayer(), "witness raised AttributeError: .*NotAWitnessPlayer.* no attribute"),
    ],
)
def test_a_witness_that_is_not_bytes_or_a_failing_a_forfeits(player: Player, message: str):
    out = play_witness(
        get_example("sat-small").build(), 1, custom(player), make_strategy(P, "B", "random")
    )
    assert out.winner == "B" and out.reason.startswith("A loses: ")
    assert re.search(message, out.reason)


@pytest.mark.parametrize("claim", [0, 2, -1])
def test_a_claim_other_than_1_is_refused_with_a_clear_error(claim: int):
    problem = get_example("sat-small").build()
    with pytest.raises(ProtocolError, match="proves membership, so the claim must be 1"):
        play_witness(
            problem, claim, make_strategy(P, "A", "honest"), make_strategy(P, "B", "honest")
        )


@pytest.mark.parametrize("a", ["honest", "guess", "flip-step", "random-step"])
@pytest.mark.parametrize("b", ["random", "honest"])
def test_the_same_seed_gives_an_identical_outcome(a: str, b: str):
    for example in ("sat-php-3-2", "sat-planted-40"):
        problem = get_example(example).build()
        assert play(problem, a, b, seed=11) == play(problem, a, b, seed=11)


def test_v_reads_a_constant_number_of_entries_and_at_most_one_witness_bit():
    problem = get_example("sat-planted-40").build()
    out = play(problem, "honest", "first")  # step 0 reads one witness bit and no entry
    c = out.costs
    assert (c.verifier_reads, c.verifier_bits, c.verifier_steps) == (2, 3, 1)
    assert c.verifier_queries == 0 and c.rounds == 1
    for seed in range(10):
        c = play(problem, "guess", "random", seed).costs
        assert c.verifier_reads <= 4 and c.verifier_bits <= 4  # output, I(t), t; or a bit
    c = play(problem, "honest", "honest").costs
    assert c.prover_steps["A"] == problem.steps == c.prover_reads["B"]


def test_outcome_records_the_problem_and_serializes_to_json():
    out = play(get_example("sat-small").build(), "guess", "last")
    d = out.to_dict()
    assert (d["machine"], d["protocol"], d["steps"]) == ("sat-small", "witness", 23)
    assert d["prover_a"] == {"name": "guess", "args": {}}
    json.dumps(d)


def test_bad_strategy_arguments_are_refused():
    with pytest.raises(ProtocolError, match="'length' or 'symbols'"):
        make_strategy(P, "A", "malformed:kind=bogus")
