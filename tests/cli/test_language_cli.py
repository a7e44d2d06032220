"""The ``proofgames language`` commands: JSON output, and usage errors as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proofgames.cli import main

from ..language.test_parsers import GSM8K, needs_gsm8k


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_generated_json_reports_rates_and_costs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "language", "generated", "--steps", "64", "--n", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["summary"]["debates"] == 6 and data["summary"]["accuracy"] == 1.0
    assert {r["judge_calls"] for r in data["debates"]} == {1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "oracle"], "unknown judge"),
        (["--judge", "scripted:0.7"], "error_rate"),
        (["--protocol", "shouting"], "unknown protocol"),
        (["--steps", "1"], "steps must be"),
        (["--n", "0"], "--n must be"),
        # issue 34: an OverflowError traceback, and a run that never ended
        (["--n", "99999999999999999999"], "--n must be an int in [1, 100,000]"),
        (["--n", "100000000000"], "--n must be an int in [1, 100,000]"),
        (["--judge", "calculator", "--figure1"], "Figure 1 needs"),
        (["--seed", "-1"], "--seed"),  # SeedSequence's ValueError traceback before
    ],
)
def test_generated_bad_options_fail_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, "language", "generated", "--n", "1", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@needs_gsm8k
def test_gsm8k_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "language", "gsm8k", str(GSM8K), "--limit", "5", "--json")
    assert code == 0 and json.loads(out)["summary"]["debates"] == 20


def test_a_spent_judge_budget_stops_the_run_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "language", "generated", "--steps", "20", "--n", "5", "--max-judge-calls", "3",
        "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["summary"]["debates"] == 4 and data["summary"]["stopped"] == 1
    assert "budget spent" in data["debates"][-1]["reason"] and "stopped" in err


def test_a_negative_seed_is_refused_by_the_api_before_any_work(tmp_path) -> None:
    import asyncio

    from proofgames.errors import ProtocolError
    from proofgames.language.experiments import generated_games
    from proofgames.language.report import build_report

    with pytest.raises(ProtocolError, match="seed must be a non-negative integer"):
        asyncio.run(generated_games(10, 1, seed=-1, protocol="bisection", judge="calculator"))
    with pytest.raises(ProtocolError, match="seed"):
        build_report(tmp_path / "report", None, n=1, seed=-5)
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generated", "--max-judge-calls", "0"], "--max-judge-calls must be at least 1"),
        (["generated", "--max-judge-calls", "-1"], "--max-judge-calls must be at least 1"),
        (["gsm8k", "--max-judge-calls", "0"], "--max-judge-calls must be at least 1"),
        (["generated", "--judge", "model:nonexistent/model"], "cannot be used"),
        (["gsm8k", "--judge", "model:nonexistent/model"], "cannot be used"),
    ],
)
def test_a_run_that_cannot_measure_anything_is_refused_before_it_starts(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    # at HEAD each printed "completeness 0.000 ... measured" and exited 0
    if "model:" in " ".join(args):
        pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    code, out, err = run_cli(
        capsys, "language", *args, "--limit" if "gsm8k" in args else "--n", "2"
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert "measured" not in out


def test_a_judge_failing_mid_run_is_counted_and_a_run_that_measured_nothing_exits_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from proofgames.judges import CallbackJudge, Judgement, StepQuestion
    from proofgames.language import experiments

    calls, works = 0, 2

    async def flaky(question: StepQuestion) -> Judgement:
        nonlocal calls
        calls += 1
        if calls > works:
            raise ConnectionError("the judge's API is down")
        return Judgement(p_yes=1.0)

    monkeypatch.setattr(experiments, "make_judge", lambda spec, seed: CallbackJudge(flaky))
    args = ("language", "generated", "--steps", "10", "--n", "3", "--json")
    code, out, err = run_cli(capsys, *args)
    # issue 35: one stopped debate never ends a batch; it is counted, in no rate
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary["debates"] == 6 and summary["stopped"] == 4
    calls, works = 0, 0  # down from the start: nothing measured (at HEAD~: exit 0, rates)
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and "no debate finished" in err and "API is down" in err
    assert len(err.strip().splitlines()) == 1 and out == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no records: an empty data set measures nothing"),
        (bytes(range(256)), "is a binary file"),
        (
            json.dumps({"question": "Q", "ground_truth": "A: 1", "6b_finetuning": {
                "is_correct": "false", "solution": "1+1=<<1+1=2>>2\nA: 2"}}).encode() + b"\n",
            "line 1: 6b_finetuning.is_correct must be true or false",
        ),
    ],
)  # fmt: skip
def test_a_bad_gsm8k_file_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, message: str
) -> None:
    # at HEAD: exit 0 with "accuracy nan", a UnicodeDecodeError traceback, and a string
    # "false" read as true
    path = tmp_path / "example_model_solutions.jsonl"
    path.write_bytes(content)
    code, out, err = run_cli(capsys, "language", "gsm8k", str(path))
    assert code == 2 and message in err and str(path) in err.replace("\n", "")
    assert out == ""


def test_gsm8k_without_a_path_debates_the_demo_problems(capsys: pytest.CaptureFixture[str]) -> None:
    # at HEAD the path was required, and the docs pointed at ../shared/data/gsm8k
    code, out, _ = run_cli(capsys, "language", "gsm8k", "--json")
    summary = json.loads(out)["summary"]
    assert code == 0 and summary["debates"] == 24 and summary["accuracy"] == 1.0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_judge_timeout_that_is_not_a_positive_number_is_refused(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, out, err = run_cli(capsys, "language", "generated", "--n", "1", "--judge-timeout", value)
    assert code == 2 and "timeout must be a positive number of seconds" in err
    assert len(err.strip().splitlines()) == 1 and out == ""


def test_a_judge_that_never_answers_is_cut_off_by_the_judge_timeout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from proofgames.judges import CallbackJudge, Judgement, StepQuestion
    from proofgames.language import experiments

    calls = 0

    async def stuck_after_two(question: StepQuestion) -> Judgement:
        nonlocal calls
        calls += 1
        if calls > 2:
            await asyncio.sleep(3600)
        return Judgement(p_yes=1.0)

    monkeypatch.setattr(
        experiments, "make_judge", lambda spec, seed: CallbackJudge(stuck_after_two)
    )
    args = ("language", "generated", "--steps", "10", "--n", "2", "--judge-timeout", "0.2")
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    rows = json.loads(out)["debates"]
    assert [r["stopped"] for r in rows] == [None, None, "judge", "judge"]
    assert "did not answer within 0.2 s" in rows[2]["reason"]
