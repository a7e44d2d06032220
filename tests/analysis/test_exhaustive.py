"""Exact game values against an all-powerful prover (proofgames.analysis.exhaustive)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from proofgames import (
    BernoulliOracle,
    FunctionOracle,
    Oracle,
    ProtocolError,
    TranscriptBuilder,
    TranscriptMachine,
    gates,
)
from proofgames._registry import StrategySpec
from proofgames.analysis.exhaustive import (
    bisection_minimax,
    bisection_value,
    cross_examination_value,
    exact_completeness_soundness,
    surviving_transcripts,
)
from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.protocols import play_cross_examination
from proofgames.protocols.cross_examination import CrossExaminationA, CrossExaminationB

# ----------------------------------------------------------------- small machines


def parity(bits: list[int]) -> TranscriptMachine:
    b = TranscriptBuilder(inputs=bytes(bits))
    acc = b.gate(gates.COPY, inputs=[0])
    for i in range(1, len(bits)):
        acc = b.gate(gates.XOR, inputs=[i], relevant=[acc])
    return b.build(name=f"parity{len(bits)}")


def majority(bits: list[int]) -> TranscriptMachine:
    b = TranscriptBuilder(inputs=bytes(bits))
    copies = [b.gate(gates.COPY, inputs=[i]) for i in range(len(bits))]
    b.gate(gates.majority, relevant=copies)
    return b.build(name=f"majority{len(bits)}")


def and_or(bits: list[int]) -> TranscriptMachine:
    """OR over pairs of (x[2i] AND x[2i+1]), then AND with NOT of the last input."""
    b = TranscriptBuilder(inputs=bytes(bits))
    ands = [b.gate(gates.AND, inputs=[i, i + 1]) for i in range(0, len(bits) - 1, 2)]
    any_pair = b.gate(gates.OR, relevant=ands)
    last = b.gate(gates.NOT, inputs=[len(bits) - 1])
    b.gate(gates.AND, relevant=[any_pair, last])
    return b.build(name="and-or")


def with_oracle(bits: list[int]) -> TranscriptMachine:
    """Two computed bits form a query; the oracle's answer is XORed with an input."""
    b = TranscriptBuilder(inputs=bytes(bits))
    u = b.gate(gates.AND, inputs=[0, 1])
    v = b.gate(gates.OR, inputs=[1, 2])
    q = b.query(lambda row: bytes(int(x) for x in row), relevant=[u, v], label="judge")
    b.gate(gates.XOR, inputs=[3], relevant=[q])
    return b.build(name="oracle-circuit")


JUDGE = FunctionOracle(lambda z: int(z[0] == z[1]), name="equal")


def ternary_sum(trits: list[int]) -> TranscriptMachine:
    """Alphabet 3: a running sum mod 3, then the bit [sum == 0]."""
    b = TranscriptBuilder(inputs=bytes(trits), alphabet=3)
    acc = b.gate(gates.COPY, inputs=[0])
    for i in range(1, len(trits)):
        acc = b.gate(lambda v: v.sum(axis=1) % 3, inputs=[i], relevant=[acc])
    b.gate(lambda v: (v[:, 0] == 0).astype(np.int64), relevant=[acc])
    return b.build(name="ternary-sum")


Case = tuple[str, Callable[[], TranscriptMachine], Oracle | None]

CASES: list[Case] = [
    *[(f"parity{bits}", lambda b=bits: parity(b), None) for bits in ([1, 0, 1, 1, 0],
                                                                       [0, 0, 1, 1, 0, 1, 1])],
    *[(f"majority{bits}", lambda b=bits: majority(b), None) for bits in ([1, 0, 1, 1, 0],
                                                                           [0, 0, 1, 0, 1])],
    *[(f"and-or{bits}", lambda b=bits: and_or(b), None) for bits in ([1, 1, 0, 1, 0],
                                                                       [0, 1, 1, 0, 0])],
    *[(f"oracle{bits}", lambda b=bits: with_oracle(b), JUDGE) for bits in ([1, 1, 0, 0],
                                                                             [0, 1, 1, 1])],
    ("ternary", lambda: ternary_sum([2, 1, 0, 2, 1]), None),
    ("ternary-nonzero", lambda: ternary_sum([2, 2, 0, 1]), None),
]  # fmt: skip


def tableau_cases() -> list[TableauTranscript]:
    """Tableaux of tiny Turing machines whose alphabet**length fits the default limit."""
    out = []
    for text, space, steps in [("1RB1LB_1LA1RZ", 1, 3), ("1RB1LB_1LA1RZ", 2, 1),
                               ("------", 1, 4), ("1RB---_------", 2, 1)]:  # fmt: skip
        tab = TableauTranscript(TuringMachine(text, space=space, origin=0), steps)
        if tab.alphabet**tab.length <= 1 << 22:
            out.append(tab)
    return out


# ------------------------------------------------------------- cross-examination


@pytest.mark.parametrize(("name", "build", "oracle"), CASES, ids=[c[0] for c in CASES])
def test_cross_examination_is_complete_and_sound_against_every_transcript(
    name: str, build: Callable[[], TranscriptMachine], oracle: Oracle | None
) -> None:
    m = build()
    truth = int(m.run(None if oracle is None else _view(oracle))[-1])
    g = exact_completeness_soundness(m, oracle=oracle)
    assert (g.completeness, g.soundness) == (1.0, 0.0)
    assert g.honest.truth == g.dishonest.truth == truth
    assert g.honest.claim == truth and g.dishonest.claim == 1 - truth
    assert g.honest.strategies_searched == (m.alphabet**m.length, m.length)
    assert g.honest.candidates == m.alphabet**m.length
    assert g.honest.defensible == g.honest.winning == 1 and g.dishonest.winning == 0


@pytest.mark.parametrize(("name", "build", "oracle"), CASES, ids=[c[0] for c in CASES])
def test_the_only_surviving_transcript_is_the_true_one(
    name: str, build: Callable[[], TranscriptMachine], oracle: Oracle | None
) -> None:
    m = build()
    true = m.run(None if oracle is None else _view(oracle))
    survivors = surviving_transcripts(m, oracle=oracle)
    assert survivors.tolist() == [true.tolist()]
    assert surviving_transcripts(m, int(true[-1]), oracle=oracle).tolist() == [true.tolist()]
    assert surviving_transcripts(m, 1 - int(true[-1]), oracle=oracle).shape == (0, m.length)


@pytest.mark.parametrize("machine", tableau_cases(), ids=lambda m: f"{m.name}-S{m.width}")
def test_tableau_of_a_tiny_turing_machine_is_sound(machine: TableauTranscript) -> None:
    tm, steps = machine.machine, machine.steps
    truth = tm.accepts(tm.advance(tm.initial(), steps))
    g = exact_completeness_soundness(machine)
    assert (g.completeness, g.soundness, g.honest.truth) == (1.0, 0.0, truth)
    assert surviving_transcripts(machine).tolist() == [machine.run().tolist()]


def test_tableau_cases_cover_both_outputs() -> None:
    truths = {exact_completeness_soundness(m).honest.truth for m in tableau_cases()}
    assert truths == {0, 1}


def test_oracle_queries_are_counted_once_per_distinct_query_input() -> None:
    m = with_oracle([1, 1, 0, 0])
    g = cross_examination_value(m, claim=0, oracle=JUDGE)
    query_steps = [t for t in range(m.length) if m.is_query(t)]
    assert g.verifier_queries == sum(m.alphabet ** len(m.relevant(t)) for t in query_steps)
    assert g.verifier_queries > 0


def test_exhaustive_value_matches_playing_the_real_protocol_every_way() -> None:
    """max over transcripts of min over challenges, each game played by the protocol."""
    for m in (and_or([1, 1, 0, 1, 0]), parity([1, 0, 1])):
        for claim in (0, 1):
            best = max(
                min(_play(m, list(a), t, claim) for t in range(m.length))
                for a in itertools.product(range(m.alphabet), repeat=m.length)
            )
            assert cross_examination_value(m, claim).value == best


def test_larger_binary_instance_is_vectorized() -> None:
    m = parity([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0])  # 2^18 transcripts
    g = exact_completeness_soundness(m)
    assert (g.completeness, g.soundness) == (1.0, 0.0)
    assert g.honest.candidates == 2**18 and g.honest.defensible == 1
    assert g.honest.seconds < 5


# ---------------------------------------------------------------------- bisection

BB2 = "1RB1LB_1LA1RZ"
LOOPER = "0RB0LA_1LA1RB"  # two states, never halts


@pytest.mark.parametrize(("text", "origin"), [(BB2, 1), (BB2, 2), (LOOPER, 1)])
@pytest.mark.parametrize("steps", range(1, 9))
def test_bisection_is_complete_and_sound_on_tiny_machines(
    text: str, origin: int, steps: int
) -> None:
    tm = TuringMachine(text, space=4, origin=origin)
    truth = tm.accepts(tm.advance(tm.initial(), steps))
    g = exact_completeness_soundness(tm, steps)
    assert (g.completeness, g.soundness, g.honest.truth) == (1.0, 0.0, truth)
    p = tm.program
    assert g.honest.candidates == (p.states + 2) * tm.size * p.symbols**tm.size
    assert g.honest.defensible == 1  # only the true final configuration can be defended


def test_bisection_instances_include_halting_and_non_halting_runs() -> None:
    halts = TuringMachine(BB2, space=4, origin=2)
    assert bisection_value(halts, 6, claim=1).truth == 1
    assert bisection_value(halts, 5, claim=1).truth == 0
    loop = TuringMachine(LOOPER, space=4, origin=1)
    assert all(loop.advance(loop.initial(), t).state < loop.program.halt for t in range(9))


@pytest.mark.parametrize(
    ("text", "space", "origin", "horizon"),
    [(BB2, 1, 0, 8), (BB2, 2, 1, 6), (LOOPER, 2, 0, 6), ("1RB---_------", 2, 0, 5)],
)
def test_dynamic_programme_agrees_with_explicit_minimax(
    text: str, space: int, origin: int, horizon: int
) -> None:
    tm = TuringMachine(text, space=space, origin=origin)
    for steps in range(1, horizon + 1):
        for claim in (0, 1):
            dp = bisection_value(tm, steps, claim)
            mm = bisection_minimax(tm, steps, claim)
            assert (dp.value, dp.truth, dp.defensible, dp.winning, dp.candidates) == (
                mm.value, mm.truth, mm.defensible, mm.winning, mm.candidates)  # fmt: skip
            assert mm.value == float(claim == mm.truth)
            assert 0 < mm.strategies_searched[0] <= dp.strategies_searched[0]


def test_explicit_minimax_agrees_on_a_machine_that_halts_within_the_horizon() -> None:
    tm = TuringMachine("1RB---_------", space=2, origin=0)
    assert bisection_minimax(tm, 2, claim=1).value == 1.0
    assert bisection_minimax(tm, 2, claim=0).value == 0.0


def test_bisection_with_a_deterministic_oracle_counts_verifier_queries() -> None:
    tm = TuringMachine("1RB0LA_1LA1RZ", space=3, origin=1, query_states=["B"])
    oracle = FunctionOracle(lambda z: z[0], name="read")
    for steps in range(1, 7):
        truth = tm.accepts(tm.advance(tm.initial(), steps, _view(oracle)))
        g = exact_completeness_soundness(tm, steps, oracle=oracle)
        assert (g.completeness, g.soundness, g.honest.truth) == (1.0, 0.0, truth)
        assert g.honest.verifier_queries > 0


# ------------------------------------------------------------------------ refusals


def test_refuses_too_many_transcripts_naming_the_size() -> None:
    m = parity([1, 0] * 11 + [1])  # 23 binary entries
    with pytest.raises(ProtocolError, match=r"2\^23 = 8388608 transcripts"):
        cross_examination_value(m, claim=1)
    with pytest.raises(ProtocolError, match=r"2\^5 = 32 transcripts; the limit is 16"):
        surviving_transcripts(parity([1, 0, 1, 1, 0]), max_transcripts=16)
    big = TableauTranscript(TuringMachine.sized(BB2, steps=6), 6)
    with pytest.raises(ProtocolError, match=r"10\^32 transcripts"):
        exact_completeness_soundness(big)


def test_refuses_too_many_configurations_naming_the_size() -> None:
    with pytest.raises(ProtocolError, match=r"2\^12 tapes = 196608 configurations"):
        bisection_value(TuringMachine(BB2, space=12), 4, claim=1)
    with pytest.raises(ProtocolError, match="256 configurations; the limit is 64"):
        bisection_minimax(TuringMachine(BB2, space=4), 4, claim=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda: cross_examination_value(parity([1, 0]), claim=2),
        lambda: bisection_value(TuringMachine(BB2, space=2), 0, claim=1),
        lambda: exact_completeness_soundness(TuringMachine(BB2, space=2)),
        lambda: cross_examination_value(
            with_oracle([1, 1, 0, 0]), 1, oracle=BernoulliOracle(lambda z: 0.5)
        ),
        lambda: exact_completeness_soundness("not a machine"),  # type: ignore[arg-type]
    ],
    ids=["bad-claim", "bad-steps", "missing-steps", "stochastic-oracle", "not-a-machine"],
)
def test_rejects_bad_arguments_with_protocol_error(call: Callable[[], Any]) -> None:
    with pytest.raises(ProtocolError):
        call()


# ------------------------------------------------------------------------- helpers


def _view(oracle: Oracle) -> Any:
    from proofgames import OracleLedger

    return OracleLedger(oracle).view("A")


class _Commit(CrossExaminationA):
    def __init__(self, transcript: list[int]) -> None:
        self.transcript = np.array(transcript, dtype=np.int64)
        self.spec = StrategySpec("cross-examination", "A", "fixed")

    def commit(self, ctx: Any) -> None:
        return None

    def entries(self, ctx: Any, positions: Any) -> Any:
        return self.transcript[np.asarray(positions, dtype=np.int64)]


class _Challenge(CrossExaminationB):
    def __init__(self, position: int) -> None:
        self.position = position
        self.spec = StrategySpec("cross-examination", "B", "fixed")

    def challenge(self, ctx: Any, read: Any) -> int:
        return self.position


def _play(m: TranscriptMachine, transcript: list[int], position: int, claim: int) -> int:
    out = play_cross_examination(m, claim, _Commit(transcript), _Challenge(position))
    return out.verdict
