"""Saving and restoring trained Prover-Verifier Game agents.

A checkpoint folder holds ``agents.pt`` (both state dicts, the task's name and
constructor arguments, the training configuration), ``config.json`` (the same settings,
readable) and, written by training, ``metrics.jsonl``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

from .task import PVGTask

if TYPE_CHECKING:
    from .train import TrainConfig

FORMAT = 1


@dataclass
class Checkpoint:
    """Agents restored from ``agents.pt``, in evaluation mode."""

    task: PVGTask
    prover: nn.Module
    verifier: nn.Module
    config: TrainConfig


def save_checkpoint(
    out_dir: Path, task: PVGTask, prover: nn.Module, verifier: nn.Module, config: TrainConfig
) -> Path:
    """Write ``agents.pt`` and ``config.json`` into ``out_dir``; return the ``agents.pt`` path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "agents.pt"
    task_args = task.init_args()
    payload = {
        "format": FORMAT,
        "task": task.name,
        "task_args": task_args,
        "config": config.to_dict(),
        "prover": prover.state_dict(),
        "verifier": verifier.state_dict(),
    }
    torch.save(payload, path)
    readable = {"task": task.name, "task_args": task_args, **config.to_dict()}
    (out_dir / "config.json").write_text(json.dumps(readable, indent=2) + "\n")
    return path


def checkpoint_file(path: str | Path) -> Path:
    """``path`` itself, or ``path/agents.pt`` for a run folder; it must exist.

    Raises:
        FileNotFoundError: no checkpoint file there.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "agents.pt"
    if not path.is_file():
        raise FileNotFoundError(f"no PVG checkpoint at {path}")
    return path


def load_checkpoint(path: str | Path, device: str = "auto") -> Checkpoint:
    """Rebuild the task (from the registry) and both agents saved by :func:`save_checkpoint`.

    ``path`` is ``agents.pt`` or the folder holding it (a training run's ``out_dir``).
    """
    from .registry import make_task
    from .train import TrainConfig, resolve_device

    path = checkpoint_file(path)
    target = resolve_device(device)
    payload = torch.load(path, map_location=target, weights_only=True)
    if payload.get("format") != FORMAT:
        raise ValueError(f"{path}: not a proofgames PVG checkpoint (format {FORMAT})")
    task = make_task(payload["task"], **payload.get("task_args", {}))
    prover = task.make_prover().to(target)
    verifier = task.make_verifier().to(target)
    prover.load_state_dict(payload["prover"])
    verifier.load_state_dict(payload["verifier"])
    config = TrainConfig.from_dict(payload["config"])
    return Checkpoint(task, prover.eval(), verifier.eval(), config)
