"""Benchmark of the stochastic protocol's simulator (issue 3).

Measures on this machine, in one run:
  * debate-rounds simulated per second with the paper's constants at K = 1 (every round's
    R ~ 10^7 samples per prover aggregated into one binomial draw), for honest A and B;
  * the speed-up of binomial aggregation over drawing every sample, side by side on a
    small case (R = 2000 samples per round) where both are feasible.

Writes benchmarks/results/stochastic.{json,md} and the ``bench:stochastic`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_stochastic.py
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np

from proofgames.protocols import play_stochastic_batch
from proofgames.reporting import replace_block, write_atomic, write_json
from proofgames.stochastic import StochasticBuilder, StochasticParams, paper_params
from proofgames.strategies import make_strategy

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"


def chain(steps: int, p: float = 0.8):
    """One oracle query, then a long deterministic computation copying it (K = 1)."""
    b = StochasticBuilder([p])
    prev = b.query(0)
    for _ in range(steps - 1):
        prev = b.gate(lambda v: v[:, 0].copy(), relevant=[prev])
    return b.build(f"chain:T={steps}", lipschitz=1.0, p_accept=p)


def queries(steps: int, p: float = 0.8):
    """T oracle queries of the same question; the output is the last answer (K = 1)."""
    b = StochasticBuilder([p])
    for _ in range(steps):
        b.query(0)
    return b.build(f"repeat:T={steps}", lipschitz=1.0, p_accept=p)


def rounds_per_second(machine, params, debates: int, sampling: str = "binomial") -> dict:
    a, b = make_strategy("stochastic", "A", "honest"), make_strategy("stochastic", "B", "honest")
    best = None
    for seed in range(3):
        res = play_stochastic_batch(
            machine, params, 1, a, b, debates=debates, seed=seed, sampling=sampling
        )
        rounds = int(np.where(res.abort_rounds >= 0, res.abort_rounds + 1, machine.length).sum())
        rate = rounds / res.seconds
        if best is None or rate > best["rounds_per_second"]:
            best = {
                "machine": machine.name,
                "debates": debates,
                "rounds": rounds,
                "seconds": res.seconds,
                "rounds_per_second": rate,
                "acceptance": res.acceptance,
                "samples_A_per_round": params.a_samples,
                "sampling": sampling,
            }
    assert best is not None
    return best


def main() -> None:
    rows = []
    for m in (chain(100), queries(100)):
        rows.append(rounds_per_second(m, paper_params(1.0, m.length), 20_000))
    small = StochasticParams("custom", 1.0, 20, 2000, 2000, 4000, 0.05, 0.025, "shared")
    m = queries(20)
    agg = rounds_per_second(m, small, 2000, "binomial")
    per = rounds_per_second(m, small, 2000, "per-sample")
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}, 2 cores",
        "paper_constants": rows,
        "aggregation": {
            "binomial": agg,
            "per_sample": per,
            "speedup": agg["rounds_per_second"] / per["rounds_per_second"],
        },
    }
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "stochastic.json", result, indent=2)
    lines = [
        f"Measured {result['date']} on {result['machine']} "
        "(`.venv/bin/python benchmarks/bench_stochastic.py`).",
        "",
        "| machine (T = steps) | debates | samples per prover per round | debate-rounds/s |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['machine']} | {r['debates']:,} | {r['samples_A_per_round']:,} "
            f"| {r['rounds_per_second']:,.0f} |"
        )
    lines += [
        "",
        f"Binomial aggregation vs drawing every sample (R = 2,000, {m.name}): "
        f"{agg['rounds_per_second']:,.0f} vs {per['rounds_per_second']:,.0f} "
        f"debate-rounds/s, a **{result['aggregation']['speedup']:,.0f}x** speed-up "
        "(and the per-sample cost grows linearly with R, while a binomial draw does not).",
    ]
    md = "\n".join(lines) + "\n"
    write_atomic(OUT / "stochastic.md", md)
    replace_block(ROOT / "docs" / "performance.md", "bench:stochastic", md)
    print(md)


if __name__ == "__main__":
    main()
