"""GSM8K files as a user gets them: typed fields, named bad records, the demo set (issue 34.3/9)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import proofgames
from proofgames.judges import CalculatorJudge
from proofgames.language.experiments import gsm8k_games, summarize
from proofgames.language.gsm8k import (
    DEMO_PROBLEMS,
    DataError,
    load_gsm8k,
    load_gsm8k_problems,
    load_gsm8k_solutions,
    plant_slip,
)

from .test_parsers import GSM8K

QUESTION = "Tom has 3 apples. He buys 2 more. How many apples has he?"
GOOD = {
    "question": QUESTION,
    "ground_truth": "3 + 2 = <<3+2=5>>5\nA: 5",
    "6b_finetuning": {"is_correct": False, "solution": "3 + 2 = <<3+2=6>>6\nA: 6"},
}


def _write(tmp_path: Path, *rows: object, name: str = "example_model_solutions.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_is_correct_must_be_a_json_boolean(tmp_path: Path) -> None:
    # at HEAD the string "false" was read as true (bool("false")), silently
    bad = {**GOOD, "6b_finetuning": {"is_correct": "false", "solution": "3+2=<<3+2=6>>6\nA: 6"}}
    path = _write(tmp_path, GOOD, bad)
    with pytest.raises(DataError, match=r"line 2: 6b_finetuning\.is_correct must be true or false"):
        load_gsm8k_solutions(path)


def _with(**changes: Any) -> dict[str, Any]:
    return {k: v for k, v in {**GOOD, **changes}.items() if v is not None}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"question": "Q", "question": "R", "ground_truth": "A: 1"}', "'question' appears twice"),
        (json.dumps(_with(ground_truth=None)), "'ground_truth' is missing"),
        (json.dumps(_with(answer="#### 5")), "unknown field 'answer'"),
        (json.dumps(_with(**{"6b_finetunning": {}})), "unknown field '6b_finetunning'"),
        (json.dumps(_with(question="")), "'question' must be a non-empty string"),
        (json.dumps(_with(question=7)), "'question' must be a non-empty string"),
        (json.dumps(_with(**{"6b_verification": "3+2=5"})), "must be an object"),
        (json.dumps(_with(**{"6b_verification": {"is_correct": True}})), "'solution' is missing"),
        (json.dumps(_with(**{"6b_verification": {"is_correct": 1, "solution": "A: 5"}})),
         "JSON boolean"),
        (json.dumps(_with(**{"6b_verification": {"is_correct": True, "solution": ["A: 5"]}})),
         "'solution' must be a non-empty string"),
        (json.dumps(_with(**{"6b_verification": {"is_correct": True, "solution": "A: 5",
                                                 "score": 1}})), "unknown field 'score'"),
        ('{"question": "Q", "ground_truth": NaN}', "NaN is not a JSON number"),
        ("[1, 2]", "must be a JSON object, not list"),
        ("", "an empty line"),
        ("[" * 100_000, "nested too deeply"),
    ],
)  # fmt: skip
def test_a_bad_record_is_refused_naming_the_file_and_the_line(
    tmp_path: Path, line: str, problem: str
) -> None:
    # at HEAD most of these were read silently (a duplicate key, an unknown model, a
    # missing label, an extra field); the deep one was a RecursionError traceback
    path = tmp_path / "solutions.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(DataError, match="line 2") as caught:
        load_gsm8k_solutions(path)
    assert str(path) in str(caught.value) and problem in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1 and len(str(caught.value)) < 300


@pytest.mark.parametrize("content", [b"", b"\n"])
def test_an_empty_data_set_is_an_error_not_a_measurement_of_nothing(
    tmp_path: Path, content: bytes
) -> None:
    # at HEAD an empty file gave no debates and "accuracy nan", and exit 0
    path = tmp_path / "example_model_solutions.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataError, match=r"no records|empty line"):
        asyncio.run(gsm8k_games(path, limit=None, protocol="bisection", judge="calculator"))
    one = _write(tmp_path, {"question": QUESTION, "ground_truth": "A: 5"}, name="none.jsonl")
    with pytest.raises(DataError, match="holds no solution"):
        load_gsm8k_solutions(one)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (bytes(range(256)), "is a binary file, not JSON lines"),
        (b'{"question": "caf\xe9"}\n', r"is not UTF-8 text \(byte 0xe9 at offset 17\)"),
    ],
)
def test_a_binary_or_non_utf8_file_is_a_one_line_error(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    # at HEAD: a UnicodeDecodeError traceback
    path = tmp_path / "test.jsonl"
    path.write_bytes(content)
    for load in (load_gsm8k_solutions, load_gsm8k_problems, load_gsm8k):
        with pytest.raises(DataError, match=problem):
            load(path)


def test_problems_in_the_official_test_jsonl_format_load_and_debate(tmp_path: Path) -> None:
    # at HEAD there was no loader for GSM8K's own problem file (question, answer "#### N")
    good = {"question": QUESTION, "answer": "He has 3 + 2 = <<3+2=5>>5 apples.\n#### 5"}
    path = _write(tmp_path, good, good, name="test.jsonl")
    [p, _] = load_gsm8k_problems(tmp_path)  # the folder: test.jsonl in it
    assert (p.index, p.answer, p.transcript.steps[0].result) == (0, "5", "5")
    sols = load_gsm8k(path)
    assert [(s.model, s.is_correct) for s in sols[:2]] == [("reference", True),
                                                          ("planted-slip", False)]  # fmt: skip
    assert sols[1].solution == "He has 3 + 2 = <<3+2=6>>6 apples.\n#### 6"
    rows = asyncio.run(gsm8k_games(path, limit=None, protocol="bisection", judge="calculator"))
    assert summarize(rows)["accuracy"] == 1.0 and len(rows) == 4
    for answer, problem in [("He has 5.", "must end with a line '#### <number>'"),
                            ("He has 5.\n#### five", "must end with a line '#### <number>'"),
                            ("#### 5", "no steps")]:  # fmt: skip
        path = _write(tmp_path, good, {"question": QUESTION, "answer": answer}, name="bad.jsonl")
        with pytest.raises(DataError, match=f"bad.jsonl, line 2: .*{problem}"):
            load_gsm8k_problems(path)


def test_a_slip_is_planted_only_where_the_last_step_computes_the_answer() -> None:
    assert plant_slip("a <<2*3=6>>6 b\nc <<6/4=1.5>>$1.5 each\n#### 1.5") == (
        "a <<2*3=6>>6 b\nc <<6/4=2.5>>$2.5 each\n#### 2.5"
    )
    assert plant_slip("a <<2*3=6>>6\nso 6 in all\n#### 6") is None  # the last step has none
    assert plant_slip("a <<2*3=6>>6\n#### 7") is None  # it does not give the answer
    assert plant_slip("#### 6") is None


def test_the_demo_problems_ship_in_the_package_and_debate_offline() -> None:
    package = Path(proofgames.__file__).resolve().parent
    assert DEMO_PROBLEMS.is_file() and package in DEMO_PROBLEMS.parents
    problems = load_gsm8k_problems(DEMO_PROBLEMS)
    assert len(problems) >= 10
    sols = load_gsm8k()  # no path: the demo problems
    assert len(sols) == 2 * len(problems)  # every problem has its reference and a slip
    grounded = CalculatorJudge(ground_operands=True)
    for s in sols:  # every reference step holds (operands written in the task); slips do not
        assert s.transcript is not None
        checks = [grounded.problems(s.transcript.question(t)) for t in range(len(s.transcript))]
        assert all(c == [None] for c in checks) is s.is_correct, s
    for protocol in ("cross-examination", "bisection", "whole-transcript"):
        rows = asyncio.run(gsm8k_games(None, limit=None, protocol=protocol, judge="calculator"))
        assert summarize(rows)["accuracy"] == 1.0, protocol


@pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"no {GSM8K}/test.jsonl")
def test_the_official_test_split_loads_whole() -> None:
    problems = load_gsm8k_problems(GSM8K / "test.jsonl")
    assert len(problems) == 1319
    sols = load_gsm8k(GSM8K / "test.jsonl", limit=100)
    assert sum(s.model == "reference" for s in sols) == 100
    assert sum(s.model == "planted-slip" for s in sols) >= 80
