"""Prepared for a lent GPU: calibrate, then train 8 FindThePlus seeds batched, resumable.

Written for issue 40 (a GPU machine is sometimes lent for about 15 minutes, machine
start included); **not yet run on a GPU**. One call does two things within ``--budget``
seconds of its own wall time:

1. *Calibrate* (a few tens of seconds): on fresh agents of the run's settings, the
   seconds per game step of the 8 seeds batched (one ``vmap`` call per update) and of
   one seed alone, at 1 and at ``--calibrate-prover-steps`` prover updates per game
   step (the adaptive rule reaches up to 15 late in a run), and of one logged row and one
   stress test of one seed; so the time to 40,000 steps can be projected.
2. *Train*: the 8 seeds of ``--root`` (``ROOT/s0`` ... ``ROOT/s7``, each a single-seed
   run folder) are resumed if saved there, else started, towards ``--steps`` game steps,
   and stopped (SIGTERM to itself, so every seed's state is saved after the game step in
   progress, exactly resumable) when the budget runs out.

The settings are the long runs' (``pvg reproduce --profile long``: batch 256,
alternating updates, adaptive prover steps, 100 pretraining steps, stress tests every 500
steps by the messages attack and the exhaustive search, the paper's model selection)
except two: the batches come from a seeded data bank of ``--data-bank`` instances per
seed, generated once on the CPU and drawn on the GPU (generating every batch costs about
10 ms of CPU a batch, which would leave the GPU idle), so these runs' training stream is
not the CPU runs'; and the stress tests' seed is one for all seeds (``reproduce`` uses
each run's own seed). Everything the call measured and reached goes to
``ROOT/gpu-session-<time>.json``; with ``--copy-to`` (the device's ``$OUT``) the whole
root comes back packed (a gzipped tar in parts of at most 15 MiB: the device tool
returns at most 64 MiB), to be committed when the runs pause.

Run on the device machine, from the repository root (its ``python3`` holds PyTorch and
every package ``proofgames.pvg`` imports), within one call's 10 minutes:
    PYTHONUNBUFFERED=1 PYTHONPATH=src python3 benchmarks/gpu_pvg_seeds.py \\
        --root reports/pvg-gpu-seeds --budget 480 --copy-to "$OUT"
and back here, in ``reports/``: ``cat FILES_AT/pvg-gpu-seeds.tar.gz.part* | tar xz``. The
next call resumes from the root if it travels with the working tree (committed, or
carried).
A dry run on a CPU (to check the script, not to measure):
    python benchmarks/gpu_pvg_seeds.py --device cpu --root /tmp/seeds --budget 120 \\
        --batch-size 16 --eval-size 32 --calibrate-steps 2 --data-bank 512 --stress-every 10
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import tarfile
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from proofgames.errors import TrainingStopped
from proofgames.pvg import TrainConfig, make_task
from proofgames.pvg._game import Game
from proofgames.pvg.batched import BatchedPlay, seed_folder, train_seeds
from proofgames.pvg.checkpoint import STATE_FILE, load_training_state
from proofgames.pvg.reproduce._reproduction_plan import ftp_config
from proofgames.pvg.reproduce.profiles import PROFILES
from proofgames.pvg.stress import stress_test
from proofgames.pvg.train import _evaluation

SEEDS = list(range(8))


def _config(opts: argparse.Namespace, steps: int, root: Path | None) -> TrainConfig:
    """The long runs' settings with the bank, this call's device and ``steps``."""
    config = ftp_config(PROFILES["long"], 0, "simultaneous", steps, opts.device, False, root)
    return replace(
        config,
        batch_size=opts.batch_size,
        eval_size=opts.eval_size,
        data_bank=opts.data_bank,
        stress_every=opts.stress_every,
        checkpoint_every=opts.checkpoint_every if root is not None else 0,
        precision=opts.precision,
    )


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _per_step(step: Any, steps: int) -> float:
    """Wall seconds per call of ``step`` (after one untimed call), the device synchronized."""
    step()
    _sync()
    tick = time.perf_counter()
    for _ in range(steps):
        step()
    _sync()
    return (time.perf_counter() - tick) / steps


def calibrate(opts: argparse.Namespace) -> dict[str, Any]:
    """Seconds per game step batched and alone, and of one logged row and stress test."""
    config, task = _config(opts, 1, None), make_task("find-the-plus")
    config = replace(config, data_bank=min(opts.data_bank, 8 * opts.batch_size))
    device = torch.device(opts.device)
    tick = time.perf_counter()
    games = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        one = replace(config, seed=seed)
        games.append(Game(task, one, device, torch.Generator().manual_seed(seed)))
    figures: dict[str, Any] = {"build_seconds_8_seeds": time.perf_counter() - tick}
    play = BatchedPlay(games, config)
    for k in (1, opts.calibrate_prover_steps):
        batched = _per_step(lambda k=k: play.play([k] * len(SEEDS), 1), opts.calibrate_steps)
        alone = _per_step(lambda k=k: games[0].play(1, k), opts.calibrate_steps)
        figures[f"prover_steps_{k}"] = {
            "batched_8_seconds_per_step": batched,
            "one_seed_seconds_per_step": alone,
            "batched_over_8_separate": batched / (8 * alone),
        }
    play.store(weights_only=True)
    eval_x, eval_y = task.sample(config.eval_size, torch.Generator().manual_seed(0))
    eval_x, eval_y = eval_x.to(device), eval_y.to(device)
    figures["logged_row_seconds_one_seed"] = _per_step(
        lambda: _evaluation(task, games[0], eval_x, eval_y, 0), 2
    )
    tick = time.perf_counter()
    stress_test(task, games[0].verifier, games[0].prover, config.stress_attacks, config.stress,
                config.max_memory_gb)  # fmt: skip
    _sync()
    figures["stress_test_seconds_one_seed"] = time.perf_counter() - tick
    print(json.dumps(figures, indent=2), flush=True)
    return figures


def train_until(opts: argparse.Namespace, deadline: float) -> dict[str, Any]:
    """Resume (or start) the 8 seeds under ``--root`` until ``--steps`` or the deadline."""
    root = Path(opts.root)
    saved = [seed_folder(root, seed) / STATE_FILE for seed in SEEDS]
    resume = root if all(path.is_file() for path in saved) else None
    before = load_training_state(saved[0]).step if resume is not None else 0
    config = _config(opts, opts.steps, root)
    done = threading.Event()
    outside = signal.signal(signal.SIGTERM, _not_yet)
    timer = threading.Thread(target=_stop_at, args=(deadline, done), daemon=True)
    timer.start()
    tick, stopped = time.perf_counter(), None
    try:
        results = train_seeds(make_task("find-the-plus"), config, SEEDS, resume=resume)
        reached = [r.steps for r in results]
    except TrainingStopped as exc:
        stopped = str(exc)
        reached = [load_training_state(path).step for path in saved]
    finally:
        done.set()
        signal.signal(signal.SIGTERM, outside)
    seconds = time.perf_counter() - tick
    return {"resumed_from_step": before, "reached": reached, "stopped": stopped,
            "train_wall_seconds": seconds,
            "steps_per_second": (min(reached) - before) / seconds if seconds else None,
            "last_rows": _last_rows(root)}  # fmt: skip


def _not_yet(signum: int, frame: Any) -> None:
    """SIGTERM before the training loop listens: ignored (the timer sends it again)."""


def _stop_at(deadline: float, done: threading.Event) -> None:
    """At the deadline, send SIGTERM once the training loop's own handler is installed.

    The loop (``TrainConfig.checkpoint_every``) saves every seed's state after the game
    step in progress and stops; a second SIGTERM would stop it at once, so one is sent.
    """
    if done.wait(max(deadline - time.monotonic(), 0.0)):
        return
    while not done.wait(1.0):
        if signal.getsignal(signal.SIGTERM) is not _not_yet:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _last_rows(root: Path) -> dict[str, Any]:
    """Each seed's last logged row (its metric log's last line)."""
    rows = {}
    for seed in SEEDS:
        log = seed_folder(root, seed) / "metrics.jsonl"
        lines = log.read_text().splitlines() if log.is_file() else []
        rows[str(seed)] = json.loads(lines[-1]) if lines else None
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="reports/pvg-gpu-seeds")
    parser.add_argument("--budget", type=float, default=480.0, help="wall seconds, all in")
    parser.add_argument("--margin", type=float, default=45.0,
                        help="seconds kept for the last step and saving (at least 8 stress "
                        "tests' calibrated time)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=60_000, help="target game steps")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--eval-size", type=int, default=2000)
    parser.add_argument("--data-bank", type=int, default=100_000)
    parser.add_argument("--precision", default="fp32", help="fp32, or bf16 (other numerics)")
    parser.add_argument("--stress-every", type=int, default=500)
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--calibrate-steps", type=int, default=10)
    parser.add_argument("--calibrate-prover-steps", type=int, default=8)
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument("--copy-to", default=None, help="copy the root here at the end")
    opts = parser.parse_args()
    start = time.monotonic()
    if opts.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here; --device cpu runs a dry run")
    warnings.filterwarnings("ignore", message="There is a performance drop")
    session: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "device": torch.cuda.get_device_name() if opts.device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "options": vars(opts),
        "load_average": os.getloadavg(),
    }
    margin = opts.margin
    if not opts.skip_calibration:
        session["calibration"] = figures = calibrate(opts)
        # a stop waits for the game step in progress: at worst one with 8 stress tests
        margin = max(margin, 1.2 * len(SEEDS) * figures["stress_test_seconds_one_seed"] + 15)
    session["margin_seconds"] = margin
    deadline = start + opts.budget - margin
    session["training"] = train_until(opts, deadline)
    session["wall_seconds"] = time.monotonic() - start
    root = Path(opts.root)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    (root / f"gpu-session-{stamp}.json").write_text(json.dumps(session, indent=2) + "\n")
    print(json.dumps(session["training"], indent=2))
    if opts.copy_to:
        print("packed:", pack(root, Path(opts.copy_to)))


#: The device tool returns at most 8 files of 16 MiB from ``$OUT``, 64 MiB in all: 4 parts.
PART_BYTES, MAX_PARTS = 15 * 2**20, 4


def pack(root: Path, out: Path) -> list[str]:
    """``root`` as a gzipped tar split into parts of at most 15 MiB in ``out``.

    Put back together here with ``cat NAME.tar.gz.part* | tar xz`` (in the folder that
    holds the root). If the whole root needs more than 4 parts, only what resuming needs
    is packed (each seed's ``state.pt`` and ``metrics.jsonl``, and the session files).

    Raises:
        SystemExit: even that needs more than 4 parts (it would not all come back).
    """
    out.mkdir(parents=True, exist_ok=True)
    for keep in (None, {STATE_FILE, "metrics.jsonl"}):
        data = _tar(root, keep)
        parts = [data[i : i + PART_BYTES] for i in range(0, len(data), PART_BYTES)]
        if len(parts) <= MAX_PARTS:
            break
    else:
        raise SystemExit(f"{len(data):,} bytes packed: over {MAX_PARTS} parts; keep less")
    names = []
    for i, part in enumerate(parts):
        name = f"{root.name}.tar.gz.part{i:02d}"
        (out / name).write_bytes(part)
        names.append(name)
    return names


def _tar(root: Path, keep: set[str] | None) -> bytes:
    """The gzipped tar of ``root``; with ``keep``, of only the seeds' files of those names."""

    def chosen(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        name = Path(info.name)
        in_seed = len(name.parts) == 3  # root/sN/file
        return None if keep is not None and in_seed and name.name not in keep else info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        archive.add(root, arcname=root.name, filter=chosen)
    return buffer.getvalue()


if __name__ == "__main__":
    main()
