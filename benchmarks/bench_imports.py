"""What each layer of the command line's imports costs, over numpy's (issue 41).

Fresh processes, medians of ``--repeat`` (default 9), taken round-robin: ``import numpy``
alone, then numpy with typer, click and rich (what any typer command line pays), with
``proofgames.cli``, and with the harness (the instances, the machines and the protocol
catalog; each protocol's and strategy's module loads on its first lookup).  Plain
imports, with the collector on (the ``proofgames`` script turns it off while importing).
Prints a markdown table with the load average; ``--publish`` writes
benchmarks/results/imports.md.

Run:  taskset -c 0 .venv/bin/python benchmarks/bench_imports.py [--publish]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = {
    "numpy": "import numpy",
    "numpy + typer, click, rich": "import numpy, typer, rich.console, rich.table",
    "numpy + proofgames.cli": "import numpy, proofgames.cli",
    "numpy + proofgames.cli + proofgames.harness": (
        "import numpy, proofgames.cli, proofgames.harness"
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--publish", action="store_true")
    opts = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    load = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in ROWS}
    for _ in range(opts.repeat):
        for name, code in ROWS.items():
            tick = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times[name].append(time.perf_counter() - tick)
    base = statistics.median(times["numpy"])
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} UTC, CPUs {sorted(os.sched_getaffinity(0))} "
        f"of {os.cpu_count()}, medians of {opts.repeat} fresh processes (round-robin), wall "
        f"time; load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after.\n",
        "| imports | wall median | over numpy's |",
        "|---|---:|---:|",
    ]
    for name, xs in times.items():
        med = statistics.median(xs)
        lines.append(f"| {name} | {1000 * med:.1f} ms | {1000 * (med - base):+.1f} ms |")
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.publish:
        (ROOT / "benchmarks" / "results" / "imports.md").write_text(text)


if __name__ == "__main__":
    main()
