"""The screening oracle machine: its judgement oracle, plain runs, bisection, the transcript."""

from __future__ import annotations

import numpy as np
import pytest

from proofgames import FunctionOracle, MachineFormatError, OracleError, OracleLedger
from proofgames.machines.examples import example_names, get_example
from proofgames.machines.screening import (
    RULES,
    Screening,
    judgement_oracle,
    screening_machine,
    screening_program,
    screening_transcript,
)
from proofgames.machines.turing import parse_tm
from proofgames.protocols import play_bisection, play_cross_examination
from proofgames.strategies import make_strategy


def random_screenings(count: int, seed: int = 0) -> list[Screening]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n, w, k = int(rng.integers(1, 8)), int(rng.integers(1, 6)), int(rng.integers(1, 5))
        items = tuple(bytes(rng.integers(0, 2, w).astype(np.uint8)) for _ in range(n))
        out.append(Screening(items, k, list(RULES)[i % len(RULES)]))
    return out


def plain_run(s: Screening, steps: int, oracle=None):
    ledger = OracleLedger(oracle or s.oracle())
    tm = s.machine()
    return tm, tm.advance(tm.initial(), steps, ledger.view("V")), ledger.counts()["V"]


EXAMPLES = ["screening", "screening-strict"]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_the_program_fits_the_text_format_with_6k_plus_1_states(k: int):
    program = parse_tm(screening_program(k))
    assert program.states == 6 * k + 1 <= 25
    assert program.symbols == 4


@pytest.mark.parametrize("k", [0, 5, -1])
def test_a_threshold_outside_1_to_4_is_refused(k: int):
    with pytest.raises(MachineFormatError, match="threshold k"):
        screening_program(k)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ((), "at least one item"),
        ((b"\x01\x00", b"\x01"), "item 1 has 1 bits"),
        ((b"",), "item 0 has 0 bits"),
        ((b"\x01\x02",), "not a bit"),
    ],
)
def test_malformed_items_are_refused(items: tuple[bytes, ...], message: str):
    with pytest.raises(MachineFormatError, match=message):
        screening_machine(items, 1)


def test_an_unknown_rule_is_refused():
    with pytest.raises(MachineFormatError, match="unknown rule 'vibes'"):
        judgement_oracle("vibes")


def test_plain_runs_decide_correctly_and_halt_exactly_when_the_kth_item_passes():
    for s in random_screenings(150):
        tm, final, queries = plain_run(s, s.steps)
        assert tm.accepts(final) == s.decision == int(sum(s.verdicts) >= s.k)
        assert queries == s.queries
        if s.decision:
            assert tm.accepts(plain_run(s, s.steps - 1)[1]) == 0
        else:  # in the rejecting loop for good, the tape unchanged
            tm, later, more = plain_run(s, s.steps + 100)
            assert tm.accepts(later) == 0 and later.state == 6 * s.k
            assert later.tape == tm.initial().tape and more == len(s.items)


def test_each_item_is_asked_about_exactly_once_and_the_query_is_its_cells():
    asked: list[bytes] = []
    s = get_example("screening-strict").build()
    recorder = FunctionOracle(lambda z: (asked.append(z), RULES["majority"](z))[1])
    _, _, queries = plain_run(s, s.steps + 50, recorder)
    assert asked == list(s.items) and queries == len(s.items) == 6


def test_the_recorded_verdicts_give_the_same_decision_as_the_judge():
    for name in EXAMPLES:
        s = get_example(name).build()
        tm, final, _ = plain_run(s, s.steps, s.recorded_oracle())
        assert tm.accepts(final) == s.decision
    with pytest.raises(OracleError, match="no answer for query"):
        s.recorded_oracle().answer(b"\x00\x00\x00\x00\x00", None)


@pytest.mark.parametrize("answer", [2, -1, 0.5, "yes"])
def test_an_oracle_answering_something_other_than_a_bit_raises(answer: object):
    s = get_example("screening").build()
    bad = FunctionOracle(lambda z: answer, name="confused")
    with pytest.raises(OracleError, match="must be a bit 0 or 1"):
        plain_run(s, s.steps, bad)
    with pytest.raises(OracleError, match="must be a bit 0 or 1"):
        s.transcript().run(OracleLedger(bad).view("V"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_registered_examples_match_their_facts(name: str):
    example = get_example(name)
    facts, s = dict(example.facts), example.build()
    assert example.kind == "oracle-tm" and name in example_names("oracle-tm")
    assert (s.decision, s.queries, s.steps) == (
        facts["decision"],
        facts["queries"],
        facts["decided_after"],
    )
    assert example.steps == s.steps
    tm, final, queries = plain_run(s, example.steps)
    assert (tm.accepts(final), queries) == (facts["decision"], facts["queries"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_bisection_with_honest_players_reaches_the_machines_decision(name: str):
    s = get_example(name).build()
    for b in ("honest", "random", "first", "second"):
        out = play_bisection(
            s.machine(),
            s.steps,
            s.decision,
            make_strategy("bisection", "A", "honest"),
            make_strategy("bisection", "B", b),
            oracle=s.oracle(),
            seed=3,
        )
        assert out.winner == "A", out.reason
        assert out.costs.verifier_queries <= 1
        assert out.costs.prover_queries["A"] >= s.queries


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("liar", ["lie-output", "flip-step", "flip-step:at=0.1", "late-lie"])
def test_bisection_exposes_a_false_screening_claim(name: str, liar: str):
    s = get_example(name).build()
    out = play_bisection(
        s.machine(),
        s.steps,
        1 - s.decision,
        make_strategy("bisection", "A", liar),
        make_strategy("bisection", "B", "honest"),
        oracle=s.oracle(),
        seed=0,
    )
    assert out.winner == "B", out.reason
    assert out.costs.verifier_queries <= 1
    assert out.costs.prover_queries["B"] >= 1


def test_the_transcript_version_agrees_with_the_turing_machine():
    for s in random_screenings(60, seed=1):
        ledger = OracleLedger(s.oracle())
        y = s.transcript().run(ledger.view("V"))
        assert y[-1] == s.decision
        assert ledger.counts()["V"] == len(s.items)


def test_the_transcript_has_small_relevant_sets_and_one_query_per_item():
    m = screening_transcript([b"\x01\x01\x00", b"\x00\x00\x01"], k=2)
    assert m.length == 5 and m.alphabet == 3
    assert [m.is_query(t) for t in range(m.length)] == [True, False, True, False, False]
    assert all(len(m.relevant(t)) <= 2 for t in range(m.length))
    assert m.input_positions(2) == (3, 4, 5)


@pytest.mark.parametrize("name", EXAMPLES)
def test_cross_examination_on_the_transcript_decides_like_the_machine(name: str):
    s = get_example(name).build()
    honest = play_cross_examination(
        s.transcript(),
        s.decision,
        make_strategy("cross-examination", "A", "honest"),
        make_strategy("cross-examination", "B", "honest"),
        oracle=s.oracle(),
    )
    assert honest.winner == "A" and honest.costs.verifier_queries <= 1
    liar = play_cross_examination(
        s.transcript(),
        1 - s.decision,
        make_strategy("cross-examination", "A", "flip-step"),
        make_strategy("cross-examination", "B", "honest"),
        oracle=s.oracle(),
    )
    assert liar.winner == "B"
