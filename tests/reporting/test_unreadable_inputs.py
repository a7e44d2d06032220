"""Every input file of a command is read through proofgames.reporting.reading (issue 34, 8).

A FIFO given as ``--params``, ``sat:FILE``, ``--store`` or ``--readme`` used to hang the
command forever (``open`` waits for a writer); ``--params /dev/zero`` ate memory; a
deeply nested JSON file or line was a ``RecursionError`` traceback in the PVG readers; a
FIFO as a run's ``metrics.jsonl`` was silently skipped; no input had a size cap; a
``--params`` file with a key twice silently took the last.  Each test below failed on
that code (the FIFO runs by timing out).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
PROMPTLY = 60  # seconds: a refusal takes about 2; the old code never returned


def _limited() -> None:
    """The child's memory is capped, so that a reader of ``/dev/zero`` cannot eat the host's."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proofgames", *args], cwd=cwd, capture_output=True, text=True,
        timeout=PROMPTLY, preexec_fn=_limited,
    )  # fmt: skip


FIFO_COMMANDS = {
    "--params": ["estimate", "--params", "{fifo}", "--debates", "10"],
    "sat:FILE": ["debate", "witness", "--machine", "sat:{fifo}"],
    "estimate --store": ["estimate", "--debates", "10", "--store", "{fifo}"],
    "exhaustive --store": ["exhaustive", "bisection", "-m", "bb2", "--store", "{fifo}"],
    "--readme": ["report", "--readme", "{fifo}", "--out", "r", "--debates", "10"],
}


@needs_fifo
@pytest.mark.parametrize(
    "option",
    [pytest.param(o, marks=[pytest.mark.slow] if o != "--params" else []) for o in FIFO_COMMANDS],
)  # each run starts Python (about 2 s): one in the quick loop, all in the full suite
def test_a_fifo_given_as_an_input_is_refused_promptly(tmp_path: Path, option: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    res = _cli([a.format(fifo=fifo) for a in FIFO_COMMANDS[option]], tmp_path)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert f"{fifo}: it is a FIFO (named pipe), not a regular file" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # nothing written


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_given_as_params_is_refused_without_reading_it(tmp_path: Path) -> None:
    res = _cli(["estimate", "--params", "/dev/zero", "--debates", "10"], tmp_path)
    assert res.returncode == 2, res.stderr
    assert "/dev/zero: it is a character device, not a regular file" in res.stderr
    assert "memory" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


GOOD = {"c": 0.01, "s": 0.02, "b": 0.05, "q": 0.001, "v": 0.01, "w": 0.6667, "d": 0.6}


def test_a_params_file_with_a_key_twice_or_too_large_is_refused(tmp_path: Path) -> None:
    from proofgames.errors import ProtocolError
    from proofgames.stochastic.params import resolve_params

    path = tmp_path / "p.json"
    path.write_text(json.dumps(GOOD)[:-1] + ', "w": 0.9}')
    with pytest.raises(ProtocolError, match="the key 'w' appears twice") as info:
        resolve_params(str(path), 1.0, 10)
    assert str(path) in str(info.value)
    path.write_text(json.dumps(GOOD) + " " * (1 << 20))  # valid JSON, over 1 MiB
    with pytest.raises(ProtocolError, match="holds more than 1,048,576 bytes"):
        resolve_params(str(path), 1.0, 10)


def test_each_reader_refuses_a_file_over_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caps are module constants each reader looks up when it reads (so a test, or a
    user with bigger files, can raise them)."""
    from proofgames.language import gsm8k
    from proofgames.machines import sat
    from proofgames.reporting import readme

    cnf, data, doc = tmp_path / "f.cnf", tmp_path / "g.jsonl", tmp_path / "README.md"
    cnf.write_text("p cnf 2 1\n1 -2 0\n")
    data.write_text('{"question": "q", "answer": "1"}\n')
    doc.write_text("<!-- t:start -->\n<!-- t:end -->\n")
    for module, name in ((sat, "DATA_LIMIT"), (gsm8k, "DATA_LIMIT"), (readme, "TEXT_LIMIT")):
        monkeypatch.setattr(module, name, 8)
    for call, path in (
        (lambda: sat.resolve_sat(f"sat:{cnf}"), cnf),
        (lambda: gsm8k.load_gsm8k_problems(data), data),
        (lambda: readme.check_block(doc, "t"), doc),
    ):
        with pytest.raises(ProofgamesError, match="holds more than 8 bytes") as info:
            call()
        assert str(path) in str(info.value)


def test_the_pvg_json_readers_refuse_deep_nesting_with_the_file_and_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from proofgames.errors import PVGError
    from proofgames.pvg._bookkeeping import logged_rows
    from proofgames.pvg._files import read_json

    results = tmp_path / "results.json"
    results.write_text("[" * 100_000)  # pvg report, pvg stability --resume
    with pytest.raises(PVGError, match="nested deeper than 64 levels") as info:
        read_json(results, "results file")
    assert str(results) in str(info.value)
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 1}\n' + '{"a": ' * 50_000 + "\n")  # pvg curves, train --resume
    with pytest.raises(PVGError, match=rf"{log}, line 2: not valid JSON \(nested deeper"):
        logged_rows(tmp_path, 10)
    log.write_text('{"step": 1}\n{"step": true}\n')
    with pytest.raises(PVGError, match="line 2 is not a metric row"):
        logged_rows(tmp_path, 10)


@needs_fifo
def test_the_pvg_readers_refuse_a_fifo_instead_of_skipping_or_misnaming_it(
    tmp_path: Path,
) -> None:
    pytest.importorskip("torch")
    from proofgames.errors import PVGError
    from proofgames.pvg._bookkeeping import logged_rows
    from proofgames.pvg.checkpoint import read_torch

    os.mkfifo(tmp_path / "metrics.jsonl")
    with pytest.raises(PVGError, match=r"metrics\.jsonl: it is a FIFO"):
        logged_rows(tmp_path, 10)  # was [] (a resumed run would lose its log)
    os.mkfifo(tmp_path / "agents.pt")
    with pytest.raises(PVGError, match=r"agents\.pt: it is a FIFO"):  # was "is empty"
        read_torch(tmp_path / "agents.pt", "checkpoint")


def test_a_checkpoint_over_its_cap_is_refused_before_torch_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    from proofgames.errors import PVGError
    from proofgames.pvg import checkpoint

    path = tmp_path / "agents.pt"
    torch.save({"format": 1, "x": torch.zeros(100)}, path)
    assert checkpoint.read_torch(path, "checkpoint")["format"] == 1
    monkeypatch.setattr(checkpoint, "CHECKPOINT_LIMIT", 100)
    monkeypatch.setattr(checkpoint.torch, "load", lambda *a, **k: pytest.fail("loaded"))
    with pytest.raises(PVGError, match="holds more than 100 bytes"):
        checkpoint.read_torch(path, "checkpoint")
