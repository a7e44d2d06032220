"""How far a vectorized batched run drifts from separate runs of the same seeds (issue 40).

Trains FindThePlus seeds 0, 1 and 2 (10x10 images, batch 32, evaluation on 64 images
logged every 5 steps, 3 pretraining steps, adaptive prover steps up to 3, alternating
updates) separately with :func:`~proofgames.pvg.train.train`, then together with
:func:`~proofgames.pvg.batched.train_seeds`, vectorized and seed by seed, and records
for each game-step count the largest difference of any logged figure and of any weight,
and whether the prover step schedules and the integer counts agree. Seed by seed the
differences are 0 (the test suite checks it bit for bit); vectorized, they are the
batched kernels' rounding, grown by training. CPU, one thread; measured, not a bound.

Writes benchmarks/results/pvg_batched_divergence.{json,md}.
Run:  taskset -c 0 .venv/bin/python benchmarks/pvg_batched_divergence.py
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from proofgames.pvg import TrainConfig, make_task, train
from proofgames.pvg.batched import train_seeds
from proofgames.pvg.train import TrainResult

OUT = Path(__file__).resolve().parent / "results"
SEEDS = [0, 1, 2]
CONFIG = TrainConfig(
    formulation="simultaneous", update="alternating", batch_size=32, eval_size=64,
    log_every=5, pretrain_steps=3, verifier_steps=1, prover_steps=1,
    adaptive_threshold=0.5, adaptive_window=2, max_prover_steps=3, progress=False,
)  # fmt: skip


def _gaps(separate: list[TrainResult], batched: list[TrainResult]) -> dict[str, Any]:
    figures = weights = 0.0
    counts_equal = schedule_equal = True
    for alone, together in zip(separate, batched, strict=True):
        for a, b in zip(alone.metrics, together.metrics, strict=True):
            for key, value in a.items():
                if key == "seconds":
                    continue
                if isinstance(value, float):
                    figures = max(figures, abs(value - b[key]))
                elif value != b[key] and key != "prover_steps":
                    counts_equal = False
        for one, other in ((alone.prover, together.prover), (alone.verifier, together.verifier)):
            for x, y in zip(one.state_dict().values(), other.state_dict().values(), strict=True):
                weights = max(weights, float((x - y).abs().max()))
        schedule_equal &= [r["prover_steps"] for r in alone.metrics] == [
            r["prover_steps"] for r in together.metrics
        ]
    return {"figures": figures, "weights": weights, "counts_equal": counts_equal,
            "schedules_equal": schedule_equal}  # fmt: skip


def main() -> None:
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="There is a performance drop")
    task, rows = make_task("find-the-plus"), []
    for steps in (1, 5, 10, 20, 30):
        config = replace(CONFIG, steps=steps)
        separate = [train(task, replace(config, seed=seed)) for seed in SEEDS]
        for vectorize in (True, False):
            batched = train_seeds(task, config, SEEDS, vectorize=vectorize)
            rows.append({"steps": steps, "vectorized": vectorize, **_gaps(separate, batched)})
            print(rows[-1], flush=True)
    lines = [
        "# Vectorized batched seeds against separate runs: the drift (issue 40)\n",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} UTC, CPU, one torch thread, torch "
        f"{torch.__version__}: FindThePlus seeds {SEEDS}, batch 32, evaluation on 64 images "
        "every 5 steps, 3 pretraining steps, adaptive prover steps (threshold 0.5, window "
        "2, up to 3). Largest absolute difference from the separate runs of any logged "
        "figure (clock excluded) and of any weight; measured, not a bound.\n",
        "| game steps | vectorized | figures | weights | integer counts equal | "
        "prover step schedules equal |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['steps']} | {'yes' if r['vectorized'] else 'no (seed by seed)'} | "
            f"{r['figures']:.2g} | {r['weights']:.2g} | {r['counts_equal']} | "
            f"{r['schedules_equal']} |"
        )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pvg_batched_divergence.json").write_text(json.dumps(rows, indent=2) + "\n")
    (OUT / "pvg_batched_divergence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
