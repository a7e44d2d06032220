"""Benchmark: the four PVG formulations on FindTheNeedle, checked by exact search (issue 4).

FindTheNeedle (:mod:`proofgames.pvg.needle`, not in the paper) is the third task, written
in one file against the task interface: is there a 1 in a row of 16 bits?  The prover
points at one place; the verifier reads that bit.  Its message space is small enough to
search exactly, so each verifier is certified against its worst-case prover.

For every formulation and seed: BEC's paper settings (Adam lr 3e-4, 5 verifier steps per
game step, label smoothing 0.05) at batch 256 for a fixed number of game steps, then the
frozen verifier is attacked on 2,000 held-out rows by exhaustive search (every pointer),
by L-BFGS on relaxed pointers and by a freshly trained prover.  Separately, simultaneous
play is trained until stress tests every 10 game steps (L-BFGS and exhaustive search on
1,000 rows) find precision = recall = 1: the game step and training seconds at that point.

Writes benchmarks/results/pvg_needle.{json,md} and the ``bench:pvg-needle`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_pvg_needle.py [--seeds 4] [--steps 300]
"""

from __future__ import annotations

import argparse
import platform
import statistics
from typing import Any

import torch
from _publish import measured_with_torch, publish

from proofgames.pvg import (
    FORMULATIONS,
    StressConfig,
    TrainConfig,
    make_task,
    stress_test,
    task_defaults,
    train,
)

ATTACKS = ("exhaustive", "messages", "prover")
BATCH = 256


def settings(seed: int, **overrides: Any) -> TrainConfig:
    return TrainConfig(
        **{**task_defaults("find-the-needle"), **overrides},
        batch_size=BATCH,
        eval_size=1000,
        seed=seed,
        progress=False,
    )


def held_out(formulation: str, seed: int, steps: int) -> dict[str, Any]:
    task = make_task("find-the-needle")
    result = train(task, settings(seed, formulation=formulation, steps=steps))
    attacks = stress_test(
        task,
        result.verifier,
        result.prover,
        ATTACKS,
        StressConfig(batch_size=BATCH, seed=10_000 + seed),
    )
    final = result.metrics[-1]
    return {
        "formulation": formulation,
        "seed": seed,
        "steps": result.steps,
        "train_seconds": round(result.train_seconds, 1),
        "on_needle": round(final["on_needle"], 3),
        "verifier_accuracy": final["verifier_accuracy"],
        "attacks": {name: r.to_dict(top=1) for name, r in attacks.items()},
    }


def time_to_sound(seed: int, max_steps: int) -> dict[str, Any]:
    config = settings(
        seed,
        steps=max_steps,
        stress_every=10,
        stress_attacks=("messages", "exhaustive"),
        stop_when_sound=True,
        stress=StressConfig(eval_size=1000, seed=seed),
    )
    result = train(make_task("find-the-needle"), config)
    return {
        "seed": seed,
        "sound_at_step": result.sound_at,
        "train_seconds_to_sound": None
        if result.sound_seconds is None
        else round(result.sound_seconds, 2),
    }


def _cell(attack: dict[str, Any]) -> str:
    return f"{attack['precision']:.3f} / {attack['recall']:.3f} / {attack['specificity']:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--max-steps", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)  # tiny networks: one thread is as fast, and robust
    runs = [held_out(f, seed, args.steps) for f in FORMULATIONS for seed in range(args.seeds)]
    sound = [time_to_sound(seed, args.max_steps) for seed in range(args.seeds)]
    seconds = [r["train_seconds_to_sound"] for r in sound if r["sound_at_step"] is not None]
    report = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "settings": {**vars(args), "batch_size": BATCH, **task_defaults("find-the-needle")},
        "formulations": runs,
        "simultaneous_to_sound": sound,
    }
    certified = {
        f: sum(
            r["attacks"]["exhaustive"]["fp"] == 0 and r["attacks"]["exhaustive"]["fn"] == 0
            for r in runs
            if r["formulation"] == f
        )
        for f in FORMULATIONS
    }
    lines = [
        "| formulation | seed | exhaustive P / R / spec | L-BFGS messages P / R / spec "
        "| optimized prover P / R / spec | prover on a needle | train s |",
        "|---|---:|---|---|---|---:|---:|",
        *(
            f"| {r['formulation']} | {r['seed']} | {_cell(r['attacks']['exhaustive'])} | "
            f"{_cell(r['attacks']['messages'])} | {_cell(r['attacks']['prover'])} | "
            f"{r['on_needle']:.3f} | {r['train_seconds']:.0f} |"
            for r in runs
        ),
        "",
        "Certified sound and complete (exhaustive FP = FN = 0 on 2,000 held-out rows): "
        + ", ".join(f"{f} {n}/{args.seeds}" for f, n in certified.items())
        + ".",
        "",
        "Simultaneous play until L-BFGS and exhaustive search both find precision = recall "
        "= 1 (checked every 10 game steps on 1,000 rows): "
        + ", ".join(
            f"seed {r['seed']} at step {r['sound_at_step']} ({r['train_seconds_to_sound']} s)"
            for r in sound
        )
        + (f"; median {statistics.median(seconds):.1f} s of training." if seconds else "."),
    ]
    header = measured_with_torch("bench_pvg_needle.py") + (
        f" FindTheNeedle (16 bits, 1 to 4 needles), BEC's paper settings at batch {BATCH}, "
        f"{args.steps} game steps per formulation; P / R / spec = precision / recall / "
        "specificity on 2,000 held-out rows:"
    )
    publish("pvg_needle", "bench:pvg-needle", report, header + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
