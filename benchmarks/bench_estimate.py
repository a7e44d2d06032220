"""``proofgames estimate`` as a user runs it, against a floor you could write in numpy (issue 41).

The command: ``proofgames estimate --machine majority:n=5,p=0.7 --debates 100000 --json``
(the Lean constants; honest A and B), a fresh process timed from outside.

The floor: a fresh ``python`` that imports numpy and plays the same number of honest
debates in lockstep with the same constants (read from the command's own JSON, so both use
one parameter set): on each of the machine's 5 query steps, A's and B's binomial estimates
of p; on every one of its ``steps`` steps, the shared coin and B's abort test
(``|B's estimate - A's announcement| >= b_threshold``); the verdict from the last bit (the
majority of the five votes). Nothing of proofgames is imported: no machine objects, no
parameter checks, no trust boundary, no intervals, no Lipschitz hypothesis check.

Both run with the source tree's ``.pyc`` files written first (as after an install).
Min and median of ``--repeat`` runs, round-robin; wall and CPU (the process and its
children); load average before and after. Prints markdown, or JSON with ``--json``;
``--publish`` writes benchmarks/results/estimate.{json,md}.

Run: ``.venv/bin/python benchmarks/bench_estimate.py [--repeat 5] [--json] [--publish]
[--baseline OTHER/src]`` (``--baseline``: another checkout's command in the same rounds)
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from proofgames.reporting import write_atomic, write_json

ROOT = Path(__file__).resolve().parent.parent
MACHINE = "majority:n=5,p=0.7"
DEBATES = 100_000
COMMAND = [sys.executable, "-m", "proofgames", "estimate", "--machine", MACHINE,
           "--debates", str(DEBATES), "--json"]  # fmt: skip

FLOOR = """
import sys, numpy as np
a_n, b_n, thr, steps, debates, p = (float(x) for x in sys.argv[1:7])
a_n, b_n, steps, debates = int(a_n), int(b_n), int(steps), int(debates)
ra, rb = (np.random.default_rng(s) for s in np.random.SeedSequence(0).spawn(2))
active = np.arange(debates)
votes = np.zeros((5, debates), dtype=bool)
for t in range(steps):
    n = active.size
    if t < 5:  # a vote: both provers estimate p from their samples
        announced = ra.binomial(a_n, p, n) / a_n
        mine = rb.binomial(b_n, p, n) / b_n
    else:  # a step of the count: its probability is 0 or 1, known to both
        announced = mine = np.zeros(n)
    coin = np.mod(ra.random(n) + rb.random(n), 1.0)
    if t < 5:
        votes[t, active] = coin < announced
    active = active[np.abs(mine - announced) < thr]
accepted = np.count_nonzero(votes[:, active].sum(axis=0) >= 3)
print(accepted / debates)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], src: Path = ROOT / "src") -> tuple[float, float, str]:
    cpu, start = _children_cpu(), time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu, out.stdout


def measure(repeat: int, baseline: Path | None = None) -> dict[str, Any]:
    """All rows, ``repeat`` times round-robin; the floor uses the command's own constants.

    ``baseline``: another checkout's ``src``, whose command is timed in the same rounds.
    """
    for src in (ROOT / "src", baseline):
        if src is not None:
            compileall.compile_dir(src, quiet=1)  # the .pyc files an install would have
    load = os.getloadavg()
    first = json.loads(_timed(COMMAND)[2])  # also warms the caches both runs read
    if baseline is not None:
        _timed(COMMAND, baseline)
    params = first["params"]
    floor = [sys.executable, "-c", FLOOR, str(params["a_samples"]), str(params["b_samples"]),
             str(params["b_threshold"]), str(params["steps"]), str(DEBATES), "0.7"]  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {"command": [], "floor": []}
    if baseline is not None:
        runs["baseline command"] = []
    for _ in range(repeat):
        runs["command"].append(_timed(COMMAND)[:2])
        runs["floor"].append(_timed(floor)[:2])
        if baseline is not None:
            runs["baseline command"].append(_timed(COMMAND, baseline)[:2])
    rows = {}
    for name, values in runs.items():
        walls, cpus = [v[0] for v in values], [v[1] for v in values]
        rows[name] = {"wall_min": min(walls), "wall_median": statistics.median(walls),
                      "cpu_median": statistics.median(cpus)}  # fmt: skip
    return {
        "command": " ".join(["proofgames", *COMMAND[3:]]),
        "acceptance": first["acceptance"],
        "runs": rows,
        "ratio_wall_median": rows["command"]["wall_median"] / rows["floor"]["wall_median"],
        "ratio_cpu_median": rows["command"]["cpu_median"] / rows["floor"]["cpu_median"],
        "baseline": None if baseline is None else str(baseline),
        "baseline_ratio_cpu_median": None
        if baseline is None
        else (rows["baseline command"]["cpu_median"] / rows["floor"]["cpu_median"]),
        "load_average_before": load,
        "load_average_after": os.getloadavg(),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "cpus": sorted(os.sched_getaffinity(0)),
        "repeat": repeat,
    }


def markdown(r: dict[str, Any]) -> str:
    """The published block."""
    lines = [
        f"`{r['command']}` against its numpy floor, each a fresh process, {r['repeat']} runs "
        f"round-robin; CPUs {r['cpus']}; load average {r['load_average_before'][0]:.2f} "
        f"before, {r['load_average_after'][0]:.2f} after.",
        "",
        "| run | wall min | wall median | CPU median |",
        "|---|---:|---:|---:|",
    ]
    for name, m in r["runs"].items():
        lines.append(f"| {name} | {m['wall_min']:.3f} s | {m['wall_median']:.3f} s "
                     f"| {m['cpu_median']:.3f} s |")  # fmt: skip
    lines += ["", f"Command / floor (medians): wall {r['ratio_wall_median']:.2f}x, "
              f"CPU {r['ratio_cpu_median']:.2f}x.", ""]  # fmt: skip
    if r.get("baseline"):
        lines[-1:] = [f"Baseline (`{r['baseline']}`) / floor, CPU medians: "
                      f"{r['baseline_ratio_cpu_median']:.2f}x.", ""]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--publish", action="store_true")
    parser.add_argument("--baseline", type=Path, help="another checkout's src, same rounds")
    args = parser.parse_args()
    result = measure(args.repeat, args.baseline and args.baseline.resolve())
    if args.publish:
        write_json(ROOT / "benchmarks" / "results" / "estimate.json", result, indent=2)
        write_atomic(ROOT / "benchmarks" / "results" / "estimate.md", markdown(result))
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
