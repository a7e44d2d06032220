"""Where the CLI bisection debate on bb5 spends its time, stage by stage (issue 41).

``proofgames debate bisection --machine bb5 --steps 47176870 --claim 1`` broken down,
with each engine backend (``PROOFGAMES_KERNELS=c``: the C kernels of
:mod:`proofgames._native`; ``numba``: numba's cached kernels), in one run:

* fresh processes timed from outside (wall; CPU of the child from ``getrusage``):
  ``python -c pass`` (the interpreter), ``python -c "import numpy"``,
  ``python -c "import proofgames.cli"`` (every import the command makes before it runs),
  and the whole command;
* a probe, itself a fresh process, timing its own stages in order (wall and
  ``time.process_time``): the imports of the CLI and the harness; the first use of the
  engine (loading the C library, or importing numba and loading its cached kernels);
  the instance's set-up (``resolve_instance``); one plain run of bb5; one checkpointed run
  (what honest A does); the whole in-process debate (A's checkpointed run, B's
  re-simulation of the first halves, V);
* the floor: one run of bb5 by a tight C loop (gcc -O2; its own clock).

Rows are taken round-robin ``--repeat`` times, so that a change of load touches all alike;
the median is shown, with the load average before and after.  ``--publish`` also fills
the ``bench:startup-breakdown`` block of docs/performance.md.  The tree's ``.pyc`` files are
written first, as an install would have them.  ``--publish`` writes
benchmarks/results/startup_breakdown.{json,md}.

Run: ``.venv/bin/python benchmarks/bench_startup_breakdown.py [--repeat 3] [--json] [--publish]``
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _cpu_publish
from bench_deterministic import BB5_STEPS, Run, c_loop, children_cpu
from bench_startup import byte_compiled

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BACKENDS = ("c", "numba")
DEBATE = ["debate", "bisection", "--machine", "bb5", "--steps", str(BB5_STEPS), "--claim", "1"]
PROCESSES = {
    "python -c pass": [PY, "-c", "pass"],
    'python -c "import numpy"': [PY, "-c", "import numpy"],
    'python -c "import proofgames.cli"': [PY, "-c", "import proofgames.cli"],
}
WHOLE = "proofgames " + " ".join(DEBATE)

PROBE = f"""
import json, sys, time
marks = []
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
mark("start")
import proofgames.cli, proofgames.harness
from proofgames import CheckpointedRun, TuringMachine
mark("imports (CLI, harness)")
tm2 = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
tm2.run_steps(tm2.initial(), 1)
mark("first engine use (kernel load)")
from proofgames.harness import play, resolve_instance
inst = resolve_instance("bisection", "bb5", {BB5_STEPS})
mark("instance set-up")
tm = inst.target
final, work = tm.run_steps(tm.initial(), {BB5_STEPS})
assert work == {BB5_STEPS} and tm.accepts(final) == 1
mark("one plain run of bb5")
CheckpointedRun(tm, {BB5_STEPS})
mark("one checkpointed run (honest A's)")
out = play("bisection", inst, claim=1)
assert out.winner == "A", out.reason
mark("whole in-process debate")
rows = {{n: (t - marks[i][1], c - marks[i][2]) for i, (n, t, c) in enumerate(marks[1:])}}
print(json.dumps({{"stages": rows, "backend": tm._kernel.backend,
                  "numba_imported": "numba" in sys.modules}}))
"""


def _run(argv: list[str], backend: str) -> tuple[Run, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PROOFGAMES_KERNELS": backend}
    env.pop("PROOFGAMES_PARTY_SERVER", None)
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    run = (time.perf_counter() - start, children_cpu() - cpu)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return run, proc.stdout


def _median(runs: list[Run]) -> dict[str, float]:
    return {"wall_s": statistics.median(r[0] for r in runs),
            "cpu_s": statistics.median(r[1] for r in runs)}  # fmt: skip


def measure(repeat: int) -> dict[str, Any]:
    """Every row, round-robin; the first round warms the caches and is not counted."""
    byte_compiled(ROOT / "src")
    load_before = os.getloadavg()
    procs: dict[str, dict[str, list[Run]]] = {b: {} for b in BACKENDS}
    stages: dict[str, dict[str, list[Run]]] = {b: {} for b in BACKENDS}
    floor: list[Run] = []
    probes: dict[str, dict[str, Any]] = {}
    with c_loop() as c_run:
        for rnd in range(repeat + 1):
            if c_run is not None and rnd:
                floor.append(c_run())
            for backend in BACKENDS:
                argvs = {**PROCESSES, WHOLE: [PY, "-m", "proofgames", *DEBATE]}
                for name, argv in argvs.items():
                    run, _ = _run(argv, backend)
                    if rnd:
                        procs[backend].setdefault(name, []).append(run)
                run, out = _run([PY, "-c", PROBE], backend)
                probes[backend] = probe = json.loads(out)
                for name, values in probe["stages"].items():
                    if rnd:
                        stages[backend].setdefault(name, []).append(tuple(values))
    c = _median(floor) if floor else None
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(),
               "cpu_affinity": sorted(os.sched_getaffinity(0))}  # fmt: skip
    return {
        "machine": machine,
        "repeat": repeat,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "c_loop": c,
        "processes": {b: {n: _median(r) for n, r in v.items()} for b, v in procs.items()},
        "stages": {b: {n: _median(r) for n, r in v.items()} for b, v in stages.items()},
        "probe_backend": {b: p["backend"] for b, p in probes.items()},
        "numba_imported": {b: p["numba_imported"] for b, p in probes.items()},
    }


def _ratio(x: float, c: dict[str, float] | None, key: str) -> str:
    return "-" if c is None else f"{x / c[key]:.2f}x"


def markdown(r: dict[str, Any]) -> str:
    """The published block."""
    c, lb, la = r["c_loop"], r["load_average_before"], r["load_average_after"]
    lines = [
        f"Medians of {r['repeat']} rounds (round-robin, after one warm-up round); CPUs "
        f"{r['machine']['cpu_affinity']} of {r['machine']['cpus']}; load average "
        f"{lb[0]:.2f} before, {la[0]:.2f} after. Ratios are to one C run of bb5"
        + ("" if c is None else f" ({c['wall_s']:.3f} s wall, {c['cpu_s']:.3f} s CPU)")
        + ".",
        "",
        "| row | backend | wall | wall / C | CPU | CPU / C |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for backend in BACKENDS:
        for name, m in r["processes"][backend].items():
            lines.append(
                f"| process: `{name}` | {backend} | {m['wall_s']:.3f} s "
                f"| {_ratio(m['wall_s'], c, 'wall_s')} | {m['cpu_s']:.3f} s "
                f"| {_ratio(m['cpu_s'], c, 'cpu_s')} |"
            )
        for name, m in r["stages"][backend].items():
            lines.append(
                f"| probe stage: {name} | {backend} | {m['wall_s']:.3f} s "
                f"| {_ratio(m['wall_s'], c, 'wall_s')} | {m['cpu_s']:.3f} s "
                f"| {_ratio(m['cpu_s'], c, 'cpu_s')} |"
            )
    imported = ", ".join(f"{b}: {v}" for b, v in r["numba_imported"].items())
    lines += ["", f"numba imported by the probe: {imported}.", ""]
    return "\n".join(lines)


def publish(result: dict[str, Any]) -> None:
    """results/startup_breakdown.{json,md} and the docs/performance.md block."""
    _cpu_publish.publish(
        "startup_breakdown", "bench_startup_breakdown.py", "startup-breakdown", result,
        markdown(result),
    )  # fmt: skip


if __name__ == "__main__":
    _cpu_publish.main(__doc__.splitlines()[0], measure, markdown, publish, repeat=3)
