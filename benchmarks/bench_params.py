"""Benchmark of the parameter optimizer (issue 15): wall time of ``params optimize``.

Times :func:`proofgames.stochastic.optimize_params` (median of 3 runs; the exact tier's
scan dominates when V's count is large) for both tiers at a few (K, T), and records the
V queries each finds.

Writes benchmarks/results/params.{json,md} and the ``bench:params`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_params.py
"""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path

from proofgames.reporting import replace_block, write_atomic, write_json
from proofgames.stochastic import optimize_params

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
CASES = ((1.0, 10), (1.0, 10**6), (2.0, 1000), (5.0, 10))


def time_case(k: float, t: int, tail: str, runs: int = 3) -> dict:
    seconds, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = optimize_params(k, t, tail=tail)
        seconds.append(time.perf_counter() - start)
    assert result is not None
    return {
        "k": k,
        "t": t,
        "tail": tail,
        "seconds": statistics.median(seconds),
        "v_samples": result.params.v_samples,
        "a_samples": result.params.a_samples,
    }


def main() -> None:
    rows = [
        time_case(k, t, tail, 1 if (tail == "exact" and k >= 5) else 3)
        for k, t in CASES
        for tail in ("hoeffding", "exact")
    ]
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}, 2 cores",
        "rows": rows,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "params.json", result, indent=2)
    lines = [
        f"Measured {result['date']} on {result['machine']} "
        "(`.venv/bin/python benchmarks/bench_params.py`). Wall time of "
        "`proofgames params optimize` (the Python function; median of 3, one run for the "
        "exact tier at K = 5), default w = 2/3, d = 3/5, cap 10^8 prover samples per round:",
        "",
        "| K | T | tier | seconds | V queries found | A samples / round |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        tier = "exact tail (not machine-checked)" if r["tail"] == "exact" else "Hoeffding"
        lines.append(
            f"| {r['k']:g} | {r['t']:,} | {tier} | {r['seconds']:.3f} "
            f"| {r['v_samples']:,} | {r['a_samples']:,} |"
        )
    md = "\n".join(lines) + "\n"
    write_atomic(OUT / "params.md", md)
    replace_block(ROOT / "docs" / "performance.md", "bench:params", md, required=True)
    print(md)


if __name__ == "__main__":
    main()
