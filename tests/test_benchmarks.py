"""The benchmark scripts import (each is run by hand; a broken import shows only then)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

CODE = """
import importlib, sys, traceback
sys.path.insert(0, sys.argv[1])
failed = []
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\\n".join(failed))
"""


@pytest.mark.slow  # about 8 s: torch and the judge server's modules load
def test_every_benchmark_script_imports() -> None:
    # Each in a fresh interpreter's import order as run by hand: bench_startup and
    # bench_isolation once imported each other, and neither could start.
    names = sorted(p.stem for p in BENCHMARKS.glob("*.py"))
    assert "bench_isolation" in names and "bench_startup" in names
    for first in ("bench_startup", "bench_isolation"):
        order = [first] + [n for n in names if n != first]
        res = subprocess.run(
            [sys.executable, "-c", CODE, str(BENCHMARKS), *order],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr[-2000:]
        assert res.stdout.strip() == "", res.stdout
