"""Benchmark of the executor seam (issue 19): Dask distributed against the local pool.

Measures on this machine, in one run:
  * throughput of a real sweep (Monte Carlo estimate chunks, ``long-computation:t=300``,
    ``--chunk`` debates a chunk, 100,000 by default: about 0.7 s each on an idle core) on a
    Dask ``LocalCluster`` of 1 and of 2 worker processes (one thread each), and on the
    local process pool of 1 and 2 workers: chunks per second and the speed-up of 2
    workers over 1;
  * the overhead per task: many empty tasks through each executor (in this process, the
    local pool and a LocalCluster, of 1 and 2 workers), wall time per task;
  * that every run gave the same numbers (the estimates are compared).

Writes benchmarks/results/executors.{json,md} and the ``bench:executors`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_executors.py [--chunks 16] [--chunk 100000]
      [--tasks 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from proofgames.experiments.montecarlo import Cell, estimate_cells
from proofgames.reporting import replace_block, write_atomic, write_json
from proofgames.sweeps.executors import InlineExecutor, make_executor, map_items

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
CELL = Cell("long-computation:t=300,votes=3", "lean", 1, "honest", "honest")


def nothing(x: int) -> int:
    return x


def warm(_: int = 0) -> int:
    """One small chunk in this worker: imports and compiled code ready before timing."""
    time.sleep(0.5)  # every worker of a pool gets one
    estimate_cells([CELL], debates=200, chunk=200)
    return os.getpid()


@contextmanager
def executor(kind: str, workers: int) -> Iterator[Executor]:
    """A local process pool (also of 1 worker) or a Dask LocalCluster, warmed up."""
    if kind == "local":
        with ProcessPoolExecutor(workers) as pool:
            assert len(set(pool.map(warm, range(workers)))) == workers
            yield pool
        return
    with make_executor("dask", workers) as pool:
        getattr(pool, "_client").run(warm)
        yield pool


def sweep(kind: str, workers: int, chunks: int, chunk: int, repeats: int) -> dict[str, Any]:
    """The fastest of ``repeats`` sweeps of ``chunks`` work items (start-up left out)."""
    walls = []
    with executor(kind, workers) as pool:
        for _ in range(repeats):
            start = time.perf_counter()
            (est,) = estimate_cells([CELL], debates=chunk * chunks, chunk=chunk, executor=pool)
            walls.append(time.perf_counter() - start)
    wall = min(walls)
    return {
        "executor": kind,
        "workers": workers,
        "chunks": chunks,
        "seconds": round(wall, 3),
        "chunks_per_second": round(chunks / wall, 2),
        "accepted": est.accepted,
        "queries": est.queries,
    }


def overhead(kind: str, workers: int, tasks: int) -> dict[str, Any]:
    """Wall time per empty task (the executor's start-up left out)."""
    with executor(kind, workers) if kind != "inline" else nullcontext(InlineExecutor()) as pool:
        map_items(nothing, [(f"w{i}", i) for i in range(4 * workers)], pool)  # warm up
        start = time.perf_counter()
        map_items(nothing, [(f"t{i}", i) for i in range(tasks)], pool)
        wall = time.perf_counter() - start
    return {"executor": kind, "workers": workers, "tasks": tasks,
            "ms_per_task": round(1000 * wall / tasks, 4)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--chunk", type=int, default=100_000, help="debates per chunk")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="sweeps per executor (best)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs = [sweep(kind, w, args.chunks, args.chunk, args.repeats)
            for kind in ("local", "dask") for w in (1, 2)]  # fmt: skip
    same = len({json.dumps([r["accepted"], r["queries"]]) for r in runs}) == 1
    costs = [overhead(kind, w, args.tasks) for kind, w in
             (("inline", 1), ("local", 1), ("local", 2), ("dask", 1), ("dask", 2))]  # fmt: skip
    speed = {
        kind: round(
            next(r for r in runs if r["executor"] == kind and r["workers"] == 2)[
                "chunks_per_second"
            ]
            / next(r for r in runs if r["executor"] == kind and r["workers"] == 1)[
                "chunks_per_second"
            ],
            2,
        )
        for kind in ("local", "dask")
    }
    pool_ms = costs[2]["ms_per_task"]
    dask_ms = costs[4]["ms_per_task"]
    report = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": load},
        "settings": {**vars(args), "cell": str(CELL.machine)},
        "sweeps": runs,
        "speedup_2_over_1": speed,
        "overhead": costs,
        "dask_over_pool_overhead": round(dask_ms / pool_ms, 1),
        "same_numbers": same,
    }
    rows = [
        "| executor | workers | chunks/s | sweep s |",
        "|---|---:|---:|---:|",
        *(
            f"| {r['executor']} | {r['workers']} | {r['chunks_per_second']:.2f} | "
            f"{r['seconds']:.2f} |"
            for r in runs
        ),
        "",
        "| executor (empty tasks) | workers | ms per task |",
        "|---|---:|---:|",
        *(f"| {c['executor']} | {c['workers']} | {c['ms_per_task']:.3f} |" for c in costs),
    ]
    md = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} "
        f"CPU(s), load average {load:.1f} when it started "
        f"(`.venv/bin/python benchmarks/bench_executors.py`). A sweep of "
        f"{args.chunks} estimate chunks ({args.chunk:,} debates of {CELL.machine} each, "
        f"{runs[0]['seconds'] / args.chunks:.2f} s a chunk on one local worker), the "
        f"fastest of {args.repeats}; the executors' start-up is left out. 2 workers over 1: "
        f"{speed['dask']}x on Dask "
        f"(LocalCluster, processes of one thread), {speed['local']}x on the local pool. "
        f"Overhead per task ({args.tasks:,} empty tasks, 2 workers): Dask {dask_ms:.3f} ms, "
        f"local pool {pool_ms:.3f} ms ({report['dask_over_pool_overhead']}x). Same numbers "
        f"from every executor: {'yes' if same else 'NO'}.\n\n" + "\n".join(rows) + "\n"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "executors.json", report, indent=2)
    write_atomic(OUT / "executors.md", md)
    replace_block(ROOT / "docs" / "performance.md", "bench:executors", md)
    print(md)


if __name__ == "__main__":
    main()
