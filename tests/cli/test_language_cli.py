"""The ``proofgames language`` commands: JSON output, and usage errors as one line."""

from __future__ import annotations

import json

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
