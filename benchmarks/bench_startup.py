"""Benchmark of start-up: the whole command a user runs, against the computation alone (issue 41).

Measures, in one run on this machine, each as a fresh process timed from outside
(``time.perf_counter`` around ``subprocess.run``), min and median of ``--repeat`` runs
taken round-robin so that a change of load touches every row alike:
  * ``python -c "import numpy"``, as is and with ``OPENBLAS_THREAD_TIMEOUT=4`` (what the
    command line sets, :mod:`proofgames._blas`: the floor's numpy is the latter);
  * ``python -c "import proofgames"`` and ``proofgames --help``;
  * ``proofgames debate bisection --machine bb5 --steps 47176870 --claim 1`` in process
    and with ``--isolation process`` (both provers in their own processes), the provers'
    processes either started or forked by a party server (``proofgames party-server``,
    started here and warm before the first run; its children's CPU is counted from its
    ``cutime``; this tree only);
  * the same against honest B (``--prover-b honest``: the second full simulation), in
    process and through the party server, where both provers simulate at once;
  * the floor: one run of the 47,176,870-step 5-state champion by a tight C loop compiled
    here with ``gcc -O2`` (the loop of ``bench_deterministic.py``, one repetition; its wall
    is its own clock, so process start is not in it).

Each run records its wall time and its CPU time (the process's and its children's, from
``getrusage``): on a shared core the wall time grows with other work, the CPU time hardly.

Ratios are to the C loop's median (the whole commands) and isolated / in-process.  The load
average (``os.getloadavg()``) is recorded before and after: on a shared machine the ratios
move with it.  ``--baseline PATH`` times another checkout's ``src`` in the same rounds
(before / after a change, under the same load).

Prints a markdown table, or one JSON object with ``--json``; with ``--publish`` it also
writes benchmarks/results/startup.{json,md} and the ``bench:startup`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_startup.py [--json] [--repeat N] [--publish]
      [--baseline OTHER/src]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_deterministic import BB5_STEPS, Run, c_loop, children_cpu
from bench_isolation import served_cpu

from proofgames._blas import QUIET
from proofgames.isolation._served import ENV
from proofgames.isolation.server import serving
from proofgames.reporting import replace_block, write_atomic, write_json

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
IN_PROCESS = "debate bisection bb5, in process"
ISOLATED = "debate bisection bb5, --isolation process"
SERVED = "debate bisection bb5, --isolation process, party server"
HONEST = "debate bisection bb5, honest B, in process"
HONEST_SERVED = "debate bisection bb5, honest B, --isolation process, party server"
SERVER_ROWS = (SERVED, HONEST_SERVED)
DEBATE = ["debate", "bisection", "--machine", "bb5", "--steps", str(BB5_STEPS), "--claim", "1"]
NUMPY = 'python -c "import numpy"'
NUMPY_QUIET = 'python -c "import numpy", OPENBLAS_THREAD_TIMEOUT=4 (as the CLI sets it)'
COMMANDS: dict[str, list[str]] = {
    NUMPY: [PY, "-c", "import numpy"],
    NUMPY_QUIET: [PY, "-c", "import numpy"],
    'python -c "import proofgames"': [PY, "-c", "import proofgames"],
    "proofgames --help": [PY, "-m", "proofgames", "--help"],
    IN_PROCESS: [PY, "-m", "proofgames", *DEBATE],
    ISOLATED: [
        PY, "-m", "proofgames", *DEBATE, "--isolation", "process",
    ],
    SERVED: [PY, "-m", "proofgames", *DEBATE, "--isolation", "process"],
    HONEST: [PY, "-m", "proofgames", *DEBATE, "--prover-b", "honest"],
    HONEST_SERVED: [
        PY, "-m", "proofgames", *DEBATE, "--prover-b", "honest", "--isolation", "process",
    ],
}  # fmt: skip
COMMAND_ENV: dict[str, dict[str, str]] = {NUMPY_QUIET: QUIET}  # set for that command only


def byte_compiled(src: Path) -> None:
    """Write the ``.pyc`` files of ``src`` first, as an install or a first run would: a tree
    without them (or a shell with ``PYTHONDONTWRITEBYTECODE``) would compile every module
    it imports from source in every timed run."""
    compileall.compile_dir(src, quiet=1)


def debate_clock(stdout: str) -> float | None:
    """The debate's own clock, from the outcome table's ``wall time`` row (None: no table)."""
    found = re.search(r"wall time\s*\S\s*([0-9.]+) s", stdout)
    return None if found is None else float(found.group(1))


def _run(
    argv: list[str],
    src: Path,
    server: tuple[str, int] | None = None,
    clocks: list[float] | None = None,
    extra_env: dict[str, str] | None = None,
) -> Run:
    """One command, start to exit, importing proofgames from ``src``: (wall, CPU) seconds.

    With ``clocks``, the debate's own clock (its outcome table's wall time) is appended.

    The CPU is the process's and its children's (an isolated debate's provers included),
    which other work on a shared core does not inflate as it does the wall time.  With
    ``server`` (socket, pid) the provers are forked by that party server, and their CPU is
    the server's reaped children's.
    """
    env = {k: v for k, v in os.environ.items() if k != ENV} | {"PYTHONPATH": str(src)}
    env |= extra_env or {}
    if server is not None:
        env[ENV] = server[0]
    served = 0.0 if server is None else served_cpu(server[1])
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if server is not None:
        cpu += served_cpu(server[1]) - served
        if "party server" in proc.stderr:  # it fell back: these are not served figures
            raise SystemExit(f"the party server was not used: {proc.stderr[-500:]}")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    if clocks is not None and (clock := debate_clock(proc.stdout)) is not None:
        clocks.append(clock)
    return wall, cpu


def _summary(runs: list[Run], floor: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": runs}
    for i, what in enumerate(("wall", "cpu")):
        values = [r[i] for r in runs]
        out[f"{what}_min_s"], out[f"{what}_median_s"] = min(values), statistics.median(values)
        out[f"{what}_over_c"] = None if floor is None else (
            out[f"{what}_median_s"] / floor[f"{what}_median_s"]
        )  # fmt: skip
    return out


def measure(repeat: int, src: Path = ROOT / "src", baseline: Path | None = None) -> dict[str, Any]:
    """Every figure of the benchmark, round-robin: each round times the C loop once and
    each command once in each source tree (``baseline``: another checkout, compared in
    the same run).  One untimed run of each command first warms the caches."""
    trees = {"this": src} | ({} if baseline is None else {"baseline": baseline})
    for path in trees.values():
        byte_compiled(path)
    runs: dict[str, dict[str, list[Run]]] = {t: {n: [] for n in COMMANDS} for t in trees}
    floor_runs: list[Run] = []
    clocks: list[float] = []  # the in-process debate's own clock, this tree
    load_before = os.getloadavg()
    with c_loop() as c_run, tempfile.TemporaryDirectory() as d, serving(sock := f"{d}/s") as srv:
        for name, argv in COMMANDS.items():
            for tree, path in trees.items():
                if name not in SERVER_ROWS or tree == "this":  # the server runs this tree
                    server = (sock, srv.pid) if name in SERVER_ROWS else None
                    _run(argv, path, server, None, COMMAND_ENV.get(name))
        for _ in range(repeat):
            if c_run is not None:
                floor_runs.append(c_run())
            for name, argv in COMMANDS.items():
                for tree, path in trees.items():
                    if name not in SERVER_ROWS or tree == "this":
                        server = (sock, srv.pid) if name in SERVER_ROWS else None
                        mine = clocks if (name, tree) == (IN_PROCESS, "this") else None
                        runs[tree][name].append(
                            _run(argv, path, server, mine, COMMAND_ENV.get(name))
                        )
    load_after = os.getloadavg()
    floor = _summary(floor_runs, None) if floor_runs else None
    rows = {tree: {name: _summary(r, floor) for name, r in per.items() if r}
            for tree, per in runs.items()}  # fmt: skip
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(),
               "platform": platform.platform(),
               "cpu_affinity": sorted(os.sched_getaffinity(0))}  # fmt: skip
    return {
        "machine": machine, "repeat": repeat, "src": str(src),
        "baseline": None if baseline is None else str(baseline),
        "load_average_before": load_before, "load_average_after": load_after,
        "c_loop": floor, "commands": rows["this"], "baseline_commands": rows.get("baseline"),
        "isolated_over_in_process": {
            tree: {what: r[ISOLATED][f"{what}_median_s"] / r[IN_PROCESS][f"{what}_median_s"]
                   for what in ("wall", "cpu")}
            for tree, r in rows.items()
        },
        "debate_clock_s": clocks,
        "floor_s": _floor(rows["this"], clocks),
        "served_over_in_process": {
            what: rows["this"][SERVED][f"{what}_median_s"]
            / rows["this"][IN_PROCESS][f"{what}_median_s"] for what in ("wall", "cpu")
        },
    }  # fmt: skip


def _floor(rows: dict[str, Any], clocks: list[float]) -> dict[str, float] | None:
    """What no Python command that runs this debate can go below: the interpreter and numpy
    starting (``python -c "import numpy"``, OpenBLAS quiet as the command line has it) plus
    the debate's own clock (medians)."""
    if not clocks:
        return None
    numpy_s = rows[NUMPY_QUIET]["wall_median_s"]
    clock = statistics.median(clocks)
    command = rows[IN_PROCESS]["wall_median_s"]
    return {"numpy_s": numpy_s, "debate_clock_s": clock, "sum_s": numpy_s + clock,
            "command_s": command, "rest_s": command - numpy_s - clock}  # fmt: skip


def table(res: dict[str, Any]) -> str:
    """The results as markdown."""
    c, base = res["c_loop"], res["baseline_commands"]
    la, lb = res["load_average_before"], res["load_average_after"]
    lines = [
        f"Whole commands, each a fresh process timed from outside, {res['repeat']} runs each "
        f"(round-robin with the C loop); load average {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} "
        f"before, {lb[0]:.2f} / {lb[1]:.2f} / {lb[2]:.2f} after; CPUs "
        f"{res['machine']['cpu_affinity']} of {res['machine']['cpus']}. Wall: start to exit; "
        "CPU: the process and its children (not inflated by other work on the core).",
        "",
        "| command | wall min | wall median | wall / C | CPU median | CPU / C |"
        + (" baseline: wall median | CPU median | CPU / C |" if base else ""),
        "|---|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if base else ""),
    ]
    if c is not None:
        lines.append(
            f"| floor: bb5 ({BB5_STEPS:,} steps), one C loop run, gcc -O2 (wall: its own "
            f"clock) | {c['wall_min_s']:.3f} s | {c['wall_median_s']:.3f} s | 1.00x "
            f"| {c['cpu_median_s']:.3f} s | 1.00x |" + (" | | |" if base else "")
        )
    for name, r in res["commands"].items():
        line = (
            f"| `{name}` | {r['wall_min_s']:.3f} s | {r['wall_median_s']:.3f} s "
            f"| {_x(r['wall_over_c'])} | {r['cpu_median_s']:.3f} s | {_x(r['cpu_over_c'])} |"
        )
        if base and name in base:
            b = base[name]
            line += (
                f" {b['wall_median_s']:.3f} s | {b['cpu_median_s']:.3f} s | {_x(b['cpu_over_c'])} |"
            )
        elif base:
            line += " - | - | - |"
        lines.append(line)
    iso = res["isolated_over_in_process"]
    said = [
        ("" if base is None else f"{tree}: ") + f"wall {v['wall']:.2f}x, CPU {v['cpu']:.2f}x"
        for tree, v in iso.items()
    ]
    lines += ["", "Isolated / in-process debate (medians): " + "; ".join(said) + "."]
    served = res["served_over_in_process"]
    lines.append(
        f"Isolated through the party server / in process (medians): wall {served['wall']:.2f}x, "
        f"CPU {served['cpu']:.2f}x."
    )
    floor, c = res.get("floor_s"), res["c_loop"]
    if floor is not None and c is not None:
        cw = c["wall_median_s"]
        lines.append(
            f"In-process debate, split (wall medians): the interpreter and numpy "
            f"{floor['numpy_s']:.3f} s ({floor['numpy_s'] / cw:.2f}x C) + the debate's own clock "
            f"{floor['debate_clock_s']:.3f} s ({floor['debate_clock_s'] / cw:.2f}x C) = "
            f"{floor['sum_s']:.3f} s ({floor['sum_s'] / cw:.2f}x C), the floor of any Python "
            f"command that runs it; the rest (the CLI's and the harness's imports, parsing, "
            f"output, exit) {floor['rest_s']:.3f} s ({floor['rest_s'] / cw:.2f}x C)."
        )
    if base:
        said_base = res.get("baseline_label") or f"`{res['baseline']}`"
        lines.append(f"Baseline: {said_base}; this: the working tree.")
    return "\n".join(lines)


def _x(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.1f}x"


def publish(res: dict[str, Any]) -> None:
    """results/startup.{json,md} and the docs/performance.md block."""
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    write_json(results / "startup.json", res, indent=2)
    md = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, CPython "
        f"{platform.python_version()} (`.venv/bin/python benchmarks/bench_startup.py "
        f"--publish`).\n\n" + table(res)
    )
    write_atomic(results / "startup.md", md + "\n")
    replace_block(ROOT / "docs" / "performance.md", "bench:startup", md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command")
    parser.add_argument("--publish", action="store_true", help="write results and docs block")
    parser.add_argument(
        "--src", type=Path, default=ROOT / "src", help="the source tree to measure (default: ours)"
    )
    parser.add_argument("--baseline", type=Path, help="another source tree, timed in the same run")
    parser.add_argument(
        "--baseline-label", help="what the baseline is, for the table (default: its path)"
    )
    args = parser.parse_args()
    res = measure(args.repeat, args.src.resolve(), args.baseline and args.baseline.resolve())
    res["baseline_label"] = args.baseline_label
    print(json.dumps(res, indent=2) if args.json else table(res))
    if args.publish:
        publish(res)


if __name__ == "__main__":
    main()
