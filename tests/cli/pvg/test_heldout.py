"""``pvg heldout``: a long-run folder's report from its saved held-out counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner

from proofgames.cli.pvg import app
from proofgames.pvg.reproduce.heldout import heldout_row

from ...pvg.reproduce.test_heldout import entry as _entry


def _run(folder: Path, seed: int) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"seed": seed, "steps": 4000}))
    rows = [
        {"step": s, "verifier_accuracy": 0.5 + s / 10000, "messages_accuracy": 0.6,
         "messages_precision": 0.9, "exhaustive_specificity": s / 4000, "seconds": s / 40}
        for s in (1000, 2000, 3000, 4000)
    ]  # fmt: skip
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_command_writes_the_report_and_the_figure(tmp_path):
    _run(tmp_path / "run-s2", 2)
    data = {
        "evaluation": {"command": "pvg stress X"},
        "runs": {"run-s2": [_entry(4000), _entry(2000)]},
    }
    (tmp_path / "heldout.json").write_text(json.dumps(data))
    res = CliRunner().invoke(app, ["heldout", str(tmp_path)])
    assert res.exit_code == 0, res.output
    report = (tmp_path / "report.md").read_text()
    rows = [heldout_row(e) for e in data["runs"]["run-s2"]]
    assert report.index(rows[1]) < report.index(rows[0])  # in step order
    assert "| run-s2 | 4,000 | 0.900 | 1.000 | 100 |" in report
    assert (tmp_path / "curves.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("content", "said"),
    [(None, "does not exist"), ("{", "not readable JSON"), ('{"runs": []}', "must hold")],
)
def test_the_command_refuses_a_folder_without_good_counts(tmp_path, content, said):
    if content is not None:
        (tmp_path / "heldout.json").write_text(content)
    res = CliRunner().invoke(app, ["heldout", str(tmp_path)])
    assert res.exit_code == 2 and said in res.output and "Traceback" not in res.output
    assert not (tmp_path / "report.md").exists()
