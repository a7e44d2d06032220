"""bf16 autocast against float32 in FindThePlus training: speed, and the side-by-side check.

Two parts, both on one CPU thread:

* ``speed``: the CPU time of game steps at the long profile's settings (batch 256,
  alternating updates, FindThePlus), float32 and bf16 autocast alternated ``--repeats``
  times in one run; the ratio of the fastest of each. Load average recorded.
* ``check --state RUN --steps N --twin RUN --other RUN``: continue a saved run for ``N``
  game steps in bf16 (a copy: the saved run is not touched) and compare its logged rows
  with the same run's float32 rows over the same steps (its ``--twin``: the run folder
  whose ``metrics.jsonl`` holds them, resumed exactly from the same state) and with another
  seed's float32 rows (``--other``) over those steps: the seed-to-seed spread. Per metric,
  the mean absolute difference over the shared logged steps.

Run: ``python benchmarks/bench_pvg_bf16.py speed`` or
``python benchmarks/bench_pvg_bf16.py check --state SNAPSHOT --steps 2000 --twin RUN
--other RUN --out DIR`` (``--json`` for the raw figures).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from proofgames.cli.pvg._support import resumed_run
from proofgames.pvg import TrainConfig, make_task, train
from proofgames.pvg.checkpoint import STATE_FILE, load_training_state

METRICS = ("verifier_accuracy", "messages_accuracy", "messages_precision", "exhaustive_specificity")
"""The learning figures compared: the training prover's and the stress checks'."""


def speed(repeats: int, steps: int) -> dict[str, Any]:
    """CPU seconds a game step, float32 and bf16 alternated; the ratio of the fastest."""
    torch.set_num_threads(1)
    task = make_task("find-the-plus")
    base = TrainConfig(steps=steps, batch_size=256, eval_size=64, log_every=steps,
                       update="alternating", pretrain_steps=0, progress=False, seed=11)  # fmt: skip
    times: dict[str, list[float]] = {"fp32": [], "bf16": []}
    load = os.getloadavg()[0]
    for _ in range(repeats):
        for precision in times:
            start = time.process_time()
            train(task, replace(base, precision=precision))
            times[precision].append((time.process_time() - start) / steps)
    return {
        "seconds_a_step": times,
        "ratio_bf16_to_fp32": min(times["bf16"]) / min(times["fp32"]),
        "load_average_1min": [load, os.getloadavg()[0]],
        "settings": "find-the-plus, batch 256, alternating, one thread, CPU time",
    }


def _rows(folder: Path, first: int, last: int) -> dict[int, dict[str, Any]]:
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r for r in rows if first < r["step"] <= last}


def _mean_gap(a: dict[int, dict[str, Any]], b: dict[int, dict[str, Any]], key: str) -> Any:
    shared = [s for s in a if s in b and a[s].get(key) is not None and b[s].get(key) is not None]
    if not shared:
        return None
    return {
        "mean_abs_difference": sum(abs(a[s][key] - b[s][key]) for s in shared) / len(shared),
        "steps": len(shared),
    }


def check(state: Path, steps: int, twin: Path, other: Path, out: Path) -> dict[str, Any]:
    """Continue ``state`` in bf16 for ``steps`` and compare with its twin and another seed."""
    torch.set_num_threads(1)
    start = load_training_state(state).step
    out.mkdir(parents=True, exist_ok=False)
    for name in (STATE_FILE, "config.json", "metrics.jsonl"):
        if (state / name).is_file():
            shutil.copy(state / name, out / name)
    task, config = resumed_run(out, "find-the-plus", start + steps, [])
    config = replace(config, precision="bf16", out_dir=str(out), progress=False, device="cpu")
    begun = time.perf_counter()
    train(task, config, resume=out)
    seconds = time.perf_counter() - begun
    bf16 = _rows(out, start, start + steps)
    fp32, seed = _rows(twin, start, start + steps), _rows(other, start, start + steps)
    return {
        "from_step": start,
        "steps": steps,
        "wall_seconds_bf16": seconds,
        "load_average_1min": os.getloadavg()[0],
        "bf16_vs_its_fp32_twin": {k: _mean_gap(bf16, fp32, k) for k in METRICS},
        "fp32_seed_vs_other_seed": {k: _mean_gap(fp32, seed, k) for k in METRICS},
        "last_rows": {
            "bf16": {k: bf16[max(bf16)].get(k) for k in METRICS} if bf16 else None,
            "fp32": {k: fp32[max(fp32)].get(k) for k in METRICS} if fp32 else None,
            "other": {k: seed[max(seed)].get(k) for k in METRICS} if seed else None,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--repeats", type=int, default=3)
    s.add_argument("--steps", type=int, default=8)
    c = sub.add_parser("check")
    for name in ("--state", "--twin", "--other", "--out"):
        c.add_argument(name, type=Path, required=True)
    c.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    if args.part == "speed":
        result = speed(args.repeats, args.steps)
    else:
        result = check(args.state, args.steps, args.twin, args.other, args.out)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
