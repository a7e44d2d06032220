"""The honest prover's checkpoint budget on bb5: page faults against re-simulation (issue 41).

A bisection prover keeps evenly spaced checkpoints of its run
(:class:`proofgames.CheckpointedRun`) and re-simulates from the nearest one when V asks for
a midpoint.  A larger budget means more fresh memory touched once (page faults: the
checkpoints of the 47,176,870-step run of the 5-state champion on its 12,289-cell window)
and less re-simulation.  For each budget, in fresh processes (page faults are paid in a
fresh process, not in one that reuses freed memory), round-robin ``--repeat`` times:

* one plain run of bb5 (the engine alone) and one checkpointed run;
* a bisection debate, honest A against B disputing at random (the CLI's default): its wall
  time and A's steps simulated (the first run plus the re-simulation);
* the same against honest B.

Medians are shown with the load average before and after; ratios are to the plain run in
the same process.  ``--publish`` writes benchmarks/results/checkpoints.{json,md} and the
``bench:checkpoints`` block of docs/performance.md.

Run: ``.venv/bin/python benchmarks/bench_checkpoints.py [--repeat 5] [--json] [--publish]``
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import _cpu_publish
from bench_deterministic import BB5_STEPS
from bench_startup import byte_compiled

ROOT = Path(__file__).resolve().parent.parent
BUDGETS_MIB = (1, 2, 4, 8, 16, 32)

PROBE = """
import json, sys, time
from proofgames import CheckpointedRun
from proofgames.harness import play, resolve_instance
CheckpointedRun.MEMORY_BYTES = int(sys.argv[1]) << 20
inst = resolve_instance("bisection", "bb5", steps=int(sys.argv[2]))
tm, steps, out = inst.target, inst.steps, {}
tm.run_steps(tm.initial(), 1)  # load the kernel
t = time.perf_counter(); tm.run_steps(tm.initial(), steps); out["plain"] = time.perf_counter() - t
t = time.perf_counter(); run = CheckpointedRun(tm, steps)
out["checkpointed"] = time.perf_counter() - t
out["interval"] = run.interval
del run
for b in ("random", "honest"):
    t = time.perf_counter(); o = play("bisection", inst, claim=1, a="honest", b=b, seed=0)
    out["debate_" + b] = time.perf_counter() - t
    out["work_" + b] = o.costs.prover_steps["A"]
    assert o.winner == "A", o.reason
print(json.dumps(out))
"""


def _probe(budget: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(budget), str(BB5_STEPS)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"probe at {budget} MiB failed: {proc.stderr[-800:]}")
    return dict(json.loads(proc.stdout))


def measure(repeat: int) -> dict[str, Any]:
    """Every budget in fresh processes, round-robin; the first round warms caches, uncounted."""
    byte_compiled(ROOT / "src")
    load_before = os.getloadavg()
    runs: dict[int, list[dict[str, float]]] = {b: [] for b in BUDGETS_MIB}
    for rnd in range(repeat + 1):
        for budget in BUDGETS_MIB:
            probe = _probe(budget)
            if rnd:
                runs[budget].append(probe)
    rows = {}
    for budget, probes in runs.items():
        rows[str(budget)] = {key: statistics.median(p[key] for p in probes) for key in probes[0]}
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "cpu_affinity": sorted(os.sched_getaffinity(0)),
        },
        "repeat": repeat,
        "steps": BB5_STEPS,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "budgets_mib": rows,
    }


def markdown(r: dict[str, Any]) -> str:
    """The published block."""
    lb, la = r["load_average_before"], r["load_average_after"]
    lines = [
        f"Medians of {r['repeat']} fresh processes per budget (round-robin, after one "
        f"warm-up round); CPUs {r['machine']['cpu_affinity']} of {r['machine']['cpus']}; "
        f"load average {lb[0]:.2f} before, {la[0]:.2f} after. bb5, T = {r['steps']:,}; "
        "ratios to the plain run in the same process; A's re-simulation is its steps "
        "beyond T, as a fraction of T.",
        "",
        "| budget | interval | plain run | checkpointed | / plain | debate vs random B "
        "| / plain | A's re-simulation | debate vs honest B | / plain |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for budget, m in r["budgets_mib"].items():
        p = m["plain"]
        extra = (m["work_random"] - r["steps"]) / r["steps"]
        lines.append(
            f"| {budget} MiB | {int(m['interval']):,} | {p:.3f} s | {m['checkpointed']:.3f} s "
            f"| {m['checkpointed'] / p:.2f}x | {m['debate_random']:.3f} s "
            f"| {m['debate_random'] / p:.2f}x | {extra:.2%} | {m['debate_honest']:.3f} s "
            f"| {m['debate_honest'] / p:.2f}x |"
        )
    return "\n".join([*lines, ""])


def publish(result: dict[str, Any]) -> str:
    """results/checkpoints.{json,md} and the docs/performance.md block."""
    return _cpu_publish.publish(
        "checkpoints", "bench_checkpoints.py", "checkpoints", result, markdown(result)
    )


if __name__ == "__main__":
    _cpu_publish.main(__doc__.splitlines()[0], measure, markdown, publish, repeat=5)
