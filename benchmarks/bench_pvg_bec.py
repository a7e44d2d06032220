"""Benchmark: seconds for BEC to reach a complete and sound protocol (issue 4).

With the paper's settings (Adam lr 3e-4, batch 2000, 5 verifier steps per prover step,
label smoothing 0.05, simultaneous play) each seed trains until stress tests -- run every
10 game steps with the paper's attack settings -- find precision = recall = 1 against both
the optimized prover and the L-BFGS-optimized messages.  Reported per seed: the game step
and the training seconds (stress-test time excluded) at that point.  Also measured:
prover-first play (closed-form verifier best response) and its fraction of erasure tokens.

Writes benchmarks/results/pvg_bec.{json,md} and the ``bench:pvg`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_pvg_bec.py [--seeds 8]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch
from _publish import measured_with_torch, publish

from proofgames.pvg import BinaryErasureChannel, TrainConfig, train


def time_to_sound(seed: int) -> dict:
    config = TrainConfig(
        steps=1000, seed=seed, log_every=10, stress_every=10, stop_when_sound=True, progress=False
    )
    result = train(BinaryErasureChannel(), config)
    return {
        "seed": seed,
        "sound_at_step": result.sound_at,
        "train_seconds_to_sound": round(result.sound_seconds or float("nan"), 2),
        "wall_seconds_with_stress_tests": round(result.seconds, 1),
    }


def prover_first(seed: int, steps: int) -> dict:
    config = TrainConfig(formulation="prover-first", steps=steps, seed=seed, progress=False)
    tick = time.perf_counter()
    final = train(BinaryErasureChannel(), config).metrics[-1]
    return {
        "seed": seed,
        "steps": steps,
        "seconds": round(time.perf_counter() - tick, 2),
        "erasure_fraction_mode": final["erasure_fraction"],
        "erasure_fraction_sampled": round(final["sampled_erasure_fraction"], 4),
        "information_bits_sampled": round(final["sampled_information_bits"], 4),
        "verifier_accuracy": final["verifier_accuracy"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--prover-first-steps", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)  # tiny networks: 1 thread is as fast, and robust
    runs = [time_to_sound(seed) for seed in range(args.seeds)]
    collapse = [prover_first(seed, args.prover_first_steps) for seed in range(min(4, args.seeds))]
    seconds = [r["train_seconds_to_sound"] for r in runs if r["sound_at_step"] is not None]
    report = {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
        },
        "simultaneous": runs,
        "sound_runs": f"{len(seconds)}/{len(runs)}",
        "median_seconds_to_sound": round(statistics.median(seconds), 2) if seconds else None,
        "max_seconds_to_sound": max(seconds) if seconds else None,
        "prover_first": collapse,
    }
    lines = [
        "| seed | sound at step | training seconds to sound |",
        "|---:|---:|---:|",
        *(f"| {r['seed']} | {r['sound_at_step']} | {r['train_seconds_to_sound']} |" for r in runs),
        "",
        f"Median {report['median_seconds_to_sound']} s, max {report['max_seconds_to_sound']} s "
        f"({report['sound_runs']} seeds sound within 1000 steps; torch "
        f"{torch.__version__}, {torch.get_num_threads()} threads).",
        "",
        "| prover-first seed | steps | erasure fraction (mode / sampled) | I(x; token) bits |",
        "|---:|---:|---:|---:|",
        *(
            f"| {r['seed']} | {r['steps']} | {r['erasure_fraction_mode']} / "
            f"{r['erasure_fraction_sampled']} | {r['information_bits_sampled']} |"
            for r in collapse
        ),
    ]
    header = measured_with_torch("bench_pvg_bec.py") + (
        " Seconds of training (stress tests excluded) until both attacks find precision = "
        "recall = 1, paper settings:"
    )
    publish("pvg_bec", "bench:pvg", report, header + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
