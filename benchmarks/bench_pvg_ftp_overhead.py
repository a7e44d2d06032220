"""Benchmark: a short whole FindThePlus run, before and after the run-overhead cuts (issue 40).

Runs ``proofgames pvg train find-the-plus`` (the task's defaults: 100 pretraining steps,
adaptive prover steps; batch 256, evaluation on 2,000 images every ``log_every`` steps,
the training state saved every 100 steps, no stress tests, ``--threads 1``) as separate
processes, alternating the code before (``--before``, a checkout's root, e.g. main) and
after (this checkout), and then this checkout with the data bank and a longer logging
interval. Each run's wall and CPU seconds (its process's user + system time) are recorded
with the load average; ratios are of runs measured in this one invocation.

The *floor* is a minimal loop with the same updates: the same pretraining and game steps
(the prover steps per game step as logged by the run after the cuts) of the library's
game on batches generated beforehand, with no evaluation, no data generation and no
saving.

Also checks that the runs before and after log the same figures, bit for bit (the
one-pass evaluation) and train the same agents.

Writes benchmarks/results/pvg_ftp_overhead.{json,md} (``_pN`` added with
``--prover-steps N``).
Run:  taskset -c 0 .venv/bin/python benchmarks/bench_pvg_ftp_overhead.py --before /work/main
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
PRETRAIN = [100]  # --pretrain
EXTRA: list[str] = []  # options every run gets (--prover-steps)

FLOOR = """
import json, sys, time, torch
from proofgames.pvg import TrainConfig, make_task, task_defaults
from proofgames.pvg._game import Game
torch.set_num_threads(1)
steps, schedule, pretrain = int(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
task = make_task("find-the-plus")
config = TrainConfig(**{**task_defaults("find-the-plus"), "steps": steps,
                        "pretrain_steps": pretrain}, batch_size=256,
                     progress=False, device="cpu", data_bank=2560)
torch.manual_seed(0)
game = Game(task, config, torch.device("cpu"), torch.Generator().manual_seed(0))
tick = time.process_time()
for _ in range(config.pretrain_steps):
    game.pretrain_step()
for step in range(1, steps + 1):
    game.play(1, schedule[step - 1])
print(json.dumps({"update_cpu_seconds": time.process_time() - tick}))
"""


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(code: Path, args: list[str], label: str) -> dict[str, Any]:
    """One process on ``code``'s sources; its wall and CPU seconds, load, and its rows."""
    env = {**os.environ, "PYTHONPATH": str(code / "src"), "OMP_NUM_THREADS": "1"}
    load = os.getloadavg()
    cpu, tick = _cpu_of_children(), time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - tick, _cpu_of_children() - cpu
    if done.returncode:
        raise SystemExit(f"{label} failed:\n{done.stderr[-2000:]}")
    print(f"{label}: wall {wall:.1f} s, cpu {cpu:.1f} s, load {load[0]:.2f}", flush=True)
    return {"label": label, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "load_before": [round(v, 2) for v in load], "load_after":
            [round(v, 2) for v in os.getloadavg()], "stdout": done.stdout}  # fmt: skip


def _train(code: Path, steps: int, out: Path, label: str, *sets: str) -> dict[str, Any]:
    args = [sys.executable, "-m", "proofgames", "pvg", "train", "find-the-plus",
            "--steps", str(steps), "--batch-size", "256", "--threads", "1", "--device", "cpu",
            "--checkpoint-every", "100", "--seed", "0", "--out", str(out), "--json"]  # fmt: skip
    args += EXTRA
    for setting in (f"pretrain_steps={PRETRAIN[0]}", *sets):
        args += ["--set", setting]
    run = _run(code, args, label)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    run["rows"] = [{k: v for k, v in row.items() if k != "seconds"} for row in rows]
    run.pop("stdout")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before the cuts")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--bank", type=int, default=50_000)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--pretrain", type=int, default=100, help="prover pretraining steps")
    parser.add_argument(
        "--prover-steps", type=int, default=None,
        help="prover updates per game step, fixed (the long runs play 15 from step 10,000 or so, "
        "the adaptive rule's maximum); default: the task's adaptive rule",
    )  # fmt: skip
    parser.add_argument("--no-variants", action="store_true",
                        help="skip the runs with the data bank and log_every=100")  # fmt: skip
    opts = parser.parse_args()
    PRETRAIN[0] = opts.pretrain
    if opts.prover_steps is not None:
        EXTRA.extend(["--prover-steps", str(opts.prover_steps)])
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(opts.pairs):
            for side, code in (("before", opts.before), ("after", ROOT)):
                runs.append(_train(code, opts.steps, folder / f"{side}{i}", side))
        bank = f"data_bank={opts.bank}"
        if not opts.no_variants:
            runs.append(_train(ROOT, opts.steps, folder / "bank", "after+bank", bank))
            runs.append(_train(ROOT, opts.steps, folder / "bank100", "after+bank+log100", bank,
                               "log_every=100"))  # fmt: skip
    after = next(r for r in runs if r["label"] == "after")
    schedule = _schedule(after["rows"], opts.steps)
    floor_args = [str(opts.steps), json.dumps(schedule), str(opts.pretrain)]
    floor = _run(ROOT, [sys.executable, "-c", FLOOR, *floor_args], "floor")
    floor["updates_cpu_seconds"] = json.loads(floor.pop("stdout"))["update_cpu_seconds"]
    _publish(opts, runs, floor, schedule)


def _schedule(rows: list[dict[str, Any]], steps: int) -> list[int]:
    """Prover steps per game step, from the logged rows (each row's value back to the last)."""
    schedule, last = [], 0
    for row in rows:
        schedule += [row["prover_steps"]] * (row["step"] - last)
        last = row["step"]
    return schedule + [schedule[-1]] * (steps - len(schedule))


def _publish(opts: Any, runs: list[dict[str, Any]], floor: dict[str, Any], schedule: list[int]):
    before = [r for r in runs if r["label"] == "before"]
    after = [r for r in runs if r["label"] == "after"]
    identical = all(b["rows"] == a["rows"] for b, a in zip(before, after, strict=True))
    identical = identical and all(r["rows"] == before[0]["rows"] for r in before + after)
    lines = [
        "# FindThePlus whole run, before and after the run-overhead cuts (issue 40)\n",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} UTC, `taskset -c 0`, `--threads 1`, "
        f"{opts.steps} game steps after {opts.pretrain} pretraining steps, batch 256, "
        f"evaluation on 2,000 images; before = `{opts.before}`. Runs in the order listed; "
        f"CPU = the "
        f"process's user + system seconds. Rows logged before and after identical (bit "
        f"for bit, every figure but the clock): **{identical}**. Prover steps per game "
        f"step: {min(schedule)} to {max(schedule)}"
        f"{' (fixed: --prover-steps)' if opts.prover_steps is not None else ''}.\n",
        "| run | wall s | CPU s | CPU / floor | load (1 min) before, after |",
        "|---|---|---|---|---|",
    ]
    floor_cpu = floor["cpu_seconds"]
    for r in [*runs, floor]:
        lines.append(
            f"| {r['label']} | {r['wall_seconds']:.1f} | {r['cpu_seconds']:.1f} | "
            f"{r['cpu_seconds'] / floor_cpu:.2f}x | {r['load_before'][0]:.2f}, "
            f"{r['load_after'][0]:.2f} |"
        )
    ratio = [a["cpu_seconds"] / b["cpu_seconds"] for b, a in zip(before, after, strict=True)]
    lines.append(f"\nCPU after / before, per pair: {', '.join(f'{x:.3f}' for x in ratio)}.")
    lines.append(
        f"Floor's updates alone: {floor['updates_cpu_seconds']:.1f} CPU s (the rest of its "
        "process: start-up, imports, building the agents).\n"
    )
    result = {"steps": opts.steps, "bank": opts.bank, "identical_rows": identical,
              "runs": [{k: v for k, v in r.items() if k != "rows"} for r in runs],
              "floor": floor, "cpu_ratio_after_before": ratio}  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    name = "pvg_ftp_overhead" + (f"_p{opts.prover_steps}" if opts.prover_steps else "")
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (OUT / f"{name}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
