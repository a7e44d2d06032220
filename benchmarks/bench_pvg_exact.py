"""Benchmark: a FindThePlus verifier trained against the exact prover (issue 4).

Verifier-first play (the paper's Stackelberg formulation, verifier leading) where the
follower is not a network but the prover's *exact* best response: for every training
image the message that maximizes the verifier's logit, found by exhaustive search
(:mod:`proofgames.pvg.message_search`). The prover network is not trained
(``prover_steps=0``). Each seed trains with batch 256, Adam (verifier lr 3e-3 by default;
the paper's 3e-4 did not leave the constant verifier in 4,200 steps in a trial), label
smoothing 0.05; every 250 game steps the exhaustive attack checks the verifier on 1,000
fresh images and the best checkpoint is kept. The kept verifier is then attacked on 2,000
held-out images by the exhaustive search (its exact worst case: a certificate), by the
paper's L-BFGS message attack and by a freshly trained prover (500 Adam steps).

Writes benchmarks/results/pvg_exact.{json,md} and the ``bench:pvg-exact`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_pvg_exact.py [--seeds 4] [--unbounded]
"""

from __future__ import annotations

import argparse
import platform
from typing import Any

import torch
from _publish import measured_with_torch, publish

from proofgames.pvg import FindThePlus, StressConfig, TrainConfig, stress_test, train
from proofgames.pvg.find_the_plus.diagnostics import plus_alignment
from proofgames.sweeps.executors import make_executor, map_items


def run_seed(job: tuple[int, argparse.Namespace]) -> dict[str, Any]:
    seed, args = job
    torch.set_num_threads(1)
    task = FindThePlus(bounded_shifts=not args.unbounded)
    config = TrainConfig(
        formulation="verifier-first",
        best_response="closed-form",
        prover_steps=0,
        verifier_steps=1,
        steps=args.steps,
        batch_size=256,
        verifier_lr=args.verifier_lr,
        eval_size=1000,
        log_every=50,
        stress_every=250,
        stress_attacks=("exhaustive",),
        keep_best="exhaustive",
        stress=StressConfig(eval_size=1000, seed=seed),
        seed=seed,
        device="cpu",
        progress=False,
    )
    result = train(task, config)
    held_out = StressConfig(batch_size=256, seed=10_000 + seed)
    attacks = stress_test(
        task, result.verifier, None, ("exhaustive", "messages", "prover"), held_out
    )
    curve = [
        (int(m["step"]), round(m["exhaustive_accuracy"], 4))
        for m in result.metrics
        if "exhaustive_accuracy" in m
    ]
    return {
        "seed": seed,
        "steps": result.steps,
        "train_seconds": round(result.train_seconds, 1),
        "kept_step": result.best_step,
        "first_perfect_step": result.sound_at,
        "exhaustive_accuracy_curve": curve,
        "plus_alignment": [round(v, 3) for v in plus_alignment(result.verifier)],
        "attacks": {name: r.to_dict(top=1) for name, r in attacks.items()},
    }


def _cell(attack: dict[str, Any]) -> str:
    return (
        f"{attack['precision']:.3f} / {attack['recall']:.3f} / {attack['specificity']:.3f} "
        f"(FP {attack['fp']}, FN {attack['fn']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--verifier-lr", type=float, default=3e-3)
    parser.add_argument("--unbounded", action="store_true", help="the paper's free shifts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executor", default="local", help="local or dask")
    parser.add_argument("--scheduler", default=None, help="an existing Dask scheduler")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in each worker (the header reports it)
    jobs = [(f"seed-{seed}", (seed, args)) for seed in range(args.seeds)]
    with make_executor(args.executor, args.workers, args.scheduler) as pool:
        runs = list(map_items(run_seed, jobs, pool).values())
    shifts = "free shifts (the paper's)" if args.unbounded else "bounded shifts (tanh)"
    report = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "settings": {**vars(args), "batch_size": 256, "shifts": shifts},
        "runs": runs,
    }
    lines = [
        "| seed | kept step | first perfect at step | train s | exhaustive P / R / spec "
        "| L-BFGS messages P / R / spec | optimized prover P / R / spec | plus shape per head |",
        "|---:|---:|---:|---:|---|---|---|---|",
        *(
            f"| {r['seed']} | {r['kept_step']} | {r['first_perfect_step'] or '—'} | "
            f"{r['train_seconds']:.0f} | {_cell(r['attacks']['exhaustive'])} | "
            f"{_cell(r['attacks']['messages'])} | {_cell(r['attacks']['prover'])} | "
            f"{', '.join(f'{v:.2f}' for v in r['plus_alignment'])} |"
            for r in runs
        ),
    ]
    sound = sum(r["attacks"]["exhaustive"]["fp"] == 0 for r in runs)
    complete = sum(r["attacks"]["exhaustive"]["fn"] == 0 for r in runs)
    header = measured_with_torch("bench_pvg_exact.py") + (
        f" FindThePlus, verifier-first play against the exact prover, {shifts}, batch 256, "
        f"verifier lr {args.verifier_lr:g}, {args.steps} game steps, {args.workers} worker "
        f"process(es) of one thread. Held-out attacks on 2,000 images; P / R / spec = "
        f"precision / recall / specificity. Certified sound on the held-out batch "
        f"(exhaustive FP = 0): {sound}/{len(runs)} seeds; complete (FN = 0): "
        f"{complete}/{len(runs)}."
    )
    name = "pvg_exact_unbounded" if args.unbounded else "pvg_exact"
    block = "bench:pvg-exact-unbounded" if args.unbounded else "bench:pvg-exact"
    publish(name, block, report, header + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
