"""The generated blocks live where the scripts that regenerate them write."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BLOCKS = [
    ("README.md", "report:stochastic"),  # proofgames report --readme README.md
    ("README.md", "report:params"),  # proofgames params report --readme README.md
    ("docs/pvg.md", "report:pvg"),  # proofgames pvg reproduce --readme docs/pvg.md
    ("docs/performance.md", "bench:deterministic"),  # benchmarks/bench_deterministic.py
    ("docs/performance.md", "bench:stochastic"),  # benchmarks/bench_stochastic.py
    ("docs/performance.md", "bench:params"),  # benchmarks/bench_params.py
    ("docs/performance.md", "bench:isolation"),  # benchmarks/bench_isolation.py --publish
    ("docs/performance.md", "bench:pvg"),  # benchmarks/bench_pvg_bec.py
    ("docs/performance.md", "bench:pvg-locate"),  # benchmarks/bench_pvg_locate.py
    ("docs/performance.md", "bench:pvg-exact"),  # benchmarks/bench_pvg_exact.py
    ("docs/performance.md", "bench:pvg-needle"),  # benchmarks/bench_pvg_needle.py
    ("docs/performance.md", "bench:executors"),  # benchmarks/bench_executors.py
    ("docs/performance.md", "bench:selfplay"),  # benchmarks/bench_selfplay_env.py
    ("docs/performance.md", "bench:startup"),  # benchmarks/bench_startup.py --publish
    ("docs/performance.md", "bench:startup-breakdown"),  # bench_startup_breakdown.py --publish
]


@pytest.mark.parametrize(("path", "name"), BLOCKS)
def test_each_generated_block_has_its_markers_once(path, name):
    text = (ROOT / path).read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert text.count(start) == text.count(end) == 1
    assert text.index(start) < text.index(end)
