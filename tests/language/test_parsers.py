"""Parsers, transcripts and the GSM8K loader, on made-up text and on the shared data."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from proofgames.analysis.intervals import wilson_interval
from proofgames.judges import CalculatorJudge, annotation_holds, evaluate
from proofgames.language.experiments import gsm8k_games, summarize
from proofgames.language.gsm8k import DataError, load_gsm8k_solutions
from proofgames.language.parsers import parse_gsm8k, parse_model_output
from proofgames.language.transcript import StepTranscript, TranscriptFormatError, whole_layout

_ROOT = Path(__file__).resolve().parents[2]
# the project's shared data: beside the checkout (../shared, as in CI) or inside it
GSM8K = next(
    (p / "data" / "gsm8k" for p in (_ROOT.parent / "shared", _ROOT / "shared") if p.is_dir()),
    _ROOT.parent / "shared" / "data" / "gsm8k",
)
needs_gsm8k = pytest.mark.skipif(
    not (GSM8K / "example_model_solutions.jsonl").is_file(),
    reason=f"GSM8K model solutions not found at {GSM8K} (the project's ../shared/data/gsm8k)",
)

QUESTION = "Ann has 12 pens. She gives away 5. Then she buys 3 boxes of 4 pens. How many now?"
SOLUTION = (
    "She keeps 12 - 5 = <<12-5=7>>7 pens\n"
    "She buys 3 * 4 = <<3*4=12>>12 pens\n"
    "She has 7 + 12 = <<7+12=19>>19 pens\n"
    "#### 19"
)


def test_gsm8k_solution_relevant_sets_follow_the_numbers() -> None:
    t = parse_gsm8k(QUESTION, SOLUTION)
    assert [s.result for s in t.steps] == ["7", "12", "19"]
    assert t.steps[0].uses == () and t.steps[0].task_parts == (0, 1)
    assert t.steps[1].task_parts == (2,)
    assert t.steps[2].uses == (0, 1) and t.answer == "19"
    assert t.answer_supported()
    q = t.question(2)
    assert q.premises == (t.steps[0].text, t.steps[1].text) and q.task == ""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("She keeps 7 pens", "no final answer line"),
        ("#### 7", "no steps"),
    ],
)
def test_gsm8k_parse_errors_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(TranscriptFormatError, match=problem):
        parse_gsm8k(QUESTION, text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no 'Step 1"),
        ("Step 1: 12 - 5 = 7", "no 'Answer"),
        ("Step 2: 12 - 5 = 7\nAnswer: 7", "expected 1"),
        ("Step 1: 12 - 5 = 7 (uses 1)\nAnswer: 7", "not an earlier step"),
        ("Step 1: she keeps some\nAnswer: 7", "ends with no number"),
        ("Step 1: 7\nAnswer: 7\nStep 2: 8", "after the 'Answer:'"),
        ("I think it is 19.", "expected 'Step 1"),
    ],
)
def test_model_output_errors_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(TranscriptFormatError, match=problem):
        parse_model_output(QUESTION, text)


def test_model_output_round_trips_through_render() -> None:
    t = parse_model_output(
        QUESTION,
        "Step 1: 12 - 5 = 7\nStep 2: 3 * 4 = 12\nStep 3: 7 + 12 = 19 (uses 1, 2)\nAnswer: 19",
    )
    assert t.steps[1].uses == (0,) and t.steps[2].uses == (0, 1)
    again = parse_model_output(QUESTION, t.render())
    assert [s.result for s in again.steps] == ["7", "12", "19"] and again.answer == "19"
    assert StepTranscript.from_dict(json.loads(json.dumps(t.to_dict()))) == t


def test_transcript_rejects_bad_relevant_sets() -> None:
    bad = parse_gsm8k(QUESTION, SOLUTION).to_dict()
    bad["steps"][0]["uses"] = [1]  # type: ignore[index]
    with pytest.raises(TranscriptFormatError, match="uses"):
        StepTranscript.from_dict(bad)


def test_calculator_is_exact_and_refuses_code() -> None:
    assert annotation_holds("10/3", "3.33") and not annotation_holds("10/3", "3.4")
    assert annotation_holds("2*0.5", "1.0") and not annotation_holds("2+2", "5")
    for expr in ("__import__('os')", "2**1000000", "1/0", "x" * 300):
        assert not annotation_holds(expr, "1")
    assert evaluate("-(3 - 5) * 4") == 8


def test_whole_question_of_a_long_task_fits_the_schema() -> None:
    from proofgames.language.generated import generate_chain

    t = generate_chain(1000, seed=0).reference
    q = t.whole_question()
    layout = whole_layout(q)
    assert layout is not None and layout[0] == " ".join(t.task)
    assert len(layout[1]) == 1001
    assert asyncio.run(CalculatorJudge(ground_operands=True).judge(q)).verdict


def test_loader_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_gsm8k_solutions(tmp_path)
    (tmp_path / "example_model_solutions.jsonl").write_text("{oops\n")
    with pytest.raises(DataError, match="line 1: not JSON"):
        load_gsm8k_solutions(tmp_path)


@needs_gsm8k
def test_gsm8k_model_solutions_parse_and_debate() -> None:
    sols = load_gsm8k_solutions(GSM8K, limit=50)
    assert len(sols) == 200
    parsed = [s for s in sols if s.transcript is not None]
    assert len(parsed) >= 195
    debate = asyncio.run(
        gsm8k_games(GSM8K, limit=50, protocol="cross-examination", judge="calculator")
    )
    whole = asyncio.run(
        gsm8k_games(GSM8K, limit=50, protocol="whole-transcript", judge="calculator")
    )
    d, w = summarize(debate), summarize(whole)
    # the same calculator finds the same arithmetic slips: same verdicts, far fewer tokens read
    assert [r["accepted"] for r in debate] == [r["accepted"] for r in whole]
    assert d["judge_input_tokens"] * 10 < w["judge_input_tokens"]
    assert 0 < d["accuracy"] < 1


def test_summary_rates_carry_the_library_wilson_interval_of_their_own_counts() -> None:
    rows = [
        {"truth": t, "accepted": a, "correct": t == a, "stopped": False, "judge_calls": 1,
         "judge_input_tokens": 10, "prover_tokens": 0}
        for t, a in [(True, True)] * 33 + [(True, False)] * 7 + [(False, False)] * 3
    ]  # fmt: skip
    s = summarize(rows)
    assert s["completeness"] == 33 / 40
    assert tuple(s["completeness_ci"]) == wilson_interval(33, 40)
    assert tuple(s["accuracy_ci"]) == wilson_interval(36, 43)
    assert tuple(s["soundness_error_ci"]) == wilson_interval(0, 3)
    # a batch with no false claims: no soundness figure, and the interval says nothing
    honest = summarize(rows[:40])
    assert math.isnan(honest["soundness_error"])
    assert tuple(honest["soundness_error_ci"]) == (0.0, 1.0)
