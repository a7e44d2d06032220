"""Benchmark: can the FindThePlus prover say *where* the plus is? (issue 4).

An honest FindThePlus prover must point the verifier's glimpses at the plus, and the
verifier's shift is a linear function of the message. So the question is how well a
linear read-out of the prover's message can learn the plus's centre. This benchmark
trains that read-out directly (supervised, mean-squared error to the centre's row and
column; Adam lr 3e-4, batch 256 as in the cpu reproduction profile) for each pooling
choice of :class:`~proofgames.pvg.find_the_plus.PlusProver`:

* ``pool=0`` -- a global mean pool (the last InstanceNorm dropped, since one right
  before a global pool makes every message the same);
* ``pool=2`` -- InstanceNorm after every convolution, then a 2x2 average pool.

Reported on 1,000 held-out images, every ``--every`` steps: the mean absolute error of
the centre in pixels, and the share of images whose centre is within 0.3 pixels on both
axes (about what a 5-cell plus template tolerates under bilinear sampling). This is an
upper bound on what the game can teach the prover: in the game the same signal arrives
only through the verifier's gradient.

Writes benchmarks/results/pvg_locate.{json,md} and the ``bench:pvg-locate`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_pvg_locate.py [--steps 1500]
"""

from __future__ import annotations

import argparse
import platform
import time

import torch
import torch.nn.functional as F
from _publish import measured_with_torch, publish
from torch import nn

from proofgames.pvg.tasks.find_the_plus import FindThePlus, plus_centres


def locate(pool: int, steps: int, every: int, seed: int) -> dict:
    torch.manual_seed(seed)
    task = FindThePlus(pool=pool)
    prover = task.make_prover()
    readout = nn.Linear(task.message_dim, 2)
    params = [*prover.backbone.parameters(), *prover.to_message.parameters()]
    optimizer = torch.optim.Adam([*params, *readout.parameters()], lr=3e-4)
    gen = torch.Generator().manual_seed(seed)
    held_out, _ = task.sample(1000, torch.Generator().manual_seed(10_000 + seed))
    truth = plus_centres(held_out)
    curve = []
    tick = time.perf_counter()
    for step in range(steps + 1):
        if step % every == 0:
            with torch.no_grad():
                error = (readout(prover(held_out).message) - truth).abs()
            curve.append(
                {
                    "step": step,
                    "mae_pixels": round(float(error.mean()), 3),
                    "within_0.3": round(float((error.max(dim=1).values < 0.3).float().mean()), 3),
                    "seconds": round(time.perf_counter() - tick, 1),
                }
            )
        if step == steps:
            break
        x, _ = task.sample(256, gen)
        loss = F.mse_loss(readout(prover(x).message), plus_centres(x))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"pool": pool, "seed": seed, "curve": curve}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runs = [locate(pool, args.steps, args.every, args.seed) for pool in (0, 2)]
    report = {
        "machine": {"platform": platform.platform(), "torch": torch.__version__},
        "threads": torch.get_num_threads(),
        "runs": runs,
    }
    steps = [row["step"] for row in runs[0]["curve"]]
    columns = [f"pool={r['pool']}: error px / within 0.3 px" for r in runs]
    lines = [
        "| step | " + " | ".join(columns) + " |",
        "|---:|" + "---:|" * len(runs),
    ]
    for i, step in enumerate(steps):
        cells = [f"{r['curve'][i]['mae_pixels']} / {r['curve'][i]['within_0.3']}" for r in runs]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    header = measured_with_torch("bench_pvg_locate.py") + (
        " A linear read-out of the FindThePlus prover's message trained to give the plus's "
        "centre (supervised, batch 256); held-out mean error in pixels / share within "
        "0.3 px on both axes:"
    )
    publish("pvg_locate", "bench:pvg-locate", report, header + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
