"""What a reproduction will run, checked before it runs anything.

Private to :mod:`proofgames.pvg.reproduce.reproduce`: the settings of its BEC and FindThePlus runs,
and the checks of a call (arguments, every run's settings and memory, the saved results
in its runs folder) that come before any work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import PVGError
from .._memory import check_limit
from ..config import TrainConfig, resolve_device
from ..registry import task_defaults
from ..stress import check_stress_memory, supported_attacks
from ..tasks.bec import BinaryErasureChannel
from ..train import check_training
from ._saved_runs import check_bec, check_run, earlier_results, refuse_mixing, remove_results
from .profiles import Profile


def check_call(
    seeds: Sequence[int],
    prof: Profile,
    tasks: Sequence[str],
    device: str,
    workers: int,
    max_memory_gb: float,
) -> None:
    """Refuse a call that cannot go through: its arguments and every run's settings."""
    unknown = [t for t in tasks if t not in ("bec", "find-the-plus")]
    if unknown or not seeds:
        raise PVGError(f"unknown task(s) {unknown}" if unknown else "no seeds given")
    if workers < 1:
        raise PVGError(f"workers must be positive, got {workers}")
    resolve_device(device)
    check_limit(max_memory_gb)
    if "bec" in tasks:
        task = BinaryErasureChannel()
        check_training(task, bec_config(prof, seeds[0], device, False, max_memory_gb))
        check_stress_memory(task, supported_attacks(task), prof.stress, max_memory_gb, "stress.")
    if "find-the-plus" in tasks:
        ftp = prof.ftp_task_instance()
        for _, formulation, steps in ftp_trainings(prof):
            config = ftp_config(prof, seeds[0], formulation, steps, device, False, None)
            check_training(ftp, replace(config, max_memory_gb=max_memory_gb))
        stress = prof.ftp_stress
        check_stress_memory(ftp, supported_attacks(ftp), stress, max_memory_gb, "ftp_stress.")


def prepare_runs_dir(
    runs_dir: Path,
    seeds: Sequence[int],
    prof: Profile,
    tasks: Sequence[str],
    resume: bool,
    overwrite: bool,
) -> None:
    """Check every saved result this call would reuse, continue or replace (``overwrite``)."""
    if resume and overwrite:
        raise PVGError("--resume continues the saved runs and --overwrite removes them: not both")
    folders = []
    if "find-the-plus" in tasks:
        folders = [
            (runs_dir / f"find-the-plus-{training}-s{seed}", seed, formulation, steps)
            for seed in seeds
            for training, formulation, steps in ftp_trainings(prof)
        ]
    if not resume:
        found = earlier_results(runs_dir, [f[0] for f in folders], "bec" in tasks)
        if found and not overwrite:
            refuse_mixing(runs_dir, found)
        remove_results(found)
        return
    if "bec" in tasks:
        check_bec(runs_dir, prof)
    task = prof.ftp_task_instance()
    for folder, seed, formulation, steps in folders:
        config = ftp_config(prof, seed, formulation, steps, "cpu", False, folder)
        check_run(folder, task, config)


def bec_config(
    prof: Profile, seed: int, device: str, progress: bool, max_memory_gb: float
) -> TrainConfig:
    """The BEC run of Table 2: simultaneous play until sound (stress tests every 10)."""
    settings: dict[str, Any] = {**task_defaults("bec"), "steps": prof.bec_max_steps}
    return TrainConfig(
        **settings,
        seed=seed,
        device=device,
        eval_size=prof.eval_size,
        progress=progress,
        log_every=10,
        stress_every=10,
        stop_when_sound=True,
        stress=replace(prof.stress, seed=seed),
        max_memory_gb=max_memory_gb,
    )


def ftp_trainings(prof: Profile) -> list[tuple[str, str, int]]:
    """``(training, formulation, steps)`` of each FindThePlus run of a seed."""
    return [
        ("pvg", "simultaneous", prof.ftp_settings()["steps"]),
        ("collaborative", "collaborative", prof.ftp_baseline_steps),
    ]


#: Game steps between a reproduction run's saved training states, at most: a machine
#: lost without warning (no SIGTERM) costs a run at most this many steps (about 5 min of
#: a long run's late steps on a shared core). Saving is cheap (about 2 MB).
SAVE_EVERY = 50


def ftp_config(
    prof: Profile,
    seed: int,
    formulation: str,
    steps: int,
    device: str,
    progress: bool,
    out_dir: Path | None,
) -> TrainConfig:
    """The settings of one FindThePlus run (model selection by the messages attack).

    With ``out_dir`` the run saves its training state every :data:`SAVE_EVERY` game
    steps or at every stress test, whichever is more often.
    """
    return TrainConfig(
        **{**prof.ftp_settings(), "steps": steps},
        formulation=formulation,
        seed=seed,
        device=device,
        eval_size=prof.eval_size,
        log_every=10,
        stress_every=prof.ftp_stress_every,
        stress_attacks=prof.ftp_selection_attacks,
        keep_best="messages",
        stress=replace(prof.ftp_selection_stress, seed=seed),
        out_dir=None if out_dir is None else str(out_dir),
        checkpoint_every=0 if out_dir is None else min(prof.ftp_stress_every, SAVE_EVERY),
        progress=progress,
    )
