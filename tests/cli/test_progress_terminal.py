"""Long commands show progress on stderr when it is a terminal, and only then.

Each command runs in a real subprocess whose stderr is a pseudo-terminal (or a pipe) and
whose stdout is a pipe, as in ``proofgames ... --json | jq``: the bar must go to the
terminal, and the JSON on stdout must stay clean.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXE = shutil.which("proofgames") or str(Path(sys.executable).with_name("proofgames"))


def run(args: list[str], *, terminal: bool, cwd: Path) -> tuple[int, str, bytes]:
    """Exit code, stdout and stderr bytes, with stderr a pseudo-terminal or a pipe."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    if not terminal:
        res = subprocess.run([EXE, *args], capture_output=True, env=env, cwd=cwd, timeout=300)
        return res.returncode, res.stdout.decode(), res.stderr
    master, slave = pty.openpty()
    try:
        res = subprocess.run(
            [EXE, *args], stdout=subprocess.PIPE, stderr=slave, env=env, cwd=cwd, timeout=300
        )
    finally:
        os.close(slave)
    seen = b""
    try:
        while chunk := os.read(master, 1 << 16):
            seen += chunk
    except OSError:  # the terminal's other end is closed: everything was read
        pass
    finally:
        os.close(master)
    return res.returncode, res.stdout.decode(), seen


COMMANDS = {
    "debate": (["debate", "bisection", "-m", "bb5", "--json"], b"simulating"),
    "estimate": (["estimate", "--debates", "3000", "--json"], b"debates"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_progress_goes_to_a_terminal_stderr_and_json_stays_clean(name: str, tmp_path: Path) -> None:
    args, label = COMMANDS[name]
    code, out, err = run(args, terminal=True, cwd=tmp_path)
    assert code == 0, err
    json.loads(out)  # the bar never reaches stdout
    assert label in err


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_progress_when_stderr_is_not_a_terminal(name: str, tmp_path: Path) -> None:
    args, _ = COMMANDS[name]
    code, out, err = run(args, terminal=False, cwd=tmp_path)
    assert code == 0, err
    json.loads(out)
    assert err == b""


@pytest.mark.slow
def test_pvg_training_shows_its_progress_on_a_terminal(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    args = ["pvg", "train", "bec", "--steps", "3", "--batch-size", "8",
            "--threads", "1", "--out", str(tmp_path / "run")]  # fmt: skip
    code, _, err = run(args, terminal=True, cwd=tmp_path)
    assert code == 0, err
    assert b"3/3" in err or b"game steps" in err, err[-400:]
