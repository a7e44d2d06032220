"""Saving and restoring trained Prover-Verifier Game agents.

A checkpoint folder holds ``agents.pt`` (both state dicts, the task's name and
constructor arguments, the training configuration), ``config.json`` (the same settings,
readable) and, written by training, ``metrics.jsonl`` and (with
``TrainConfig.checkpoint_every``) ``state.pt``, from which training resumes exactly.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .config import TrainConfig, resolve_device
from .registry import make_task
from .task import PVGTask

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
    path = checkpoint_file(path)
    payload = torch.load(path, map_location=resolve_device(device), weights_only=True)
    if payload.get("format") != FORMAT:
        raise ValueError(f"{path}: not a proofgames PVG checkpoint (format {FORMAT})")
    agents = {"prover": payload["prover"], "verifier": payload["verifier"]}
    task_args = payload.get("task_args", {})
    return _rebuild(payload["task"], task_args, agents, payload["config"], device)


def _rebuild(
    name: str,
    task_args: dict[str, Any],
    agents: dict[str, Any],
    config: dict[str, Any],
    device: str,
) -> Checkpoint:
    """The task (from the registry), both agents in evaluation mode, and the settings."""
    target = resolve_device(device)
    task = make_task(name, **task_args)
    prover, verifier = task.make_prover().to(target), task.make_verifier().to(target)
    prover.load_state_dict(agents["prover"])
    verifier.load_state_dict(agents["verifier"])
    return Checkpoint(task, prover.eval(), verifier.eval(), TrainConfig.from_dict(config))


STATE_FILE = "state.pt"


@dataclass
class TrainingState:
    """Everything :func:`~proofgames.pvg.train.train` needs to continue a run exactly.

    Written to ``state.pt`` in the run's folder (see ``TrainConfig.checkpoint_every``);
    training resumed from it on CPU plays the same game steps, bit for bit, as a run that
    was never interrupted.

    Attributes:
        task: the task's registered name.
        task_args: its constructor arguments.
        config: the run's :class:`~proofgames.pvg.config.TrainConfig` as a dict.
        step: game steps played.
        prover_steps: current prover updates per game step (adaptive).
        streak: game steps in a row above the adaptive threshold.
        agents: the *current* state dicts, ``{"prover": ..., "verifier": ...}`` (not
            the kept best ones).
        optimizers: the two Adam state dicts, same keys.
        rng: generator states: ``"data"`` (instances), ``"torch"`` (weights init and
            Gumbel noise) and, on CUDA, ``"cuda"``.
        best: with ``keep_best``, ``{"score", "step", "prover", "verifier"}`` so far.
        sound_at: first sound step so far, if any.
        sound_seconds: training seconds up to it.
        train_seconds: training seconds so far, stress tests excluded.
        seconds: wall seconds so far.
    """

    task: str
    task_args: dict[str, Any]
    config: dict[str, Any]
    step: int
    prover_steps: int
    streak: int
    agents: dict[str, Any]
    optimizers: dict[str, Any]
    rng: dict[str, Any]
    best: dict[str, Any] | None
    sound_at: int | None
    sound_seconds: float | None
    train_seconds: float
    seconds: float


def save_training_state(out_dir: Path, state: TrainingState) -> Path:
    """Write ``state`` to ``out_dir/state.pt`` atomically; return the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / STATE_FILE
    partial = path.with_suffix(".pt.partial")
    torch.save({"format": FORMAT, **asdict(state)}, partial)
    os.replace(partial, path)
    return path


def load_training_state(path: str | Path, device: str = "cpu") -> TrainingState:
    """Read a :class:`TrainingState` from ``state.pt`` or the run folder holding it.

    Raises:
        FileNotFoundError: no training state there (the run was not saved with
            ``checkpoint_every`` or has not reached its first save).
        ValueError: the file is not a proofgames training state.
    """
    path = Path(path)
    if path.is_dir():
        path = path / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"no PVG training state at {path} (train with checkpoint_every > 0 to write one)"
        )
    payload = torch.load(path, map_location=device, weights_only=True)
    if not isinstance(payload, dict) or payload.pop("format", None) != FORMAT:
        raise ValueError(f"{path}: not a proofgames PVG training state (format {FORMAT})")
    names = {f.name for f in fields(TrainingState)}
    if set(payload) != names:
        raise ValueError(f"{path}: training state fields {sorted(payload)} != {sorted(names)}")
    return TrainingState(**payload)


def load_training_agents(path: str | Path, device: str = "auto") -> tuple[Checkpoint, int]:
    """The *current* agents of a run's training state, and the game step they reached.

    For a run still training (or interrupted): its ``agents.pt`` is written only at the
    end, while ``state.pt`` (see :class:`TrainingState`) is saved as it goes.
    """
    state = load_training_state(path)
    checkpoint = _rebuild(state.task, state.task_args, state.agents, state.config, device)
    return checkpoint, state.step
