"""One output-path rule for every writer: nothing another command or run made is replaced.

Each case was a defect on the main branch before this rule: the command wrote over
another command's or run's files with exit status 0.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.reporting import claim_folder, finish_folder

RUNNER = CliRunner()


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(args: list[str], needle: str) -> str:
    res = RUNNER.invoke(app, args)
    said = res.stderr if res.stderr else res.output
    assert res.exit_code == 2, (res.output, res.exception)
    assert "Traceback" not in res.output and needle in said, said
    return said


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A training run's folder (its log and checkpoint), as ``pvg train`` leaves it."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"step": 0}\n')
    (run / "agents.pt").write_bytes(b"weights")
    (run / "config.json").write_text("{}")
    return run


@pytest.mark.parametrize("name", ["metrics.jsonl", "agents.pt", "figure.png"])
def test_pvg_curves_never_writes_into_a_run_folder(run_folder, name):
    before = _digest(run_folder)
    _refused(["pvg", "curves", str(run_folder), "--out", str(run_folder / name)], "--out")
    assert _digest(run_folder) == before


def _report_folder(folder: Path, made_by: str) -> Path:
    claim_folder(folder, made_by)
    (folder / "report.md").write_text("# another command's report\n")
    (folder / "results.json").write_text('{"raw": "data"}\n')
    finish_folder(folder, made_by)
    return folder


def test_the_language_report_never_replaces_a_reproductions_results(tmp_path):
    pvg = _report_folder(tmp_path / "pvg", "proofgames pvg reproduce")
    before = _digest(pvg)
    said = _refused(["language", "report", "--out", str(pvg), "--n", "1"], "holds the output of")
    assert "'proofgames pvg reproduce'" in said
    _refused(["language", "report", "--out", str(pvg), "--n", "1", "--overwrite"], "holds the")
    assert _digest(pvg) == before


@pytest.mark.parametrize(
    "command",
    [
        ["report", "--debates", "10"],
        ["params", "report", "--debates", "10"],
    ],
    ids=["report", "params report"],
)
def test_a_report_never_replaces_another_commands_report(tmp_path, command):
    other = _report_folder(tmp_path / "other", "proofgames language report")
    before = _digest(other)
    _refused([*command, "--out", str(other)], "holds the output of 'proofgames language report'")
    _refused([*command, "--out", str(other), "--overwrite"], "holds the output of")
    assert _digest(other) == before


ROOT = Path(__file__).resolve().parents[2]


def test_pvg_report_never_replaces_another_commands_report(tmp_path):
    other = _report_folder(tmp_path / "other", "proofgames report")
    results = tmp_path / "results.json"
    results.write_bytes((ROOT / "reports" / "pvg" / "results.json").read_bytes())
    before = _digest(other)
    _refused(["pvg", "report", str(results), "--out", str(other)], "holds the output of")
    assert _digest(other) == before


def test_a_folder_of_no_known_command_is_refused(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "report.md").write_text("my own notes\n")
    _refused(["report", "--debates", "10", "--out", str(mine), "--overwrite"], "no proofgames")
    assert (mine / "report.md").read_text() == "my own notes\n"


def test_params_optimize_replaces_an_existing_file_only_on_request(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("precious\n")
    args = ["params", "optimize", "--k", "1", "--steps", "3", "--out", str(target)]
    _refused(args, "exists; give --overwrite")
    assert target.read_text() == "precious\n"
    res = RUNNER.invoke(app, [*args, "--overwrite"])
    assert res.exit_code == 0, res.output
    assert isinstance(json.loads(target.read_text()), dict)  # a --params file now
