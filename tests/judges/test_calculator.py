"""The calculator judge on hostile numeric literals: always a verdict, never a raise (issue 34.4).

Infinity, NaN, huge or tiny powers of ten, powers, division by zero, results too large to
work with, numbers too long to read: each is a judgement (the annotation does not hold,
so the step does not follow), never an exception that a protocol would blame on a party.
"""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from proofgames.errors import OracleError
from proofgames.judges import (
    CalculatorJudge,
    ScriptedJudge,
    StepQuestion,
    annotation_holds,
    evaluate,
)
from proofgames.judges.interface import unreadable_character
from proofgames.language.experiments import gsm8k_games
from proofgames.language.parsers import ANNOTATION, parse_gsm8k
from proofgames.language.provers import CheckerB
from proofgames.language.transcript import StepTranscript, TranscriptFormatError

QUESTION = "Tom has 3 apples. He buys 2 more. How many apples has he?"


def test_an_infinite_literal_is_a_false_step_not_b_forfeiting(tmp_path: Path) -> None:
    # at HEAD: the calculator raised on Fraction('inf'), B "forfeited" and the wrong
    # solution (is_correct false) was accepted
    row = {
        "question": QUESTION,
        "ground_truth": "3 + 2 = <<3+2=5>>5\nA: 5",
        "6b_finetuning": {"is_correct": False, "solution": "He has <<1e999=6>>6 apples\nA: 6"},
    }
    path = tmp_path / "example_model_solutions.jsonl"
    path.write_text(json.dumps(row) + "\n")
    for protocol in ("cross-examination", "bisection", "whole-transcript", "consultancy"):
        [debate] = asyncio.run(gsm8k_games(path, limit=None, protocol=protocol, judge="calculator"))
        assert debate["accepted"] is False, (protocol, debate["reason"])
        assert "forfeit" not in debate["reason"], (protocol, debate["reason"])


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("1e999", "6"),  # a float literal Python reads as inf: raised at HEAD
        ("-1e999", "6"),
        ("1e999 - 1e999", "1"),  # inf - inf = nan: raised at HEAD (exactly it is 0)
        ("1", "1" + "0" * 5000),  # a claimed value past Python's int-string limit: raised
        ("1e-999", "0"),  # underflowed to 0.0 and was accepted at HEAD
        ("1", "1e999"),  # the value was read as its leading 1 and accepted at HEAD
        ("0b1", "1"),  # Python-only literals were accepted as calculator numbers
        ("1_0", "10"),
    ],
)
def test_hostile_literals_make_the_step_false(expr: str, value: str) -> None:
    step = f"He has <<{expr}={value}>>{value[:8]} apples."
    judgement = asyncio.run(CalculatorJudge().judge(StepQuestion("", (), step)))
    assert judgement.p_yes == 0.0 and judgement.detail["problem"]
    assert not annotation_holds(expr, value)


def test_powers_of_ten_are_read_exactly_not_as_floats() -> None:
    # at HEAD 1e-999 evaluated to 0 and 1e999 raised; exactly, both are what they say
    assert evaluate("1e999") == 10**999 and evaluate("1e-999") == Fraction(1, 10**999)
    assert annotation_holds("2.5e3 / 5", "500") and annotation_holds("1", "1e0")


def test_gsm8k_parser_reads_long_numbers_exactly_or_names_why_not() -> None:
    # at HEAD: OverflowError (float of a 400-digit decimal) and ValueError (int-string
    # limit) escaped the parser, and the GSM8K loader with them, as tracebacks
    long = "9" * 400 + ".5"
    assert parse_gsm8k(QUESTION, f"a {long} b\n#### 1").steps[0].result == long
    for line in ("a " + "9" * 5000 + " b", "x <<1=1e99999>>"):
        with pytest.raises(TranscriptFormatError, match="too large to read"):
            parse_gsm8k(QUESTION, f"{line}\n#### 1")
    assert parse_gsm8k(QUESTION, "a 2.50 b\n#### 2.5").steps[0].result == "2.50"  # as written


_DIGITS = st.text("0123456789", min_size=1, max_size=1200)
_LITERALS = st.one_of(
    st.sampled_from(["inf", "nan", "Infinity", "-inf", "1e999", "1e-999", "1e99999", "0b1",
                     "0x1F", "1_000", "1j", "True", "None", "10**10**10", "1/0", "0/0", "1.",
                     ".5", "9" * 199, "1e308*1e308", "(1e1000)*(1e1000)*(1e1000)"]),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.tuples(_DIGITS, st.integers(-(10**6), 10**6)).map(lambda t: f"{t[0]}e{t[1]}"),
    _DIGITS,
)  # fmt: skip
_OPERATORS = st.sampled_from([" + ", " - ", " * ", " / ", " ** ", " % ", ""])
_EXPRESSIONS = st.one_of(
    _LITERALS,
    st.tuples(_LITERALS, _OPERATORS, _LITERALS).map("".join),
    st.tuples(_LITERALS, _OPERATORS, _LITERALS, _OPERATORS, _LITERALS).map("".join),
    st.text(max_size=60),
)


#: Text a judge can read: no invisible, control or look-alike characters (a question with
#: one is refused before any judge sees it: ``test_unreadable_text_is_no_question``).
_READABLE = st.text(max_size=40).filter(lambda t: unreadable_character(t) is None)


@settings(max_examples=300, deadline=None)
@given(expr=_EXPRESSIONS, value=st.one_of(_LITERALS, _READABLE))
@example(expr="1e999", value="6")
@example(expr="1", value="1" + "0" * 5000)
@example(expr="1e308*1e308*1e308", value="1")
def test_every_literal_gets_a_verdict_from_every_judge_that_reads_it(expr: str, value: str) -> None:
    assume(unreadable_character(expr) is None)  # else no question (the test below)
    step = f"So <<{expr}={value}>> apples."
    holds = annotation_holds(expr, value)  # never raises
    read_back = ANNOTATION.findall(step) == [(expr, value)]  # else "<", ">" or "=" split it
    for ground in (False, True):
        judge = CalculatorJudge(ground_operands=ground)
        p = asyncio.run(judge.judge(StepQuestion(f"He has {value} and {expr}.", (), step))).p_yes
        assert p in (0.0, 1.0)
        assert ground or not read_back or p == float(holds)
    scripted = ScriptedJudge(CalculatorJudge(ground_operands=True), 0.1, seed=0)
    assert 0.0 <= scripted.probability(StepQuestion("", (expr,), step)) <= 1.0
    try:  # the parser either reads the step or names why not; B then disputes or concedes
        transcript = parse_gsm8k(QUESTION, f"{step}\n#### {value}")
    except TranscriptFormatError:
        return
    assert isinstance(transcript, StepTranscript)
    disputed = asyncio.run(CheckerB().dispute(QUESTION, transcript))
    assert disputed in (None, 0)
    whole = asyncio.run(CalculatorJudge().judge(transcript.whole_question()))
    assert whole.p_yes in (0.0, 1.0)


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=40))
def test_unreadable_text_is_no_question(text: str) -> None:
    """What a judge would read differently from V is refused, whatever field holds it."""
    hidden = unreadable_character(text)
    for fields in ((text, (), "s"), ("t", (text,), "s"), ("t", (), text)):
        if hidden is None:
            assert StepQuestion(*fields).task == fields[0]
        else:
            with pytest.raises(OracleError, match="invisible, control or look-alike"):
                StepQuestion(*fields)


@settings(max_examples=200, deadline=None)
@given(mantissa=st.integers(0, 10**30), power=st.integers(-1000, 1000))
def test_a_power_of_ten_within_range_is_exact(mantissa: int, power: int) -> None:
    exact = Fraction(mantissa) * Fraction(10) ** power
    assert evaluate(f"{mantissa}e{power}") == exact
    assert annotation_holds(f"{mantissa}e{power}", f"{mantissa}e{power}")
