"""A training run's bookkeeping: its counters, saved state, resumption and logs.

Private to :mod:`proofgames.pvg.train`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ._game import Game
from .checkpoint import TrainingState, save_training_state
from .config import TrainConfig
from .registry import make_task
from .stress import Metrics
from .task import PVGTask

#: ``TrainConfig`` fields a resumed run may change: none of them alters the game played.
RESUMABLE_CHANGES = frozenset(
    {"steps", "device", "out_dir", "progress", "checkpoint_every", "tensorboard"}
)


@dataclass
class RunRecord:
    """What a run has accumulated besides the agents: counters, best agents, timings."""

    step: int = 0
    streak: int = 0
    best: dict[str, Any] | None = None
    sound_at: int | None = None
    sound_seconds: float | None = None
    train_seconds_before: float = 0.0
    seconds_before: float = 0.0
    metrics: list[Metrics] = field(default_factory=list)

    @classmethod
    def from_state(cls, state: TrainingState, metrics: list[Metrics]) -> RunRecord:
        """The record of a saved run, with the metric rows it logged up to its step."""
        return cls(
            step=state.step,
            streak=state.streak,
            best=state.best,
            sound_at=state.sound_at,
            sound_seconds=state.sound_seconds,
            train_seconds_before=state.train_seconds,
            seconds_before=state.seconds,
            metrics=metrics,
        )

    def train_seconds(self, start: float, stress_seconds: float) -> float:
        """Training seconds of the whole run so far, stress tests excluded."""
        return self.train_seconds_before + time.perf_counter() - start - stress_seconds


def save_state(
    task: PVGTask,
    config: TrainConfig,
    game: Game,
    run: RunRecord,
    step: int,
    prover_steps: int,
    start: float,
    stress_seconds: float,
) -> None:
    """Write the run's :class:`TrainingState` after game step ``step`` to ``out_dir``."""
    assert config.out_dir is not None  # validate() insists
    agents, optimizers, rng = game.snapshot()
    state = TrainingState(
        task=task.name,
        task_args=task.init_args(),
        config=config.to_dict(),
        step=step,
        prover_steps=prover_steps,
        streak=run.streak,
        agents=agents,
        optimizers=optimizers,
        rng=rng,
        best=run.best,
        sound_at=run.sound_at,
        sound_seconds=run.sound_seconds,
        train_seconds=run.train_seconds(start, stress_seconds),
        seconds=run.seconds_before + time.perf_counter() - start,
    )
    save_training_state(Path(config.out_dir), state)


def changed_settings(
    saved_task: str,
    saved_args: dict[str, Any],
    saved_config: dict[str, Any],
    task: PVGTask,
    config: TrainConfig,
) -> list[str]:
    """How a saved run's settings differ from ``task`` under ``config``.

    Settings added since the save take their defaults; :data:`RESUMABLE_CHANGES` do not
    count. Shared by :func:`check_resumable` and ``reproduce(..., resume=True)``.
    """
    changes = []
    before = make_task(saved_task, **saved_args).init_args()
    if (saved_task, before) != (task.name, task.init_args()):
        changes.append(
            f"the saved run played {saved_task} with {before}, "
            f"not {task.name} with {task.init_args()}"
        )
    saved, given = TrainConfig.from_dict(saved_config).to_dict(), config.to_dict()
    changes += [
        f"{k}: saved {saved[k]!r}, given {given[k]!r}"
        for k in sorted(saved)
        if saved[k] != given[k] and k not in RESUMABLE_CHANGES
    ]
    return changes


def check_resumable(task: PVGTask, config: TrainConfig, state: TrainingState) -> None:
    """Raise ``ValueError`` unless ``config`` on ``task`` continues the saved run."""
    changes = changed_settings(state.task, state.task_args, state.config, task, config)
    if changes:
        raise ValueError(f"cannot resume: {'; '.join(changes)}")
    if config.steps < state.step:
        raise ValueError(
            f"the saved run has played {state.step} game steps; resume with steps >= "
            f"{state.step} (got {config.steps})"
        )


def logged_rows(resume: Path, step: int) -> list[Metrics]:
    """The metric rows a resumed run logged up to ``step`` (none if it has no log)."""
    folder = resume if resume.is_dir() else resume.parent
    path = folder / "metrics.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["step"] <= step]


def open_tensorboard(config: TrainConfig, step: int) -> Any:
    """A TensorBoard writer, or ``None``; on resuming, events after ``step`` are purged."""
    if not config.tensorboard:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ValueError(
            "tensorboard=True needs the tensorboard package: pip install 'proofgames[tensorboard]'"
        ) from None
    log_dir = Path(str(config.out_dir)) / "tensorboard"
    return SummaryWriter(log_dir=str(log_dir), purge_step=step + 1 if step else None)


def board_row(board: Any, prefix: str, row: Metrics) -> None:
    """Every number of a metric row as a scalar at its game step."""
    for key, value in row.items():
        if key != "step" and isinstance(value, int | float) and not isinstance(value, bool):
            board.add_scalar(f"{prefix}/{key}", value, row["step"])
    board.flush()


def open_log(config: TrainConfig, previous: list[Metrics]) -> TextIO | None:
    """The metric log, opened for appending after ``previous`` (a resumed run's rows).

    The kept rows are written to a side file that then replaces the log in one step, so
    a run killed right after resuming still leaves its earlier rows on disk.
    """
    if config.out_dir is None:
        return None
    path = Path(config.out_dir) / "metrics.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".jsonl.partial")
    partial.write_text("".join(json.dumps(row) + "\n" for row in previous))
    partial.replace(path)
    return path.open("a")
