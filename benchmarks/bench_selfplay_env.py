"""Benchmark of the self-play environments against the protocol's own batch path (issue 38).

Measures, in one run on this machine, honest bisection debates (A claims the truth and
sends the true configurations, B disputes the half that is wrong, else the second) on the
same 20 instances of the 8-cell, T <= 64 family:
  * the protocol's own path: ``play_batch("bisection", ..., a="honest", b="honest")``;
  * the PettingZoo environment (``DebateEnv``: ``last()`` and ``step()`` per move);
  * the OpenSpiel game (``state.apply_action`` per move, a Python game);
  * the pure rules (``rules.apply`` per move), the floor under both adapters.
Each as debates and moves per second (best of 3 repeats); the ratios are to the batch
path, measured in the same run, with the load average before and after.

Writes benchmarks/results/selfplay_env.{json,md} and the ``bench:selfplay`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_selfplay_env.py
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import pyspiel

from proofgames import play_batch
from proofgames.protocols import Instance
from proofgames.reporting import replace_block, write_atomic, write_json
from proofgames.selfplay import TuringFamily, TuringInstance, make_rules
from proofgames.selfplay.openspiel import load_game
from proofgames.selfplay.pettingzoo import DebateEnv

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
FAMILY = TuringFamily(space=8, max_steps=64)
REPEATS = 5


def trajectory(inst: TuringInstance) -> list:
    tm = inst.machine()
    run = [tm.initial()]
    for _ in range(inst.steps):
        run.append(tm.step(run[-1]))
    return run


def honest_action(rules, node, run) -> int:
    """A: the true configuration asked for; B: the half that is wrong (else the second)."""
    if node.phase == "final":
        return rules.action_of(run[-1])
    if node.phase == "midpoint":
        return rules.action_of(run[node.dispute.midpoint_time])
    return 0 if node.midpoint != run[node.dispute.midpoint_time] else 1


def batch_path(insts, runs, debates: int) -> tuple[int, int]:
    moves = 0
    for inst in insts:
        target = Instance(f"tm:{inst.program}", inst.program, "configuration", inst.machine(),
                          inst.steps, inst.truth)  # fmt: skip
        batch = play_batch("bisection", target, inst.truth, "honest", "honest", debates=debates)
        assert batch.acceptance == 1.0
        moves += debates * (1 + 2 * (inst.steps - 1).bit_length())
    return len(insts) * debates, moves


def env_path(insts, runs, debates: int) -> tuple[int, int]:
    moves = 0
    for inst, run in zip(insts, runs, strict=True):
        env = DebateEnv("bisection", FAMILY, claim=inst.truth, instances=[inst])
        for d in range(debates):
            env.reset(seed=d)
            for _agent in env.agent_iter():
                _, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                env.step(honest_action(env.rules, env.node, run))
                moves += 1
            assert env.node.verdict == 1
    return len(insts) * debates, moves


def openspiel_path(insts, runs, debates: int) -> tuple[int, int]:
    moves = 0
    for inst, run in zip(insts, runs, strict=True):
        game = load_game("bisection", **inst.params(), claim=inst.truth, horizon=64)
        for _ in range(debates):
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply_action(honest_action(game.rules, state.node, run))
                moves += 1
            assert state.returns()[0] == 1.0
    return len(insts) * debates, moves


def rules_path(insts, runs, debates: int) -> tuple[int, int]:
    moves = 0
    for inst, run in zip(insts, runs, strict=True):
        rules = make_rules("bisection", **inst.params(), claim=inst.truth, horizon=64)
        for _ in range(debates):
            node = rules.initial()
            while not node.terminal:
                node = rules.apply(node, honest_action(rules, node, run))
                moves += 1
            assert node.verdict == 1
    return len(insts) * debates, moves


def measure(path: Callable, insts, runs, debates: int) -> dict:
    best = None
    for _ in range(REPEATS):
        start = time.perf_counter()
        games, moves = path(insts, runs, debates)
        seconds = time.perf_counter() - start
        if best is None or seconds < best["seconds"]:
            best = {
                "debates": games,
                "moves": moves,
                "seconds": seconds,
                "debates_per_second": games / seconds,
                "moves_per_second": moves / seconds,
            }
    assert best is not None
    return best


def main() -> None:
    insts = FAMILY.split(seed=0, train=20, test=0)[0]
    runs = [trajectory(i) for i in insts]
    load_before = os.getloadavg()
    paths = {"batch (play_batch, honest strategies)": batch_path, "PettingZoo DebateEnv": env_path,
             "OpenSpiel game": openspiel_path, "pure rules": rules_path}  # fmt: skip
    rows = {name: measure(path, insts, runs, 50) for name, path in paths.items()}
    load_after = os.getloadavg()
    base = rows["batch (play_batch, honest strategies)"]["debates_per_second"]
    for r in rows.values():
        r["ratio_to_batch"] = r["debates_per_second"] / base
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}, 2 cores",
        "openspiel": pyspiel.__version__ if hasattr(pyspiel, "__version__") else "2.0.2",
        "family": "2 states, 2 symbols, 8 cells, T <= 64 (20 instances, seed 0)",
        "load_average_before": list(load_before),
        "load_average_after": list(load_after),
        "paths": rows,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "selfplay_env.json", result, indent=2)
    lines = [
        f"Measured {result['date']} on {result['machine']}, one process "
        "(`.venv/bin/python benchmarks/bench_selfplay_env.py`); load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after (1-minute).",
        "",
        f"Honest bisection debates on {result['family']}, 50 debates each, best of {REPEATS}:",
        "",
        "| path | debates/s | moves/s | ratio to the batch path (debates/s) |",
        "|---|---|---|---|",
    ]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['debates_per_second']:,.0f} | {r['moves_per_second']:,.0f} "
                     f"| {r['ratio_to_batch']:.2f} |")  # fmt: skip
    md = "\n".join(lines) + "\n"
    write_atomic(OUT / "selfplay_env.md", md)
    replace_block(ROOT / "docs" / "performance.md", "bench:selfplay", md)
    print(md)


if __name__ == "__main__":
    main()
