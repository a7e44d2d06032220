"""The ``proofgames`` script's entry point (:mod:`proofgames._entry`)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

import proofgames.cli
from proofgames import _entry


def test_the_collector_runs_during_the_command_and_is_spared_at_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, bool] = {}

    def command() -> None:
        seen["collecting"] = gc.isenabled()
        raise SystemExit(3)

    monkeypatch.setattr(proofgames.cli, "main", command)
    frozen = gc.get_freeze_count()
    try:
        with pytest.raises(SystemExit) as exit_:
            _entry.main()
        assert exit_.value.code == 3  # the command's status, unchanged
        assert seen == {"collecting": True} and gc.isenabled()
        assert gc.get_freeze_count() > frozen  # what was alive at exit is frozen
    finally:
        gc.unfreeze()


def test_the_script_and_python_m_give_the_commands_status_and_output() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "proofgames", "debate", "bisection", "--machine", "bb2"],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "winner" in ok.stdout, ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "proofgames", "debate", "no-such-protocol"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:"), bad.stderr
