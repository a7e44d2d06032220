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
    "args",
    [
        ["params", "report", "--out", BAD],
        ["params", "report", "--readme", BAD, "--out", "r"],
        ["report", "--out", BAD, "--debates", "10"],
        ["report", "--readme", BAD, "--out", "r", "--debates", "10"],
        ["debate", "stochastic", "--params", BAD],
        ["estimate", "-m", "majority:n=3,p=0.6", "--params", BAD],
        ["debate", "witness", "-m", f"sat:{BAD}"],
    ],
)
def test_a_nul_in_a_path_is_a_one_line_refusal(args, tmp_path, monkeypatch):
    """The command line refuses the argument before any command sees it (each command's
    own refusal, e.g. "cannot read", now answers only callers of the library)."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, (res.output, res.exception)
    assert "contains a NUL character" in " ".join(res.output.split())
    assert "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []  # refused before any work


@pytest.mark.parametrize(
    "args",
    [
        ["pvg", "curves", "run", "--out", BAD],  # a Path option: typer would stat it
        ["debate", "bisection", "--machine", BAD],
        ["examples", BAD],
        [BAD],
    ],
)
def test_the_command_line_refuses_any_argument_with_a_nul_in_one_line(args, capsys):
    from proofgames.cli import main

    with pytest.raises(SystemExit) as stop:
        main(args)
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.count("\n") == 1 and "contains a NUL character" in err, err
