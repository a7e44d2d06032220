"""The library's own step provers in processes of their own (``--isolation process``).

The same seed gives the same debates in process and across processes: isolation changes
where a prover runs, never what it says. The runner refuses a hello it cannot serve.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import ProofgamesError
from proofgames.language.experiments import generated_games
from proofgames.language.generated import generate_chain
from proofgames.language.step_party import build, main
from proofgames.wire import Malformed

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = f"exec:{sys.executable} {ROOT / 'examples' / 'standalone_step_prover.py'}"


def _rows(**kw):
    rows = asyncio.run(generated_games(10, 3, seed=4, protocol="bisection", judge="calculator",
                                       **kw))  # fmt: skip
    return [{k: r[k] for k in ("truth", "accepted", "reason", "disputed_step")} for r in rows]


@pytest.mark.slow
def test_process_isolation_changes_where_provers_run_not_what_they_say():
    assert _rows(isolation="process") == _rows()


def _hello(role: str, **generated: object) -> dict[str, object]:
    item = generate_chain(6, seed=2)
    gen = {"steps": 6, "seed": 2} | generated
    instance = {"kind": "step-transcript", "task": item.task_text, "generated": gen}
    return {"type": "hello", "protocol": "bisection", "role": role, "seed": 0,
            "instance": instance}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "hello", "match"),
    [
        ("honest", _hello("B"), "honest plays A, not B"),
        ("oracle", _hello("A"), "unknown step prover 'oracle'"),
        ("honest", _hello("A", seed=3), "differs from V's"),
        ("reference", _hello("B", steps=True), "steps"),
    ],
)
def test_the_runner_refuses_a_hello_it_cannot_serve(name, hello, match):
    with pytest.raises((ProofgamesError, Malformed), match=match):
        build(name, hello)


def test_the_runner_answers_calls_and_reports_errors_without_stopping(monkeypatch):
    hello = _hello("A")
    calls = [hello, {"type": "call", "method": "step", "args": [hello["instance"]["task"], 1]},  # type: ignore[index]
             {"type": "call", "method": "dispute", "args": []}, "garbage"]  # fmt: skip
    lines = b"".join(json.dumps(c).encode() + b"\n" for c in calls)
    out = io.BytesIO()
    from proofgames.isolation import party

    real = party.Channel
    monkeypatch.setattr(party, "Channel", lambda: real(io.BytesIO(lines), out))
    assert main(["honest"]) == 0
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [a["type"] for a in answers] == ["ready", "result", "error", "error"]
    assert answers[1]["value"]["result"] == generate_chain(6, seed=2).reference.steps[1].result
    assert "no method 'dispute'" in answers[2]["message"]


def test_the_command_line_takes_a_program_for_either_role():
    runner = CliRunner()
    args = ["language", "generated", "--steps", "8", "--n", "2", "--judge", "calculator"]
    res = runner.invoke(app, [*args, "--isolation", "process", "--prover-b", PROGRAM, "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)["summary"]
    assert summary["debates"] == 4 and summary["accuracy"] == 1.0
    res = runner.invoke(app, [*args, "--prover-a", PROGRAM])
    assert res.exit_code == 2 and "needs --isolation process" in res.output
    res = runner.invoke(app, [*args, "--isolation", "process", "--prover-a", "honest"])
    assert res.exit_code == 2 and "takes exec:COMMAND" in res.output
