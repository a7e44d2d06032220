"""A reproduction's saved runs: what ``reproduce(..., resume=True)`` reuses.

Private to :mod:`proofgames.pvg.reproduce`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from torch import nn

from ._bookkeeping import changed_settings
from .checkpoint import STATE_FILE, load_checkpoint
from .config import TrainConfig
from .find_the_plus import FindThePlus
from .profiles import Profile

#: A finished FindThePlus run's measurements, written into its folder.
RUN_FILE = "run.json"


def finished_run(
    out_dir: Path | None, task: FindThePlus, config: TrainConfig
) -> tuple[dict[str, Any], dict[str, Any], nn.Module, nn.Module] | None:
    """The saved measurements and agents of a finished run with ``config``, if any."""
    if out_dir is None or not (out_dir / RUN_FILE).is_file():
        return None
    saved = json.loads((out_dir / RUN_FILE).read_text())
    changes = changed_settings(task.name, saved["task_args"], saved["config"], task, config)
    if changes:
        raise ValueError(
            f"{out_dir} holds a run with other settings than this reproduction's "
            f"({'; '.join(changes)}); use another output folder or remove it"
        )
    if saved["config"]["steps"] != config.steps:  # the same run, to train for more steps
        if not (out_dir / STATE_FILE).is_file():
            raise ValueError(f"{out_dir} holds a shorter run without {STATE_FILE} to extend")
        return None
    checkpoint = load_checkpoint(out_dir, device=config.device)
    run = {**saved["run"], "carried_over": True}
    return run, saved["curve"], checkpoint.prover, checkpoint.verifier


def bec_key(prof: Profile, seeds: Sequence[int]) -> dict[str, Any]:
    """What BEC results depend on: the profile and the seeds."""
    return {"profile": asdict(prof), "seeds": list(seeds)}


def saved_bec(runs_dir: Path | None, prof: Profile, seeds: Sequence[int]) -> dict[str, Any] | None:
    """The BEC results of an earlier call with the same profile and seeds, if saved."""
    path = None if runs_dir is None else runs_dir / "bec.json"
    if path is None or not path.is_file():
        return None
    saved = json.loads(path.read_text())
    key = json.loads(json.dumps(bec_key(prof, seeds)))
    bec: dict[str, Any] = saved["bec"]
    return bec if {k: saved.get(k) for k in key} == key else None


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(data))
    partial.replace(path)
