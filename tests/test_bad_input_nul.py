"""A file or folder name with a NUL byte is refused in one line, wherever a path is taken.

pathlib raises ``ValueError`` on such a name (no system call can take it); a command
line from the shell cannot carry one, but the Python API and in-process callers can.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from proofgames.cli import app

BAD = "bad\x00name"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["params", "report", "--out", BAD], "cannot name a folder"),
        (["params", "report", "--readme", BAD, "--out", "r"], "cannot read"),
        (["report", "--out", BAD, "--debates", "10"], "cannot name a folder"),
        (["report", "--readme", BAD, "--out", "r", "--debates", "10"], "cannot read"),
        (["debate", "stochastic", "--params", BAD], "cannot read"),
        (["estimate", "-m", "majority:n=3,p=0.6", "--params", BAD], "cannot read"),
        (["debate", "witness", "-m", f"sat:{BAD}"], "cannot read DIMACS file"),
    ],
)
def test_a_nul_in_a_path_is_a_one_line_refusal(args, named, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, (res.output, res.exception)
    assert named in res.output and "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []  # refused before any work
