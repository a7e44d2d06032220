"""Benchmark of the stochastic protocol's simulator (issue 3).

Measures on this machine, in one run:
  * debate-rounds simulated per second with the paper's constants at K = 1 (every round's
    R ~ 10^7 samples per prover aggregated into one binomial draw), for honest A and B;
  * the speed-up of binomial aggregation over drawing every sample, side by side on a
    small case (R = 2000 samples per round) where both are feasible;
  * the lockstep simulator against a floor written here (:func:`floor_seconds`): the
    same honest debates as plain numpy, per round the relevant bits, the step's
    probability, binomial estimates on oracle steps, the two coin shares, the bit and
    B's threshold test, with no trust boundary (no copies, checks, forfeits or
    ledgers). CPU time (``time.process_time``), the fastest of 5 alternated runs.

Writes benchmarks/results/stochastic.{json,md} and the ``bench:stochastic`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_stochastic.py
"""

from __future__ import annotations

import os
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


def floor_seconds(machine, params, debates: int, seed: int) -> float:
    """CPU seconds of the honest debates' arithmetic alone (shared coin), in plain numpy."""
    rng_a, rng_b = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    start = time.process_time()
    bits = np.zeros((machine.length, debates), dtype=np.int64)
    active = np.arange(debates)
    for t in range(machine.length):
        rel = np.asarray(machine.relevant(t), dtype=np.int64)
        p = machine.probability_batch(t, bits[np.ix_(rel, active)].T)
        announced, mine = p, p  # exact on deterministic steps
        if machine.is_query(t):
            announced = rng_a.binomial(params.a_samples, p) / params.a_samples
            mine = rng_b.binomial(params.b_samples, p) / params.b_samples
        coin = np.mod(rng_a.random(active.size) + rng_b.random(active.size), 1.0)
        bits[t, active] = coin < announced
        active = active[np.abs(mine - announced) < params.b_threshold]
    return time.process_time() - start


def lockstep_vs_floor(machine, params, debates: int, repeats: int = 5) -> dict:
    """The lockstep simulator's CPU time over the floor's, alternated, fastest of each."""
    a, b = make_strategy("stochastic", "A", "honest"), make_strategy("stochastic", "B", "honest")
    lock, floor = [], []
    for seed in range(repeats):
        start = time.process_time()
        play_stochastic_batch(machine, params, 1, a, b, debates=debates, seed=seed)
        lock.append(time.process_time() - start)
        floor.append(floor_seconds(machine, params, debates, seed))
    return {
        "machine": machine.name, "debates": debates, "lockstep_s": min(lock),
        "floor_s": min(floor), "ratio": min(lock) / min(floor),
        "load_average_1min": os.getloadavg()[0],
    }  # fmt: skip


def main() -> None:
    rows = []
    for m in (chain(100), queries(100)):
        rows.append(rounds_per_second(m, paper_params(1.0, m.length), 20_000))
    small = StochasticParams("custom", 1.0, 20, 2000, 2000, 4000, 0.05, 0.025, "shared")
    m = queries(20)
    agg = rounds_per_second(m, small, 2000, "binomial")
    per = rounds_per_second(m, small, 2000, "per-sample")
    versus_floor = lockstep_vs_floor(chain(100), paper_params(1.0, 100), 20_000)
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "lockstep_vs_floor": versus_floor,
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
        "",
        f"Against a floor ({versus_floor['machine']}, {versus_floor['debates']:,} honest "
        "debates; `floor_seconds`: the same arithmetic in plain numpy, no trust boundary): "
        f"{versus_floor['lockstep_s'] * 1000:.1f} ms against {versus_floor['floor_s'] * 1000:.1f}"
        f" ms of CPU, **{versus_floor['ratio']:.2f}x** (fastest of 5 alternated runs each; "
        f"1-minute load average {versus_floor['load_average_1min']:.1f}).",
    ]
    md = "\n".join(lines) + "\n"
    write_atomic(OUT / "stochastic.md", md)
    replace_block(ROOT / "docs" / "performance.md", "bench:stochastic", md)
    print(md)


if __name__ == "__main__":
    main()
