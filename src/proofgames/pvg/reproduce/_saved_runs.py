"""A reproduction's saved runs: what ``reproduce(..., resume=True)`` reuses.

Private to :mod:`proofgames.pvg.reproduce.reproduce`. :func:`check_saved_runs` inspects every saved
result a call would reuse, continue or replace before the call does any work, so that a
reproduction resumed with other settings is refused before it trains (and overwrites)
anything, and one started afresh does not silently replace an interrupted one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from torch import nn

from ...errors import PVGError
from .._bookkeeping import changed_settings, check_resumable, logged_rows
from .._files import read_json, remove_run, run_files
from ..checkpoint import STATE_FILE, load_checkpoint, load_training_state
from ..config import TrainConfig
from ..stress import Metrics
from ..tasks.find_the_plus import FindThePlus
from .profiles import Profile

#: A finished FindThePlus run's measurements, written into its folder.
RUN_FILE = "run.json"
#: The BEC results of a reproduction, in its runs folder.
BEC_FILE = "bec.json"
#: One seed's BEC results, saved as soon as that seed finishes: an interrupted
#: reproduction keeps them, and ``--resume`` reuses them.
BEC_SEED_FILE = "bec-s{seed}.json"


def saved_run(out_dir: Path) -> dict[str, Any] | None:
    """The content of ``out_dir/run.json`` if there is one, checked for its shape.

    Raises:
        PVGError: unreadable, or not the record of a finished run.
    """
    path = out_dir / RUN_FILE
    if not path.exists():
        return None
    saved = read_json(path, "saved run")
    needed = {"task_args": dict, "config": dict, "run": dict, "curve": dict}
    if not isinstance(saved, dict) or any(
        not isinstance(saved.get(k), kind) for k, kind in needed.items()
    ):
        raise PVGError(f"saved run {path} is not a run record (keys {sorted(needed)})")
    return saved


def check_run(out_dir: Path, task: FindThePlus, config: TrainConfig) -> None:
    """Refuse a saved run in ``out_dir`` that ``config`` can neither reuse nor continue.

    Raises:
        PVGError: naming the folder and the settings that differ, or the unreadable file.
    """
    saved = saved_run(out_dir)
    if saved is not None:
        try:
            changes = changed_settings(task.name, saved["task_args"], saved["config"], task, config)
        except (PVGError, TypeError) as exc:
            raise PVGError(f"{out_dir / RUN_FILE}: unusable saved settings ({exc})") from None
        if changes:
            raise PVGError(
                f"{out_dir} holds a run with other settings than this reproduction's "
                f"({'; '.join(changes)}); use another output folder or remove it"
            )
        if saved["config"].get("steps") == config.steps:
            load_checkpoint(out_dir, device="cpu")  # readable and whole
            return
        if not (out_dir / STATE_FILE).is_file():
            raise PVGError(f"{out_dir} holds a shorter run without {STATE_FILE} to extend")
    if (out_dir / STATE_FILE).is_file():
        state = load_training_state(out_dir)
        check_resumable(task, config, state)
        logged_rows(out_dir, state.step)


def finished_run(
    out_dir: Path | None, task: FindThePlus, config: TrainConfig
) -> tuple[dict[str, Any], dict[str, Any], nn.Module, nn.Module] | None:
    """The saved measurements and agents of a finished run with ``config``, if any.

    The run must have passed :func:`check_run` (``reproduce`` checks every run first).
    """
    if out_dir is None:
        return None
    saved = saved_run(out_dir)
    if saved is None:
        return None
    if saved["config"]["steps"] != config.steps:  # the same run, to train for more steps
        return None
    checkpoint = load_checkpoint(out_dir, device=config.device)
    run = {**saved["run"], "carried_over": True}
    return run, saved["curve"], checkpoint.prover, checkpoint.verifier


def bec_key(prof: Profile, seeds: Sequence[int]) -> dict[str, Any]:
    """What BEC results depend on: the profile and the seeds."""
    return {"profile": asdict(prof), "seeds": list(seeds)}


def _read_bec(path: Path) -> dict[str, Any]:
    saved = read_json(path, "saved BEC results")
    if not isinstance(saved, dict) or not isinstance(saved.get("bec"), dict):
        raise PVGError(f"saved BEC results {path} are not a reproduction's {BEC_FILE}")
    return saved


def _bec_seed_files(runs_dir: Path) -> list[Path]:
    return sorted(runs_dir.glob(BEC_SEED_FILE.format(seed="*")))


def _read_bec_seed(path: Path) -> dict[str, Any]:
    saved = read_json(path, "saved BEC results of one seed")
    if not isinstance(saved, dict) or not isinstance(saved.get("seed_results"), dict):
        raise PVGError(f"saved BEC results {path} are not a reproduction's {BEC_SEED_FILE}")
    return saved


def saved_bec_seed(runs_dir: Path, prof: Profile, seed: int) -> dict[str, Any] | None:
    """One seed's BEC results of an earlier call with the same profile, if saved."""
    path = runs_dir / BEC_SEED_FILE.format(seed=seed)
    if not path.is_file():
        return None
    saved = _read_bec_seed(path)
    key = json.loads(json.dumps({"profile": asdict(prof), "seed": seed}))
    results: dict[str, Any] = saved["seed_results"]
    return results if {k: saved.get(k) for k in key} == key else None


def check_bec(runs_dir: Path, prof: Profile) -> None:
    """Refuse saved BEC results of another profile (other seeds are run again)."""
    profile = json.loads(json.dumps(asdict(prof)))
    for path in [runs_dir / BEC_FILE, *_bec_seed_files(runs_dir)]:
        if path.exists():
            read = _read_bec if path.name == BEC_FILE else _read_bec_seed
            _same_profile(path, read(path).get("profile"), profile, prof)


def _same_profile(path: Path, before: Any, profile: dict[str, Any], prof: Profile) -> None:
    if before != profile:
        name = before.get("name") if isinstance(before, dict) else None
        raise PVGError(
            f"{path} holds the BEC results of another profile ({name!r}, not {prof.name!r} "
            "with this call's settings); use another output folder, or start afresh "
            "with --overwrite (overwrite=True)"
        )


def saved_bec(runs_dir: Path | None, prof: Profile, seeds: Sequence[int]) -> dict[str, Any] | None:
    """The BEC results of an earlier call with the same profile and seeds, if saved."""
    path = None if runs_dir is None else runs_dir / BEC_FILE
    if path is None or not path.is_file():
        return None
    saved = _read_bec(path)
    key = json.loads(json.dumps(bec_key(prof, seeds)))
    bec: dict[str, Any] = saved["bec"]
    return bec if {k: saved.get(k) for k in key} == key else None


def earlier_results(runs_dir: Path, folders: Sequence[Path], bec: bool) -> list[Path]:
    """What an earlier reproduction left that this call would write over."""
    found = [folder for folder in folders if run_files(folder)]
    if bec:
        saved = [runs_dir / BEC_FILE] if (runs_dir / BEC_FILE).exists() else []
        found[:0] = saved + _bec_seed_files(runs_dir)
    return found


def remove_results(paths: Sequence[Path]) -> None:
    """Remove saved results (``bec*.json``) and run folders' run files (``overwrite``)."""
    for path in paths:
        if path.is_dir():
            remove_run(path)
        else:
            path.unlink()


def refuse_mixing(runs_dir: Path, found: Sequence[Path]) -> None:
    """Refuse to start afresh over an earlier reproduction's results."""
    shown = ", ".join(str(p.relative_to(runs_dir)) for p in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    raise PVGError(
        f"{runs_dir} holds the results of an earlier reproduction ({shown}{more}): "
        "continue it with --resume (resume=True), or replace it with --overwrite "
        "(overwrite=True)"
    )


#: The logged series a reproduction keeps of each run for its learning figure.
CURVE_KEYS = (
    "step",
    "seconds",
    "prover_steps",
    "verifier_accuracy",
    "sampled_verifier_accuracy",
    "precision",
    "recall",
    "erasure_fraction",
    "sampled_erasure_fraction",
    "sampled_information_bits",
    "messages_precision",
    "messages_recall",
    "messages_accuracy",
    "messages_specificity",
    "exhaustive_precision",
    "exhaustive_recall",
    "exhaustive_specificity",
    "pointing_error_px",
    "on_plus",
    "detector_centre",
    "detector_arms",
    "readout_bias",
    "prover_centre_missing",
    "attack_centre_missing",
)


def logged_curve(metrics: list[Metrics]) -> dict[str, list[float | None]]:
    """The logged series worth plotting, one list per metric present in the log."""
    present = [key for key in CURVE_KEYS if any(key in m for m in metrics)]
    return {key: [m.get(key) for m in metrics] for key in present}
