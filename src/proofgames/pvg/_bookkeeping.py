"""A training run's bookkeeping: its counters, saved state, resumption and logs.

Private to :mod:`proofgames.pvg.train`.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PVGError
from ..reporting import dumps, write_atomic
from ..reporting.reading import DATA_LIMIT, ReadError, read_json_lines
from ._game import Game
from .checkpoint import TrainingState, save_training_state
from .config import TrainConfig
from .registry import make_task
from .stress import Metrics
from .task import PVGTask

#: ``TrainConfig`` fields a resumed run may change: none alters the game's rules (``device``
#: and ``precision`` change its arithmetic: such a run is not bit-identical to one that kept them).
RESUMABLE_CHANGES = frozenset(
    {
        "steps",
        "device",
        "precision",
        "out_dir",
        "progress",
        "checkpoint_every",
        "tensorboard",
        "max_memory_gb",
    }
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
    saved, given = asdict(TrainConfig.from_dict(saved_config)), asdict(config)  # every field
    changes += [
        f"{k}: saved {saved[k]!r}, given {given[k]!r}"
        for k in sorted(saved)
        if saved[k] != given[k] and k not in RESUMABLE_CHANGES
    ]
    return changes


def check_resumable(task: PVGTask, config: TrainConfig, state: TrainingState) -> None:
    """Refuse (``PVGError``) a ``config`` on ``task`` that does not continue the saved run."""
    changes = changed_settings(state.task, state.task_args, state.config, task, config)
    if changes:
        raise PVGError(f"cannot resume: {'; '.join(changes)}")
    if config.steps < state.step:
        raise PVGError(
            f"the saved run has played {state.step} game steps; resume with steps >= "
            f"{state.step} (got {config.steps})"
        )


def logged_rows(resume: Path, step: int) -> list[Metrics]:
    """The metric rows a resumed run logged up to ``step`` (none if it has no log).

    The log is read as :func:`proofgames.reporting.reading.read_json_lines` reads a file:
    a regular file only (a FIFO is refused, never read), size-capped, UTF-8, each line
    strict JSON.  Text after the last newline that does not parse (the run was killed
    while appending that line) is dropped: it was logged after ``step``, since the
    training state is saved after its step's row.

    Raises:
        PVGError: the log cannot be read, or a line is not a metric row (an object whose
            ``"step"`` is an integer), naming the file and the line.
    """
    folder = resume if resume.is_dir() else resume.parent
    path = folder / METRICS_FILE
    if not path.exists():
        return []
    try:
        lines = read_json_lines(path, "the metric log", DATA_LIMIT, torn_tail=True)
    except ReadError as exc:
        raise PVGError(str(exc)) from None
    rows = []
    for number, row in lines:
        if not isinstance(row, dict) or type(row.get("step")) is not int:
            raise PVGError(f"{path} line {number} is not a metric row (a damaged log)")
        rows.append(row)
    return [row for row in rows if row["step"] <= step]


def open_tensorboard(config: TrainConfig, step: int) -> Any:
    """A TensorBoard writer, or ``None``; on resuming, events after ``step`` are purged."""
    if not config.tensorboard:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise PVGError(
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


#: The metric log in a run's folder: one JSON row per logged step.
METRICS_FILE = "metrics.jsonl"


class MetricLog:
    """``metrics.jsonl``: rows kept from before (written atomically), then appended.

    Rewriting the whole log for every row would cost time quadratic in its length, so
    each new row is appended with a single ``write`` of the whole line instead: a run
    killed at any moment leaves whole rows, and at worst a last line cut short, which
    :func:`logged_rows` drops on resuming. Rows are strict JSON (see
    :func:`~proofgames.reporting.dumps`: a non-finite number is ``null``).
    """

    def __init__(self, path: Path, rows: list[Metrics]) -> None:
        write_atomic(path, "".join(dumps(row) + "\n" for row in rows), parents=True)
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND)

    def append(self, row: Metrics) -> None:
        """Add ``row`` to the log."""
        os.write(self.fd, (dumps(row) + "\n").encode())

    def close(self) -> None:
        """Close the log."""
        os.close(self.fd)


def open_log(config: TrainConfig, previous: list[Metrics]) -> MetricLog | None:
    """The metric log (``None`` without ``out_dir``), after ``previous`` (a resumed run's)."""
    if config.out_dir is None:
        return None
    return MetricLog(Path(config.out_dir) / METRICS_FILE, previous)
