"""Benchmark: B FindThePlus seeds as one batched model against B separate games (issue 40).

One process, one thread (run it under ``taskset -c 0``): for each B, the same B seeds'
games play the same game steps three ways, in turn and repeated:

* ``separate``: each seed's own :class:`~proofgames.pvg._game.Game`, one after another
  (what B single-seed runs do, without their start-up);
* ``batched``: :class:`~proofgames.pvg.batched.BatchedPlay`, every update one ``vmap``
  call over the stacked players (``train_seeds``' default);
* ``seed by seed``: the same stacked players and Adam, each seed's forward and backward
  pass on its own (``vectorize=False``): the cost of the batching machinery alone.

A game step is the long runs' (alternating updates, 1 verifier and ``--prover-steps``
prover updates), on batches from a data bank (so data generation, the same for all
three, is out of the figure); no evaluation, no saving. Each variant's CPU seconds
(``time.process_time``) per game step are recorded with the load average before and
after; ratios are of variants measured in this one run, and labelled one-core CPU: on a
GPU the batched variant's kernels are the point, and its ratio there is not this one.

Writes benchmarks/results/pvg_batched.{json,md}.
Run:  taskset -c 0 .venv/bin/python benchmarks/bench_pvg_batched.py
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from proofgames.pvg import TrainConfig, make_task, task_defaults
from proofgames.pvg._game import Game
from proofgames.pvg.batched import BatchedPlay

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"


def _games(config: TrainConfig, seeds: int) -> list[Game]:
    task, games = make_task("find-the-plus"), []
    for seed in range(seeds):
        torch.manual_seed(seed)
        one = TrainConfig(**{**config.__dict__, "seed": seed})
        games.append(Game(task, one, torch.device("cpu"), torch.Generator().manual_seed(seed)))
    return games


def _time(variant: str, config: TrainConfig, seeds: int, steps: int, prover_steps: int) -> float:
    """CPU seconds per game step of ``variant`` (after one untimed warm-up step)."""
    games = _games(config, seeds)
    if variant == "separate":

        def step() -> None:
            for game in games:
                game.play(1, prover_steps)
    else:
        play = BatchedPlay(games, config, vectorize=variant == "batched")

        def step() -> None:
            play.play([prover_steps] * seeds, 1)

    step()
    tick = time.process_time()
    for _ in range(steps):
        step()
    return (time.process_time() - tick) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="2,4,8", help="the values of B, comma-separated")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10, help="timed game steps per variant")
    parser.add_argument("--prover-steps", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    opts = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="There is a performance drop")
    settings = {**task_defaults("find-the-plus"), "batch_size": opts.batch_size}
    config = TrainConfig(**settings, data_bank=max(4096, opts.batch_size), progress=False)
    rows: list[dict[str, Any]] = []
    for seeds in [int(b) for b in opts.seeds.split(",")]:
        for repeat in range(opts.repeats):
            for variant in ("separate", "batched", "seed by seed"):
                load = os.getloadavg()
                seconds = _time(variant, config, seeds, opts.steps, opts.prover_steps)
                rows.append({"seeds": seeds, "repeat": repeat, "variant": variant,
                             "cpu_seconds_per_step": round(seconds, 5),
                             "load_before": [round(v, 2) for v in load],
                             "load_after": [round(v, 2) for v in os.getloadavg()]})  # fmt: skip
                print(rows[-1], flush=True)
    _publish(opts, rows)


def _publish(opts: Any, rows: list[dict[str, Any]]) -> None:
    lines = [
        "# FindThePlus: B seeds batched against B separate games, one CPU core (issue 40)\n",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} UTC, one-core CPU (`taskset -c 0`, one "
        f"torch thread, torch {torch.__version__}), batch {opts.batch_size}, alternating "
        f"updates with 1 verifier and {opts.prover_steps} prover update(s) a game step, "
        f"batches from a data bank, {opts.steps} timed game steps per variant after one "
        "untimed; CPU seconds per game step (all B seeds). Ratios are to `separate` in the "
        "same repeat. One-core CPU figures: they say nothing of a GPU.\n",
        "| B | repeat | separate s/step | batched s/step (ratio) | seed by seed s/step "
        "(ratio) | load (1 min) before, after |",
        "|---|---|---|---|---|---|",
    ]
    for seeds in sorted({r["seeds"] for r in rows}):
        for repeat in range(opts.repeats):
            got = {r["variant"]: r for r in rows if (r["seeds"], r["repeat"]) == (seeds, repeat)}
            base = got["separate"]["cpu_seconds_per_step"]
            cells = [
                f"{got[v]['cpu_seconds_per_step']:.4f} "
                f"({got[v]['cpu_seconds_per_step'] / base:.2f}x)"
                for v in ("batched", "seed by seed")
            ]
            loads = [got[v]["load_before"][0] for v in got] + [got["seed by seed"]["load_after"][0]]
            lines.append(
                f"| {seeds} | {repeat} | {base:.4f} | {cells[0]} | {cells[1]} | "
                f"{min(loads):.2f}-{max(loads):.2f} |"
            )
    OUT.mkdir(parents=True, exist_ok=True)
    options = {k: v for k, v in vars(opts).items()}
    (OUT / "pvg_batched.json").write_text(
        json.dumps({"options": options, "rows": rows}, indent=2) + "\n"
    )
    (OUT / "pvg_batched.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
