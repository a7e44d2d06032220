"""A user's Ctrl-C or kill stops a command: exit 130 or 143, one line, nothing decided or kept.

Each test runs the command line in a subprocess with a prover that stalls inside its call
(``tests/cli/slow_party.py``, loaded as a plugin), waits until the stall has begun, and
sends a real signal. Some environments start processes with SIGINT blocked or ignored:
the child unblocks both signals and restores their default handlers before it starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _child_signals() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _env() -> dict[str, str]:
    env = dict(os.environ, PROOFGAMES_PLUGINS="tests.cli.slow_party")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "proofgames", *args], cwd=cwd, env=_env(), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_child_signals,
    )  # fmt: skip


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "proofgames", *args]
    return subprocess.run(command, cwd=cwd, env=_env(), text=True, capture_output=True)


def _interrupt(proc: subprocess.Popen[str], flag: Path, signum: int) -> tuple[str, str]:
    """Signal ``proc`` once ``flag`` exists; its output, once it has stopped (within 60 s).

    The wait for ``flag`` is long (15 min) so that a loaded machine only slows the test: a
    BEC seed of ``pvg reproduce`` took over 2 min under a clean-clone CI sharing its cores.
    """
    deadline = time.monotonic() + 900
    while not flag.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{flag.name} never appeared"
        time.sleep(0.05)
    proc.send_signal(signum)
    return proc.communicate(timeout=60)  # not the stalled prover's 120 s


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("swallow", [False, True], ids=["raises", "swallows"])
def test_a_signal_during_a_provers_call_stops_the_debate_and_decides_nothing(
    tmp_path, signum, code, swallow
):
    flag = tmp_path / "stalled"
    a = f"stall:path={flag},swallow={str(swallow).lower()}"
    args = ["debate", "bisection", "--machine", "bb5", "--claim", "1", "--prover-a", a, "--json"]
    out, err = _interrupt(_start(args, tmp_path), flag, signum)
    name = signal.Signals(signum).name
    assert (out, err.strip()) == ("", f"error: interrupted by {name}: stopped; nothing "
                                      "unfinished was stored")  # fmt: skip


def _estimate(flag: Path, store: Path, workers: int = 1) -> list[str]:
    return [
        "estimate", "-m", "majority:n=3,p=0.8", "--params", "lean", "--debates", "3000",
        "--chunk", "1000", "--seed", "3", "--workers", str(workers), "--json",
        "--store", str(store), "--prover-a", f"stall-second-chunk:path={flag}",
    ]  # fmt: skip


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_estimate_keeps_only_finished_chunks_and_resumes_exactly(tmp_path, workers):
    """With 2 workers the signal goes to the parent alone: it stops the stalled worker."""
    flag, store = tmp_path / "stalled", tmp_path / "store.jsonl"
    proc = _start(_estimate(flag, store, workers), tmp_path)
    out, err = _interrupt(proc, flag, signal.SIGINT)
    assert proc.returncode == 130 and out == "" and "interrupted by SIGINT" in err
    lines = store.read_text().splitlines()
    # chunk 0; with 2 workers also chunk 1 if the other worker finished it before the
    # signal (on a busy core it may still be running then: stopped, and not stored)
    finished = len(lines) - 1
    assert finished in {1: (1,), 2: (1, 2)}[workers], lines
    assert all('"key"' in line for line in lines[1:])
    resumed = _run(_estimate(flag, store, workers), tmp_path)  # the flag is there: no stall
    whole = _run(_estimate(flag, tmp_path / "fresh.jsonl", workers), tmp_path)
    assert resumed.returncode == whole.returncode == 0, resumed.stderr + whole.stderr
    got, want = json.loads(resumed.stdout), json.loads(whole.stdout)
    for data in (got, want):
        data.pop("seconds", None)
    assert got == want


@pytest.mark.slow
def test_a_reproduction_stopped_after_a_bec_seed_keeps_it_and_resumes_to_the_same_table(
    tmp_path,
):
    """Issue 34: SIGTERM during ``pvg reproduce --task bec`` left nothing of 3 minutes' work."""
    pytest.importorskip("torch")
    args = ["pvg", "reproduce", "--profile", "smoke", "--task", "bec", "--seeds", "2"]
    out = tmp_path / "stopped"
    proc = _start([*args, "--out", str(out)], tmp_path)
    _, err = _interrupt(proc, out / "runs" / "bec-s0.json", signal.SIGTERM)
    assert proc.returncode == 143 and "interrupted by SIGTERM" in err, err
    assert (out / "runs" / "bec-s0.json").is_file() and not (out / "runs" / "bec.json").exists()
    saved = (out / "runs" / "bec-s0.json").read_bytes()
    refused = _run([*args, "--out", str(out)], tmp_path)  # no silent restart over it
    assert refused.returncode == 2 and "--resume" in refused.stderr, refused.stderr
    resumed = _run([*args, "--out", str(out), "--resume"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "runs" / "bec-s0.json").read_bytes() == saved  # reused, not run again
    whole = _run([*args, "--out", str(tmp_path / "whole")], tmp_path)
    assert whole.returncode == 0, whole.stderr

    def table(folder: Path) -> object:
        return json.loads((folder / "results.json").read_text())["bec"]["table"]

    assert table(out) == table(tmp_path / "whole")
