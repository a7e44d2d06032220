"""``proofgames language summarize LOGDIR``: the comparison table from Inspect logs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.language.compare import cells
from proofgames.language.experiments import generated_games
from proofgames.language.inspect_tasks import generated_debate
from proofgames.language.summarize import rows_from_logs

from .test_inspect import fresh_cache  # noqa: F401


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    for protocol in ("bisection", "judge-alone"):
        (log,) = inspect_eval(generated_debate(steps=8, n=3, protocol=protocol, judge="calculator"),
                              model="none/none", log_dir=str(tmp_path / "logs"),
                              display="none")  # fmt: skip
        assert log.status == "success"
    return tmp_path / "logs"


def test_the_logs_give_the_same_cells_as_the_runs_in_process(logdir):
    found = {c["protocol"]: c for c in cells(rows_from_logs(logdir))}
    assert set(found) == {"bisection", "judge-alone"}
    for protocol, c in found.items():
        assert c["judge"] == "calculator" and c["debates"] == 6
        rows = asyncio.run(generated_games(8, 3, seed=0, protocol=protocol, judge="calculator"))
        expected = cells([{"protocol": protocol, "judge": "calculator", **r} for r in rows])[0]
        for key in ("completeness", "soundness_error", "accuracy"):
            assert c[key] == expected[key], (protocol, key)
    assert found["judge-alone"]["soundness_error"] == 1.0
    assert found["bisection"]["soundness_error"] == 0.0


def test_the_command_prints_the_table_and_refuses_what_it_cannot_read(logdir, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["language", "summarize", str(logdir)])
    assert r.exit_code == 0, r.output
    assert sum(line.startswith("| bisection | calculator | 6 |") for line in r.output.splitlines())
    r = runner.invoke(app, ["language", "summarize", str(logdir), "--json"])
    assert len(json.loads(r.output)["samples"]) == 12
    empty = tmp_path / "empty"
    empty.mkdir()
    r = runner.invoke(app, ["language", "summarize", str(empty)])
    assert r.exit_code == 2 and "no Inspect log" in r.output and "Traceback" not in r.output
    damaged = empty / "2026-01-01T00-00-00+00-00_x_abc.eval"
    damaged.write_bytes(b"not a zip file")
    with pytest.raises(ProtocolError, match="cannot read the Inspect log"):
        rows_from_logs(empty)
