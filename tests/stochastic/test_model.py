from __future__ import annotations

import numpy as np
import pytest

from proofgames import (
    BernoulliOracle,
    ExplicitTranscriptMachine,
    FunctionOracle,
    MachineFormatError,
    OracleError,
    OracleLedger,
    RegistryError,
    Step,
    TableOracle,
    TranscriptBuilder,
    gates,
)
from proofgames.protocols import play_cross_examination
from proofgames.strategies import make_strategy, parse_strategy, strategy_names


def majority_with_judgements(bits: bytes) -> ExplicitTranscriptMachine:
    """Ask the oracle about each input bit, then take the majority of the answers."""
    b = TranscriptBuilder(inputs=bits)
    answers = [b.query(lambda v: bytes(v.tolist()), inputs=[i]) for i in range(len(bits))]
    b.gate(gates.majority, relevant=answers)
    return b.build(name="judged-majority")


def test_a_relevant_set_that_points_forward_is_rejected():
    steps = [
        Step((), fn=gates.COPY, inputs=(0,)),
        Step((2,), fn=gates.COPY),
        Step((0,), fn=gates.COPY),
    ]
    with pytest.raises(MachineFormatError, match="points forward to position 2"):
        ExplicitTranscriptMachine(steps, inputs=b"\x01")


def test_reading_outside_the_input_is_rejected():
    with pytest.raises(MachineFormatError, match="input position 3"):
        ExplicitTranscriptMachine([Step((), fn=gates.COPY, inputs=(3,))], inputs=b"\x01")


def test_batch_evaluation_agrees_with_single_evaluation():
    m = majority_with_judgements(bytes([1, 0, 1, 1, 0]))
    values = np.array(
        [
            [a, b, c, d, e]
            for a in (0, 1)
            for b in (0, 1)
            for c in (0, 1)
            for d in (0, 1)
            for e in (0, 1)
        ]
    )
    batch = m.step_batch(m.output_position, values)
    single = [m.step(m.output_position, list(v)) for v in values]
    assert batch.tolist() == single


def test_oracle_calls_are_counted_per_party():
    m = majority_with_judgements(bytes([1, 0, 1]))
    ledger = OracleLedger(FunctionOracle(lambda z: z[0], name="identity"))
    y = m.run(ledger.view("A"))
    assert y.tolist() == [1, 0, 1, 1]
    assert ledger.counts() == {"A": 3, "B": 0, "V": 0}


def test_cross_examination_on_an_oracle_machine_charges_v_one_query():
    m = majority_with_judgements(bytes([1, 0, 1, 1, 0]))
    oracle = FunctionOracle(lambda z: 1 - z[0], name="negation")  # truth: majority of 0,1,0,0,1
    a = make_strategy("cross-examination", "A", "lie-output")
    b = make_strategy("cross-examination", "B", "honest")
    out = play_cross_examination(m, 1, a, b, oracle=oracle, seed=0)
    assert out.winner == "B"
    assert out.costs.verifier_queries <= 1
    assert out.costs.prover_queries["B"] == 5


def test_table_oracle_and_bernoulli_oracle_validate_answers():
    with pytest.raises(OracleError, match="must be a bit"):
        TableOracle({b"a": 3})
    with pytest.raises(OracleError, match="no answer"):
        TableOracle({b"a": 1}).probability(b"b")
    with pytest.raises(OracleError, match=r"\[0, 1\]"):
        BernoulliOracle(lambda z: 1.5).probability(b"")
    rng = np.random.default_rng(0)
    draws = [BernoulliOracle(lambda z: 0.25).answer(b"", rng) for _ in range(4000)]
    assert 0.2 < np.mean(draws) < 0.3


def test_strategy_specs_record_name_and_arguments():
    p = make_strategy("bisection", "A", "flip-step:at=0.25")
    assert p.spec.name == "flip-step" and dict(p.spec.args) == {"at": 0.25}
    assert parse_strategy("x:a=1,b=two") == ("x", {"a": 1, "b": "two"})
    with pytest.raises(RegistryError, match="registered: honest"):
        make_strategy("bisection", "A", "no-such")
    with pytest.raises(RegistryError, match="bad arguments"):
        make_strategy("bisection", "A", "honest:at=1")
    assert "honest" in strategy_names("cross-examination", "B")


def test_batched_oracle_answers_match_single_answers_and_are_counted():
    m = majority_with_judgements(bytes([1, 0, 1]))
    ledger = OracleLedger(FunctionOracle(lambda z: z[0], name="identity"))
    got = m.step_batch(0, np.zeros((5, 0), dtype=np.int64), ledger.view("V"))
    assert got.tolist() == [1] * 5
    assert ledger.counts()["V"] == 5


def test_stochastic_batch_answers_have_the_oracle_probability():
    ledger = OracleLedger(BernoulliOracle(lambda z: 0.3 if z == b"a" else 0.9))
    rng = np.random.default_rng(1)
    a = ledger.view("B").ask_batch([b"a"] * 20000, rng)
    b = ledger.view("B").ask_batch([b"b"] * 20000, rng)
    assert abs(a.mean() - 0.3) < 0.02 and abs(b.mean() - 0.9) < 0.02
    assert ledger.counts()["B"] == 40000
