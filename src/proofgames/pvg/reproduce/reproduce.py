"""Reproduce the Prover-Verifier Games experiments (Anil et al. 2021, Section 5).

:func:`reproduce` trains over several seeds, stress-tests the frozen verifiers and returns
every measured figure; :func:`~proofgames.pvg.reproduce.report.write_report` turns the result into
``report.md`` with figures.  What is measured:

* **Table 2 (BEC)** -- per seed, simultaneous play with the paper's settings until stress
  tests (every 10 game steps) find precision = recall = 1 against both attacks, and the
  collaborative baseline for a fixed number of steps; both frozen verifiers are then
  attacked again on a *fresh* evaluation batch and attack seed (the held-out figures in
  the table).
* **Figure 2 (BEC dynamics)** -- the prover's token log-probabilities per input bit and
  the verifier's logit per token at every logged step, with the verifier's accuracy.
* **Theorems 4 vs 5** -- simultaneous and prover-first play (closed-form verifier best
  response) for the same number of steps: the erasure fraction and the information the
  token carries about the bit over training.  Verifier-first play is measured too.
* **Table 3 (FindThePlus)** -- per seed, simultaneous play with the paper's heuristics
  (adaptive prover steps, pretraining, label smoothing); the checkpoint kept is the one
  with the best frozen accuracy against optimized messages (the paper's selection,
  Appendix E.2), then attacked again on a fresh batch; and the collaborative baseline.
* **Figure 4 (gaze)** -- where each verifier head looks, on images with and without a
  plus of 1-pixels (the label the prover defends).

Profiles (:data:`~proofgames.pvg.reproduce.profiles.PROFILES`) fix the scale; the report states
the profile and every setting used.  With ``runs_dir`` every FindThePlus run saves its
training state as it goes, and ``resume=True`` continues where it stopped.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ...errors import PVGError
from ...reporting import write_json
from ...sweeps.executors import make_executor, map_items
from .._memory import DEFAULT_MAX_MEMORY_GB
from ..checkpoint import STATE_FILE
from ..find_the_plus.diagnostics import gaze, head_diagnostics
from ..registry import task_defaults
from ..stress import (
    ALL_ATTACKS,
    AttackResult,
    Metrics,
    StressConfig,
    stress_test,
    supported_attacks,
)
from ..tasks.bec import BECProver, BinaryErasureChannel
from ..train import TrainConfig, TrainResult, train
from ._reproduction_plan import (
    bec_config,
    check_call,
    ftp_config,
    ftp_trainings,
    prepare_runs_dir,
)
from ._saved_runs import (
    BEC_FILE,
    BEC_SEED_FILE,
    RUN_FILE,
    bec_key,
    finished_run,
    logged_curve,
    saved_bec,
    saved_bec_seed,
)
from .profiles import PAPER_TABLES, PROFILES, TRAININGS, Profile


def reproduce(
    seeds: Sequence[int] = (0, 1, 2, 3),
    profile: str | Profile = "cpu",
    tasks: Sequence[str] = ("bec", "find-the-plus"),
    device: str = "auto",
    progress: bool = False,
    workers: int = 1,
    runs_dir: Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB,
    executor: Executor | None = None,
    seed_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run the experiments of the module docstring and return the measurements (JSON-able).

    Args:
        seeds: training seeds (the paper used four).
        profile: a name from :data:`PROFILES` or a :class:`Profile`.
        tasks: any of ``"bec"`` and ``"find-the-plus"``.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``...
        progress: show progress bars.
        workers: FindThePlus seeds trained in parallel processes (one torch thread
            each); the results do not depend on it.
        runs_dir: if given, FindThePlus checkpoints, metric logs and resumable training
            states go to ``runs_dir/find-the-plus-TRAINING-sSEED``, each finished run's
            measurements to ``run.json`` there, and the BEC results to ``bec.json``.
        resume: continue an interrupted reproduction saved in ``runs_dir``: finished runs
            with the same settings are reused, unfinished ones continue from their
            training state (exactly, see :func:`~proofgames.pvg.train.train`), the rest
            start afresh. Every saved result is checked before any work.
        overwrite: start afresh over the results of an earlier reproduction in
            ``runs_dir`` (removing those this call would write); without it, or
            ``resume``, such results are refused rather than mixed with new ones.
        max_memory_gb: refuse (before any work) a profile whose largest batch is
            estimated to need more memory (GB; see ``TrainConfig.max_memory_gb``).
        executor: where the FindThePlus seeds run instead of ``workers`` local processes
            (:mod:`proofgames.sweeps.executors`, e.g. a Dask client's executor); a seed whose
            worker died runs again elsewhere and, with ``runs_dir`` on a folder every worker
            sees, continues from its training state.
        seed_progress: called with 1 as each FindThePlus seed finishes.

    Raises:
        PVGError: (a ``ValueError``) unknown tasks, no seeds, an unusable device or
            worker count, ``resume`` without ``runs_dir`` or with ``overwrite``, a batch
            over the memory limit, saved results this call can neither reuse nor
            continue, or an earlier reproduction's results without ``resume`` or
            ``overwrite``; all found before any work.
    """
    if isinstance(profile, str) and profile not in PROFILES:
        raise PVGError(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    check_call(seeds, prof, tasks, device, workers, max_memory_gb)
    if runs_dir is not None:
        prepare_runs_dir(runs_dir, seeds, prof, tasks, resume, overwrite)
    elif resume:
        raise PVGError("resume needs runs_dir, where the interrupted reproduction was saved")
    start = time.perf_counter()
    out: dict[str, Any] = {
        "profile": asdict(prof),
        "seeds": list(seeds),
        "machine": {
            "platform": platform.platform(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "workers": workers,
            "device": device,
        },
        "paper": {
            task: [[*key, value] for key, value in table.items()]
            for task, table in PAPER_TABLES.items()
        },
    }
    if "bec" in tasks:
        bec = saved_bec(runs_dir, prof, seeds) if resume else None
        if bec is None:
            tick = time.perf_counter()
            bec = reproduce_bec(seeds, prof, device, progress, max_memory_gb, runs_dir, resume)
            bec["seconds"] = round(time.perf_counter() - tick, 1)
            if runs_dir is not None:
                write_json(runs_dir / BEC_FILE, {**bec_key(prof, seeds), "bec": bec}, parents=True)
        out["bec"] = bec
    if "find-the-plus" in tasks:
        tick = time.perf_counter()
        out["find-the-plus"] = reproduce_find_the_plus(
            seeds, prof, device, progress, workers, runs_dir, resume, max_memory_gb,
            executor, seed_progress,
        )  # fmt: skip
        out["find-the-plus"]["seconds"] = round(time.perf_counter() - tick, 1)
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def reproduce_bec(
    seeds: Sequence[int],
    prof: Profile,
    device: str,
    progress: bool,
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB,
    runs_dir: Path | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Table 2, Figure 2 and Theorems 4 vs 5 on the Binary Erasure Channel.

    With ``runs_dir`` each seed's results are saved (``bec-sSEED.json``) as soon as the
    seed finishes, so that an interrupted call keeps them; with ``resume`` too, the seeds
    saved with this profile are reused rather than run again.
    """
    runs: list[dict[str, Any]] = []
    dynamics: list[dict[str, Any]] = []
    formulations: dict[str, list[dict[str, Any]]] = {}
    for seed in seeds:
        part = saved_bec_seed(runs_dir, prof, seed) if runs_dir and resume else None
        if part is None:
            part = _bec_seed(seed, prof, device, progress, max_memory_gb)
            if runs_dir is not None:
                path = runs_dir / BEC_SEED_FILE.format(seed=seed)
                saved = {"profile": asdict(prof), "seed": seed, "seed_results": part}
                write_json(path, saved, parents=True)
        runs += part["runs"]
        dynamics.append(part["dynamics"])
        for formulation, entry in part["formulations"].items():
            formulations.setdefault(formulation, []).append(entry)
    return {
        "runs": runs,
        "table": summarize(runs),
        "dynamics": dynamics,
        "formulations": formulations,
        "settings": dict(task_defaults("bec"), max_steps=prof.bec_max_steps),
    }


def _bec_seed(
    seed: int, prof: Profile, device: str, progress: bool, max_memory_gb: float
) -> dict[str, Any]:
    """One seed's BEC runs: the PVG run, the four formulations and Figure 2's trace."""
    task = BinaryErasureChannel()
    config = bec_config(prof, seed, device, progress, max_memory_gb)
    common: dict[str, Any] = dict(
        task_defaults("bec"), seed=seed, device=device, eval_size=prof.eval_size,
        progress=progress, max_memory_gb=max_memory_gb,
    )  # fmt: skip
    result = train(task, config)
    runs = [_table_run(task, "pvg", seed, result, prof.stress, max_memory_gb)]
    formulations, dynamics = {}, {}
    for formulation in ("collaborative", "simultaneous", "prover-first", "verifier-first"):
        counts = {}
        if formulation == "verifier-first":  # the prover follows: 5 steps per round
            counts = {"verifier_steps": 1, "prover_steps": 5}
        trace = BECTrace()  # Figure 2 follows the fixed-length simultaneous run
        played = train(
            task,
            TrainConfig(
                **{**common, "steps": prof.bec_baseline_steps, **counts},
                formulation=formulation, log_every=5,
            ),
            observe=trace if formulation == "simultaneous" else None,
        )  # fmt: skip
        if formulation == "simultaneous":
            dynamics = {"seed": seed, **trace.rows(played.metrics)}
        if formulation == "collaborative":
            runs.append(_table_run(task, "collaborative", seed, played, prof.stress, max_memory_gb))
        formulations[formulation] = {
            "seed": seed,
            "curve": logged_curve(played.metrics),
            "seconds": played.seconds,
        }
    return {"runs": runs, "dynamics": dynamics, "formulations": formulations}


def reproduce_find_the_plus(
    seeds: Sequence[int],
    prof: Profile,
    device: str,
    progress: bool,
    workers: int = 1,
    runs_dir: Path | None = None,
    resume: bool = False,
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB,
    executor: Executor | None = None,
    seed_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Table 3, the learning curves and Figure 4 on FindThePlus (seeds run in parallel).

    Each seed is a work item (:func:`~proofgames.sweeps.executors.map_items`).  With ``runs_dir``
    a seed continues from the training state its runs saved, so a seed run again after
    its worker died picks up where that worker stopped (the folder was checked, or
    cleared, before any work: what it holds now this reproduction wrote).
    """
    inline = executor is None and (workers == 1 or len(seeds) == 1)
    shown = progress and workers == 1 and executor is None
    jobs = seed_jobs(seeds, prof, device, shown, runs_dir, resume, max_memory_gb)
    with (
        nullcontext(executor) if executor is not None or inline
        else make_executor("local", min(workers, len(jobs)), start_method="spawn")
    ) as pool:  # fmt: skip
        done = list(map_items(_ftp_seed, jobs, pool, progress=seed_progress).values())
    runs = [run for seed_runs, _, _ in done for run in seed_runs]
    carried = [r for r in runs if r.get("carried_over")]
    curves = [curve for _, seed_curves, _ in done for curve in seed_curves]
    best_seed, (score, prover_state, verifier_state) = max(
        zip(seeds, (d[2] for d in done), strict=True), key=lambda b: b[1][0]
    )
    task = prof.ftp_task_instance()
    prover, verifier = task.make_prover(), task.make_verifier()
    prover.load_state_dict(prover_state)
    verifier.load_state_dict(verifier_state)
    out: dict[str, Any] = {
        "runs": runs,
        "table": summarize(runs),
        "curves": curves,
        "gaze": {
            "seed": best_seed,
            "selection_accuracy": score,
            **head_diagnostics(task, prover, verifier),
            **gaze(task, prover, verifier),
        },
        "settings": prof.ftp_settings(),
        "task_args": task.init_args(),
        "selection_stress": asdict(prof.ftp_selection_stress),
    }
    if carried:
        out["seconds_note"] = (
            f"resumed: {len(carried)} of {len(runs)} runs were finished or continued from "
            "an earlier call, whose time the wall time leaves out; each run's training "
            "time covers all calls"
        )
    return out


FTPJob = tuple[int, Profile, str, bool, Path | None, bool, float]


def seed_jobs(
    seeds: Sequence[int],
    prof: Profile,
    device: str,
    progress: bool,
    runs_dir: Path | None,
    resume: bool,
    max_memory_gb: float,
) -> list[tuple[str, FTPJob]]:
    """The keyed work items of the FindThePlus seeds (for :func:`_ftp_seed`).

    With ``runs_dir`` every item continues from what its runs saved: the folder was
    checked (``resume``) or cleared before any work, so what it holds when an item runs
    again (its first worker died) was written by this reproduction.
    """
    carry_on = resume or runs_dir is not None
    return [
        (f"seed-{seed}", (seed, prof, device, progress, runs_dir, carry_on, max_memory_gb))
        for seed in seeds
    ]


def _ftp_seed(
    job: FTPJob,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[float, Any, Any]]:
    """One seed of FindThePlus: PVG and collaborative runs, each attacked afresh."""
    seed, prof, device, progress, runs_dir, resume, max_memory_gb = job
    if multiprocessing.parent_process() is not None:
        torch.set_num_threads(1)  # one worker per core
    runs: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    best: tuple[float, Any, Any] = (-1.0, None, None)
    for training, formulation, steps in ftp_trainings(prof):
        out_dir = None if runs_dir is None else runs_dir / f"find-the-plus-{training}-s{seed}"
        config = ftp_config(prof, seed, formulation, steps, device, progress, out_dir)
        config = replace(config, max_memory_gb=max_memory_gb)
        run, curve, prover, verifier = _ftp_run(prof, training, config, out_dir, resume)
        runs.append(run)
        curves.append(curve)
        if training == "pvg":
            score = run["best_accuracy"] or 0.0
            best = (score, prover.cpu().state_dict(), verifier.cpu().state_dict())
    return runs, curves, best


def _ftp_run(
    prof: Profile, training: str, config: TrainConfig, out_dir: Path | None, resume: bool
) -> tuple[dict[str, Any], dict[str, Any], nn.Module, nn.Module]:
    """One FindThePlus run: reused, continued or trained, then attacked on a fresh batch."""
    task, seed, limit = prof.ftp_task_instance(), config.seed, config.max_memory_gb
    finished = finished_run(out_dir, task, config) if resume else None
    if finished is not None:
        run, curve, prover, verifier = finished
        missing = [a for a in supported_attacks(task) if a not in run["attacks"]]
        if missing:  # saved before these attacks existed
            run["attacks"].update(
                _held_out_attacks(task, seed, verifier, prover, prof.ftp_stress, limit, missing)
            )
        stale = "attack" not in run or "pointing" not in run  # saved before they were recorded
        if stale:
            run.update(head_diagnostics(task, prover, verifier))
        if (missing or stale) and out_dir is not None:
            saved = json.loads((out_dir / RUN_FILE).read_text())
            write_json(out_dir / RUN_FILE, {**saved, "run": {**saved["run"], **run}}, parents=True)
        return run, curve, prover, verifier
    carried = resume and out_dir is not None and (out_dir / STATE_FILE).is_file()
    result = train(task, config, resume=out_dir if carried else None)
    run = _table_run(task, training, seed, result, prof.ftp_stress, limit)
    run.update(head_diagnostics(task, result.prover, result.verifier))
    run["carried_over"] = carried
    curve = {"seed": seed, "training": training, **logged_curve(result.metrics)}
    if out_dir is not None:
        record = {"task_args": task.init_args(), "config": config.to_dict()}
        write_json(out_dir / RUN_FILE, {**record, "run": run, "curve": curve}, parents=True)
    return run, curve, result.prover, result.verifier


class BECTrace:
    """Observer recording the BEC agents' outputs (Figure 2) at each logged step."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.prover: list[list[list[float | None]]] = []
        self.verifier: list[list[float]] = []

    def __call__(self, step: int, prover: nn.Module, verifier: nn.Module) -> None:
        """Record the prover's token log-probabilities per bit and the verifier's logits."""
        if not isinstance(prover, BECProver):
            raise TypeError("BECTrace observes BEC agents only")
        device = next(prover.parameters()).device
        with torch.no_grad():
            logp = torch.log_softmax(prover.logits(torch.tensor([0.0, 1.0], device=device)), -1)
            tokens = torch.eye(prover.tokens, device=device)
            logits = verifier(torch.zeros(prover.tokens, device=device), tokens)
        self.steps.append(step)
        self.prover.append(
            [[None if math.isinf(v) else round(v, 4) for v in row] for row in logp.tolist()]
        )
        self.verifier.append([round(v, 4) for v in logits.tolist()])

    def rows(self, metrics: list[Metrics]) -> dict[str, Any]:
        """The trace with the verifier's accuracy per logged step."""
        accuracy = {int(m["step"]): m["sampled_verifier_accuracy"] for m in metrics}
        return {
            "steps": self.steps,
            "prover_logprobs": self.prover,
            "verifier_logits": self.verifier,
            "verifier_accuracy": [accuracy.get(s) for s in self.steps],
        }


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean, standard deviation, min and max over seeds per (training, attack, quantity)."""
    rows = []
    for training in TRAININGS:
        for attack in ALL_ATTACKS:
            for quantity in ("precision", "recall", "specificity"):
                values = [
                    r["attacks"][attack][quantity]
                    for r in runs
                    if r["training"] == training and attack in r["attacks"]
                ]
                if not values:
                    continue
                rows.append(
                    {
                        "training": training,
                        "attack": attack,
                        "quantity": quantity,
                        "mean": statistics.fmean(values),
                        "std": statistics.pstdev(values),
                        "min": min(values),
                        "max": max(values),
                        "seeds": len(values),
                    }
                )
    return rows


def _table_run(
    task: Any,
    training: str,
    seed: int,
    result: TrainResult,
    stress: StressConfig,
    max_memory_gb: float,
) -> dict[str, Any]:
    """Attack the final (or selected) verifier on a fresh batch with fresh attack seeds."""
    tick = time.perf_counter()
    attacks = _held_out_attacks(task, seed, result.verifier, result.prover, stress, max_memory_gb)
    return {
        "training": training,
        "seed": seed,
        "steps": result.steps,
        "train_seconds": round(result.train_seconds, 2),
        "seconds": round(result.seconds, 2),
        "sound_at": result.sound_at,
        "sound_seconds": result.sound_seconds,
        "best_step": result.best_step,
        "best_accuracy": result.best_accuracy,
        "verifier_accuracy": result.verifier_accuracy,
        "stress_seconds": round(time.perf_counter() - tick, 2),
        "attacks": attacks,
    }


def _held_out_attacks(
    task: Any,
    seed: int,
    verifier: nn.Module,
    prover: nn.Module,
    stress: StressConfig,
    max_memory_gb: float,
    attacks: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The attacks (default: all the task supports) on a fresh batch with fresh seeds."""
    held_out = replace(stress, seed=10_000 + seed)
    chosen = supported_attacks(task) if attacks is None else attacks
    results: dict[str, AttackResult] = stress_test(
        task, verifier, prover, chosen, held_out, max_memory_gb
    )
    return {name: r.to_dict(top=1) for name, r in results.items()}


__all__ = ["BECTrace", "reproduce", "summarize"]
