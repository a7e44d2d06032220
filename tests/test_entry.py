"""The ``proofgames`` script's entry point (:mod:`proofgames._entry`)."""

from __future__ import annotations

import gc
import os
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


QUIET_PROBE = """
import os, sys, types
fake = types.ModuleType("proofgames.cli")
fake.main = lambda: print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), "numpy" in sys.modules)
sys.modules["proofgames.cli"] = fake
from proofgames._entry import main
main()
"""


@pytest.mark.parametrize(("given", "seen"), [(None, "4"), ("12", "12")])
def test_the_script_quiets_openblas_before_numpy_loads_unless_the_user_chose(
    given: str | None, seen: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = given
    out = subprocess.run(
        [sys.executable, "-c", QUIET_PROBE], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [seen, "False"]
