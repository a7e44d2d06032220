from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgames import (
    Configuration,
    ConfigurationError,
    FunctionOracle,
    MachineFormatError,
    OracleError,
    OracleLedger,
    ProtocolError,
)
from proofgames.machines import TuringMachine, parse_tm


def reference_run(text: str, steps: int, space: int, origin: int) -> tuple[int, int, bytes]:
    """An independent, obviously correct pure-Python simulator."""
    groups = text.split("_")
    n = len(groups)
    tape, head, state = [0] * space, origin, 0
    for _ in range(steps):
        if state >= n:
            break
        tr = groups[state][3 * tape[head] : 3 * tape[head] + 3]
        if tr == "---":
            state = n
            continue
        tape[head] = int(tr[0])
        nxt = n if tr[2] in "ZH" else ord(tr[2]) - ord("A")
        h = head + (1 if tr[1] == "R" else -1)
        if not 0 <= h < space:
            state = n + 1
            continue
        head, state = h, nxt
    return state, head, bytes(tape)


def test_two_state_champion_halts_after_six_steps_with_four_ones():
    tm = TuringMachine.sized("1RB1LB_1LA1RZ", 100)
    five = tm.advance(tm.initial(), 5)
    six = tm.advance(tm.initial(), 6)
    assert tm.accepts(five) == 0
    assert tm.accepts(six) == 1
    assert sum(six.tape) == 4
    assert tm.advance(six, 50) == six  # halting is absorbing


def test_five_state_champion_facts():
    tm = TuringMachine.sized("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 47_176_870)
    final, work = tm.run_steps(tm.initial(), 47_176_870)
    assert tm.accepts(final) == 1
    assert sum(final.tape) == 4098
    assert work == 47_176_870
    assert tm.size == 12_289
    before, _ = tm.run_steps(tm.initial(), 47_176_869)
    assert tm.accepts(before) == 0


machines = st.integers(2, 4).flatmap(
    lambda n: st.lists(
        st.sampled_from(
            [f"{w}{d}{s}" for w in "01" for d in "LR" for s in "ABCD"[:n] + "Z"] + ["---"]
        ),
        min_size=2 * n,
        max_size=2 * n,
    ).map(lambda trs: "_".join("".join(trs[2 * q : 2 * q + 2]) for q in range(len(trs) // 2)))
)


@settings(max_examples=150, deadline=None)
@given(text=machines, steps=st.integers(1, 60), space=st.integers(1, 12), data=st.data())
def test_engine_matches_reference_simulator(text, steps, space, data):
    origin = data.draw(st.integers(0, space - 1))
    tm = TuringMachine(text, space=space, origin=origin)
    state, head, tape = reference_run(text, steps, space, origin)
    fast = tm.advance(tm.initial(), steps)
    stepwise = tm.initial()
    for _ in range(steps):
        stepwise = tm.step(stepwise)
    assert (fast.state, fast.head, fast.tape) == (state, head, tape)
    assert stepwise == fast


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("1RB1LB_1LA1R", "characters"),
        ("1RB1LB_1LA1RC", "undefined state 'C'"),
        ("1XB1LB_1LA1RZ", "moves 'X'"),
        ("2RB1LB_1LA1RZ", "writes '2'"),
        ("1RB1L", "has 5 characters"),
        ("XYZ", "'XYZ' gives 1 symbol"),
    ],
)
def test_malformed_machine_text_is_rejected_with_a_clear_message(text, fragment):
    with pytest.raises(MachineFormatError, match=fragment):
        parse_tm(text)


def test_undefined_transition_halts_when_executed():
    tm = TuringMachine("1RB---_1LA1RZ", space=8, origin=4)
    c = tm.advance(tm.initial(), 3)  # A0 -> B, B0 -> A, A1 is undefined
    assert tm.accepts(c) == 1


def test_running_off_the_window_enters_the_absorbing_overflow_state():
    tm = TuringMachine("1RA1RA", space=3, origin=0)
    c = tm.advance(tm.initial(), 10)
    assert c.state == tm.program.overflow
    assert tm.accepts(c) == 0
    assert c.tape == bytes([1, 1, 1])


def test_configuration_of_the_wrong_size_is_rejected():
    tm = TuringMachine("1RB1LB_1LA1RZ", space=4)
    with pytest.raises(ConfigurationError, match=r"3 tape cells; .* S = 4"):
        tm.validate(Configuration(0, 0, bytes(3)))
    with pytest.raises(ConfigurationError, match="symbol 5"):
        tm.validate(Configuration(0, 0, bytes([0, 5, 0, 0])))
    with pytest.raises(ConfigurationError, match=r"symbol 255; symbols are 0\.\.1"):
        tm.validate(Configuration(0, 0, bytes([2, 255, 1, 7])))  # the largest is named
    with pytest.raises(ConfigurationError, match="head 9"):
        tm.validate(Configuration(0, 9, bytes(4)))
    with pytest.raises(ConfigurationError, match="state 7"):
        tm.validate(Configuration(7, 0, bytes(4)))


def test_oracle_query_state_reads_the_query_window_and_counts_calls():
    # A is a query state: the answer bit picks the transition; B halts.
    tm = TuringMachine(
        "1RA0RB_1RZ1RZ",
        space=8,
        origin=0,
        tape_input=bytes([1, 1, 0]),
        query_states=["A"],
        query_width=2,
    )
    seen: list[bytes] = []

    def judge(z: bytes) -> int:
        seen.append(z)
        return int(z == bytes([1, 0]))

    ledger = OracleLedger(FunctionOracle(judge))
    c = tm.advance(tm.initial(), 10, ledger.view("A"))
    assert seen == [bytes([1, 1]), bytes([1, 0])]
    assert ledger.counts() == {"A": 2, "B": 0, "V": 0}
    assert tm.accepts(c) == 1


def test_an_oracle_answer_that_is_not_a_bit_is_an_error():
    tm = TuringMachine("1RA0RB_1RZ1RZ", space=4, origin=0, query_states=["A"])
    ledger = OracleLedger(FunctionOracle(lambda z: 2, name="bad"))
    with pytest.raises(OracleError, match="answered 2"):
        tm.advance(tm.initial(), 3, ledger.view("V"))


def test_predecessors_step_into_the_configuration():
    tm = TuringMachine.sized("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 500)
    c = tm.advance(tm.initial(), 300)
    preds = tm.predecessors(c)
    assert tm.advance(tm.initial(), 299) in preds
    assert all(tm.step(p) == c for p in preds)


def test_steps_must_be_positive_for_sizing():
    with pytest.raises(ProtocolError, match="positive"):
        TuringMachine.sized("1RB1LB_1LA1RZ", 0)


def test_query_window_rng_is_not_needed_for_deterministic_oracles():
    ledger = OracleLedger(FunctionOracle(lambda z: 1))
    assert ledger.view("B").ask(b"\x00") == 1
    assert np.isscalar(ledger.counts()["B"])
