"""Saving and restoring trained Prover-Verifier Game agents.

A checkpoint folder holds ``agents.pt`` (both state dicts, the task's name and
constructor arguments, the training configuration), ``config.json`` (the same settings,
readable) and, written by training, ``metrics.jsonl`` and (with
``TrainConfig.checkpoint_every``) ``state.pt``, from which training resumes exactly.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..errors import ProofgamesError, PVGError
from ..reporting import save_with, write_json
from ..reporting.reading import CHECKPOINT_LIMIT, NoSuchFileError, ReadError, open_regular
from ._files import MissingFileError
from .config import TrainConfig, resolve_device
from .registry import make_task
from .task import PVGTask

FORMAT = 1
#: The keys of ``agents.pt``.
AGENT_KEYS = frozenset({"format", "task", "task_args", "config", "prover", "verifier"})
#: The resumable training state in a run's folder.
STATE_FILE = "state.pt"


def first_line(exc: BaseException, limit: int = 160) -> str:
    """The first line of ``exc``'s message (its type if it has none), at most ``limit`` long."""
    line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


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
    """Write ``agents.pt`` and ``config.json`` into ``out_dir``; return the ``agents.pt`` path.

    Each file is written atomically: a failed write leaves the previous one whole.
    """
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
    save_with(path, lambda partial: torch.save(payload, partial), parents=True)
    readable = {"task": task.name, "task_args": task_args, **config.to_dict()}
    write_json(out_dir / "config.json", readable, indent=2, parents=True)
    return path


def checkpoint_file(path: str | Path) -> Path:
    """``path`` itself, or ``path/agents.pt`` for a run folder; it must exist.

    Raises:
        MissingFileError: (a ``FileNotFoundError`` and a ``PVGError``) no checkpoint file
            there.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "agents.pt"
    if not path.is_file():
        hint = ""
        if (path.parent / STATE_FILE).is_file():
            hint = f" (the run has not finished: {path.parent / STATE_FILE} holds its agents)"
        raise MissingFileError(f"no PVG checkpoint at {path}{hint}")
    return path


def load_checkpoint(path: str | Path, device: str = "auto") -> Checkpoint:
    """Rebuild the task (from the registry) and both agents saved by :func:`save_checkpoint`.

    ``path`` is ``agents.pt`` or the folder holding it (a training run's ``out_dir``).

    Raises:
        MissingFileError: no checkpoint there.
        PVGError: the file is empty, truncated or corrupt, is not a PVG checkpoint, or
            holds agents that do not fit its task; or ``device`` is unusable.
    """
    path = checkpoint_file(path)
    payload = read_torch(path, "checkpoint", resolve_device(device))
    if payload.get("format") != FORMAT or not set(payload) >= AGENT_KEYS:
        if payload.get("format") == FORMAT and set(payload) >= {"step", "optimizers"}:
            raise PVGError(
                f"{path} is a PVG training state ({STATE_FILE}), not a checkpoint "
                f"(agents.pt): pass its folder to pvg diagnose, or --resume it"
            )
        raise PVGError(
            f"{path} is not a PVG checkpoint (format {FORMAT}, keys {sorted(AGENT_KEYS)})"
        )
    agents = {"prover": payload["prover"], "verifier": payload["verifier"]}
    return _rebuild(path, payload["task"], payload["task_args"], agents, payload["config"], device)


def read_torch(path: Path, what: str, device: torch.device | str = "cpu") -> dict[str, Any]:
    """The dict saved in ``path`` by ``torch.save`` (tensors only: no code is run).

    The file is checked first: a regular file (a FIFO or a device is refused without being
    read) of at most :data:`~proofgames.reporting.reading.CHECKPOINT_LIMIT` bytes, and not
    empty; ``torch.load`` reads the file opened by that check.

    Raises:
        MissingFileError: there is no such file.
        PVGError: the file is not a regular file, too large, empty, truncated, corrupt or
            not a saved dict.
    """
    try:
        with open_regular(path, f"the PVG {what}", CHECKPOINT_LIMIT) as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise PVGError(f"{path} is empty, not a PVG {what}")
            payload = torch.load(f, map_location=device, weights_only=True)
    except NoSuchFileError as exc:
        raise MissingFileError(str(exc)) from None
    except ReadError as exc:
        raise PVGError(str(exc)) from None
    except PVGError:
        raise
    except EOFError:
        raise PVGError(f"{path} is truncated, not a whole PVG {what}") from None
    except OSError as exc:
        raise PVGError(f"cannot read the PVG {what} {path}: {exc.strerror or exc}") from None
    except pickle.UnpicklingError:
        raise PVGError(
            f"{path} is not a PVG {what}: not a file written by torch.save (or one that "
            "would run code to load, which is refused)"
        ) from None
    except Exception as exc:  # torch.load fails in many ways on foreign or damaged files
        problem = "not a whole archive" if "zip archive" in str(exc) else first_line(exc)
        raise PVGError(f"{path} is truncated or corrupt ({problem}), not a PVG {what}") from None
    if not isinstance(payload, dict):
        raise PVGError(f"{path} holds a {type(payload).__name__}, not a PVG {what}")
    return payload


def _rebuild(
    path: Path,
    name: str,
    task_args: dict[str, Any],
    agents: dict[str, Any],
    config: dict[str, Any],
    device: str,
) -> Checkpoint:
    """The task (from the registry), both agents in evaluation mode, and the settings.

    Raises:
        PVGError: naming ``path``, when the saved task, settings or weights do not fit.
    """
    target = resolve_device(device)
    try:
        task = make_task(name, **task_args)
        settings = TrainConfig.from_dict(config)
    except (ProofgamesError, TypeError, AttributeError) as exc:
        raise PVGError(f"{path}: the saved task or settings are unusable ({exc})") from None
    prover, verifier = task.make_prover().to(target), task.make_verifier().to(target)
    for role, agent in (("prover", prover), ("verifier", verifier)):
        try:
            agent.load_state_dict(agents[role])
        except (RuntimeError, TypeError, AttributeError, KeyError) as exc:
            raise PVGError(
                f"{path}: the saved {role} does not fit a {name} {role} ({first_line(exc)})"
            ) from None
    return Checkpoint(task, prover.eval(), verifier.eval(), settings)


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
    path = out_dir / STATE_FILE
    payload = {"format": FORMAT, **asdict(state)}
    save_with(path, lambda partial: torch.save(payload, partial), parents=True)
    return path


def load_training_state(path: str | Path, device: str = "cpu") -> TrainingState:
    """Read a :class:`TrainingState` from ``state.pt`` or the run folder holding it.

    Raises:
        MissingFileError: (a ``FileNotFoundError`` and a ``PVGError``) no training state
            there (the run was not saved with ``checkpoint_every`` or has not reached its
            first save).
        PVGError: the file is empty, truncated or corrupt, or not a PVG training state.
    """
    path = Path(path)
    if path.is_dir():
        path = path / STATE_FILE
    if not path.is_file():
        raise MissingFileError(
            f"no PVG training state at {path} (train with checkpoint_every > 0 to write one)"
        )
    payload = read_torch(path, "training state", device)
    if payload.pop("format", None) != FORMAT:
        raise PVGError(f"{path} is not a PVG training state (format {FORMAT})")
    names = {f.name for f in fields(TrainingState)}
    if set(payload) != names:
        if AGENT_KEYS - {"format"} <= set(payload):
            raise PVGError(f"{path} holds a checkpoint (agents.pt), not a training state")
        raise PVGError(f"{path}: training state fields {sorted(payload)} != {sorted(names)}")
    state = TrainingState(**payload)
    if not (isinstance(state.step, int) and isinstance(state.config, dict)):
        raise PVGError(f"{path}: malformed training state (step {state.step!r})")
    return state


def load_run_agents(path: str | Path, device: str = "auto") -> tuple[Checkpoint, str]:
    """A finished run's agents (``agents.pt``), or an unfinished one's current agents.

    ``path`` is ``agents.pt``, or a run folder: its ``agents.pt`` if it has one, else its
    :data:`STATE_FILE`. Returns the agents and where they came from (with the game step,
    for a training state).

    Raises:
        MissingFileError: neither file there.
        PVGError: as :func:`load_checkpoint` or :func:`load_training_agents`.
    """
    path = Path(path)
    if path.is_dir() and not (path / "agents.pt").is_file() and (path / STATE_FILE).is_file():
        saved, step = load_training_agents(path, device)
        return saved, f"{path / STATE_FILE} (step {step})"
    saved = load_checkpoint(path, device)
    return saved, str(path / "agents.pt" if path.is_dir() else path)


def load_training_agents(path: str | Path, device: str = "auto") -> tuple[Checkpoint, int]:
    """The *current* agents of a run's training state, and the game step they reached.

    For a run still training (or interrupted): its ``agents.pt`` is written only at the
    end, while ``state.pt`` (see :class:`TrainingState`) is saved as it goes.

    Raises:
        MissingFileError: no training state there.
        PVGError: an unreadable training state, or agents that do not fit its task.
    """
    path = Path(path)
    state = load_training_state(path)
    source = path / STATE_FILE if path.is_dir() else path
    agents = state.agents if isinstance(state.agents, dict) else {}
    checkpoint = _rebuild(source, state.task, state.task_args, agents, state.config, device)
    return checkpoint, state.step
