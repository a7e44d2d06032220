"""One training loop for Prover-Verifier Games, every formulation in plain sight.

The verifier is trained to predict the true label from the message (cross-entropy with
optional label smoothing, which is the paper's entropy regularization); the prover is
trained to make the verifier say 1 (``-log p_v(1 | message)``), or, in the collaborative
baseline, to make it say the true label.  A *game step* is one round of the chosen
formulation:

* ``simultaneous`` -- both players learn at once, each with its own Adam. Under
  ``update="simultaneous"`` both gradients are taken at the same point on one batch, and
  extra verifier (or prover) steps repeat the joint step for that player only; under
  ``update="alternating"`` (the paper's rule, the default for FindThePlus) the prover
  takes its steps, then the verifier takes its own on fresh batches against the updated
  prover;
* ``prover-first`` -- the prover leads: before each of its updates the verifier is trained
  towards its best response; with ``best_response="closed-form"`` (BEC) the prover's
  loss is taken against the exact best response and differentiated *through* it, which is
  what makes prover-first play collapse to erasure tokens (Theorem 5); with ``"trained"``
  the leader does not anticipate the response (its gradient holds the verifier fixed);
* ``verifier-first`` -- the verifier leads: between verifier updates the prover is trained
  towards its best response; with ``best_response="closed-form"`` (FindThePlus, whose
  best response is found exactly by :mod:`~proofgames.pvg.find_the_plus.message_search`,
  and FindTheNeedle, by trying every pointer) the verifier is trained against the
  prover's exact best response instead of the trained prover's messages (the value of a
  maximum over finitely many places, whose gradient holds the maximizing messages
  fixed); the prover network still follows, for the logs and checkpoint;
* ``collaborative`` -- simultaneous play (either update rule) where the prover argues for
  the true label.

Heuristics from the paper's Appendix D are options of :class:`TrainConfig`: several
verifier steps per prover step, adaptive prover steps, prover pretraining on the task's
auxiliary losses, label smoothing.  Metrics on a fixed evaluation batch go to a JSONL log
(with the task's own figures, :meth:`~proofgames.pvg.task.PVGTask.logged_metrics`: on
FindThePlus where the prover points the plus detector; each stress test adds every
attack's precision, recall, accuracy and specificity, and the task's
:meth:`~proofgames.pvg.task.PVGTask.stress_metrics`); the agents and the configuration go
to a checkpoint.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from torch import nn

from ..errors import PVGError, TrainingStopped
from ._bookkeeping import (
    RESUMABLE_CHANGES,
    RunRecord,
    board_row,
    check_resumable,
    logged_rows,
    open_log,
    open_tensorboard,
    save_state,
)
from ._data import check_bank
from ._game import Game, use_closed_form
from ._memory import check_memory
from ._stop_signals import stop_requests
from .checkpoint import load_training_state, save_checkpoint
from .config import BEST_RESPONSES, FORMULATIONS, UPDATES, TrainConfig, resolve_device
from .stress import (
    Metrics,
    check_attacks,
    check_stress_memory,
    evaluate,
    greedy_messages,
    last_stress,
    stress_test,
)
from .task import ClosedFormResponse, PVGTask


@dataclass
class TrainResult:
    """The outcome of :func:`train`.

    Attributes:
        prover: the trained prover.
        verifier: the trained verifier.
        checkpoint: path of ``agents.pt``, if ``out_dir`` was given.
        verifier_accuracy: on the evaluation batch at the end.
        steps: game steps played.
        seconds: wall time of the run (of every call, for a resumed run).
        train_seconds: the same without the stress tests.
        sound_at: first game step where stress tests found precision = recall = 1
            against both attacks (``None`` if never or not tested).
        sound_seconds: ``train_seconds`` up to that step.
        metrics: the logged metric rows.
        best_step: with ``keep_best``, the game step whose agents were kept.
        best_accuracy: their verifier accuracy against the ``keep_best`` attack.
    """

    prover: nn.Module
    verifier: nn.Module
    checkpoint: Path | None
    verifier_accuracy: float
    steps: int
    seconds: float
    train_seconds: float
    sound_at: int | None
    sound_seconds: float | None
    metrics: list[Metrics]
    best_step: int | None = None
    best_accuracy: float | None = None

    def summary(self) -> dict[str, Any]:
        """The JSON the CLI prints."""
        return {
            "checkpoint": str(self.checkpoint) if self.checkpoint else None,
            "verifier_accuracy": self.verifier_accuracy,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "train_seconds": round(self.train_seconds, 3),
            "sound_at": self.sound_at,
            "sound_seconds": None if self.sound_seconds is None else round(self.sound_seconds, 3),
            "best_step": self.best_step,
            "best_accuracy": self.best_accuracy,
            "final": self.metrics[-1] if self.metrics else {},
            "last_stress": last_stress(self.metrics),
        }


Observer = Callable[[int, nn.Module, nn.Module], None]


def check_training(task: PVGTask, config: TrainConfig) -> torch.device:
    """Refuse, before anything is allocated, a run of ``config`` on ``task`` that cannot go.

    Checks the settings, the device, the stress attacks, the exact follower a
    formulation asks for and the estimated memory of the largest batch (see
    ``TrainConfig.max_memory_gb``).

    Returns:
        The device the run will use.

    Raises:
        PVGError: the first problem found.
    """
    config.validate()
    device = resolve_device(config.device)
    closed_form = use_closed_form(task, config.best_response, config.formulation)
    attacks = set(config.stress_attacks if config.stress_every > 0 else ())
    if closed_form and config.formulation == "verifier-first":
        attacks.add("exhaustive")  # the exact prover is the exhaustive search
    check_attacks(task, sorted(attacks))
    if not closed_form and config.step_counts()[1] == 0:
        raise PVGError(f"prover_steps=0 needs the exact prover, which {task.name!r} lacks")
    needs = [
        ("batch_size (--batch-size)", config.batch_size, 0.0),
        ("eval_size", config.eval_size, 0.0),
    ]
    check_memory(task, needs, config.max_memory_gb)
    check_bank(task, config.data_bank, config.max_memory_gb)
    if config.stress_every > 0:
        stress = config.stress
        check_stress_memory(task, config.stress_attacks, stress, config.max_memory_gb, "stress.")
    return device


def train(
    task: PVGTask,
    config: TrainConfig | None = None,
    observe: Observer | None = None,
    resume: str | Path | None = None,
    agents: tuple[nn.Module, nn.Module] | None = None,
) -> TrainResult:
    """Train a prover and a verifier on ``task`` under ``config``; see the module docstring.

    Args:
        task: the game's task.
        config: the run's settings (defaults if omitted).
        observe: called as ``observe(step, prover, verifier)`` before the first game step
            (step 0, not on resuming) and at every logged step, e.g. to record the agents'
            outputs for a dynamics plot; it must not change the agents.
        resume: a run folder (or its ``state.pt``) written with ``checkpoint_every``:
            continue that run up to ``config.steps`` game steps (if it has played them
            all, or stopped sound under ``stop_when_sound``, nothing more is played and
            the saved run is returned). ``task`` and ``config`` must be the saved run's,
            except for :data:`RESUMABLE_CHANGES`; the metrics it logged up to the saved
            step are carried over.
        agents: ``(prover, verifier)`` to start from instead of fresh networks (copies
            are trained; e.g. the hand-set agents of
            :mod:`proofgames.pvg.find_the_plus.stability`).
            With ``resume`` they give the architecture only and the saved weights replace
            theirs: that is how a run started from agents of another architecture than
            the task's is resumed (without them, its saved state does not fit).

    Runs with the same seed on CPU are identical, and so is a run resumed from its
    training state: N steps, then resumed to M, plays the same game as M steps at once.

    Example:
        >>> import tempfile
        >>> from dataclasses import replace
        >>> from proofgames.pvg import make_task
        >>> folder = tempfile.mkdtemp()
        >>> config = TrainConfig(steps=4, batch_size=32, eval_size=32, log_every=2,
        ...                      out_dir=folder, checkpoint_every=2, progress=False)
        >>> first = train(make_task("bec"), config)
        >>> longer = train(make_task("bec"), replace(config, steps=6), resume=folder)
        >>> [row["step"] for row in longer.metrics]
        [2, 4, 6]

    Raises:
        PVGError: (a ``ValueError``) an invalid configuration, a batch over the memory
            limit, an unusable device, or a ``resume`` folder whose training state or
            metric log is unreadable or does not match; all found before any work.
        MissingFileError: (a ``FileNotFoundError`` and a ``PVGError``) ``resume`` holds
            no training state.
        TrainingStopped: a run with ``checkpoint_every`` got SIGTERM or SIGINT; it saved
            its state after the game step in progress, so ``resume`` continues it exactly.
    """
    config = config or TrainConfig()
    device = check_training(task, config)
    saved = None
    if resume is not None:  # every check before any work
        state = load_training_state(resume)
        check_resumable(task, config, state)
        saved = state, logged_rows(Path(resume), state.step)
    run = _Run(task, config, time.perf_counter(), observe)
    run.start(device, saved, Path(resume or ""), agents)
    verifier_steps = config.step_counts()[0]
    first = step = run.record.step
    saved_at = None
    with _progress(task, config) as bar, run.outputs(), stop_requests(config) as stop:
        bar_task = bar.add_task("train", total=config.steps, completed=first, acc="-")
        stopped = config.stop_when_sound and run.record.sound_at is not None
        for step in range(first + 1, first + 1 if stopped else config.steps + 1):
            losses = run.game.play(verifier_steps, run.prover_steps)
            run.prover_steps = _adapted(config, run.record, run.prover_steps,
                                        losses["train_accuracy"])  # fmt: skip
            stress_now = config.stress_every > 0 and (
                step == config.steps or step % config.stress_every == 0
            )
            if stress_now or step == config.steps or step % config.log_every == 0:
                row = run.log(step, losses, stress_now)
                bar.update(bar_task, advance=1, acc=f"{row['verifier_accuracy']:.3f}")
            else:
                bar.advance(bar_task)
            if config.checkpoint_every and step % config.checkpoint_every == 0:
                run.save(step)
                saved_at = step
            if stop:
                _stopped(run, step, saved_at, stop[0])
            if config.stop_when_sound and run.record.sound_at is not None:
                break
    if config.checkpoint_every and saved_at != step:  # not saved at this step yet
        run.save(step)
    clock = (run.clock, run.stress_seconds)
    return _result(task, config, run.game, run.record, step, clock, run.evaluation)


def _stopped(run: _Run, step: int, saved_at: int | None, why: str) -> NoReturn:
    """Save the state after ``step`` (unless just saved) and raise :class:`TrainingStopped`."""
    if saved_at != step:
        run.save(step)
    folder = run.config.out_dir
    raise TrainingStopped(
        f"training stopped by {why} after game step {step}; its state is saved in "
        f"{folder}, and a run resumed from there continues it exactly"
    )


@dataclass
class _Run:
    """One training run in progress: its game, record, evaluation batch and outputs."""

    task: PVGTask
    config: TrainConfig
    clock: float  # when this call started (``time.perf_counter``)
    observe: Observer | None
    stress_seconds: float = 0.0
    prover_steps: int = 0
    game: Game = field(init=False)
    record: RunRecord = field(init=False)
    evaluation: tuple[torch.Tensor, torch.Tensor] = field(init=False)
    _log: Any = None
    _board: Any = None

    def start(
        self,
        device: torch.device,
        saved: tuple[Any, list[Metrics]] | None,
        source: Path,
        agents: tuple[nn.Module, nn.Module] | None,
    ) -> None:
        """Seed, sample the evaluation batch, build the game; restore or pretrain it."""
        task, config = self.task, self.config
        torch.manual_seed(config.seed)  # weight init and Gumbel noise
        data_gen = torch.Generator().manual_seed(config.seed)
        eval_x, eval_y = task.sample(config.eval_size, data_gen)
        self.evaluation = eval_x.to(device), eval_y.to(device)
        self.game = Game(task, config, device, data_gen)
        if agents is not None:
            self.game.use_agents(*agents)
        self.game.closed_form = use_closed_form(task, config.best_response, config.formulation)
        self.prover_steps = config.step_counts()[1]
        self.record = RunRecord()
        if saved is not None:
            state, rows = saved
            self.game.restore_from(state, source)
            self.prover_steps = state.prover_steps
            self.record = RunRecord.from_state(state, rows)
            return
        for _ in range(config.pretrain_steps):
            self.game.pretrain_step()
        if self.observe is not None:
            self.observe(0, self.game.prover, self.game.verifier)

    @contextmanager
    def outputs(self) -> Iterator[None]:
        """Open the metric log and TensorBoard writer for the loop; close them after it."""
        self._log = open_log(self.config, self.record.metrics)
        self._board = open_tensorboard(self.config, self.record.step)
        try:
            yield
        finally:
            for out in (self._log, self._board):
                if out is not None:
                    out.close()

    def log(self, step: int, losses: Metrics, stress_now: bool) -> Metrics:
        """Evaluate (and stress-test) after game step ``step``; record and write the row."""
        game, record = self.game, self.record
        row: Metrics = {"step": step, "prover_steps": self.prover_steps, **losses}
        row.update(_evaluation(self.task, game, *self.evaluation, self.config.seed))
        if stress_now:
            clock = (self.clock, self.stress_seconds)
            self.stress_seconds = _stress(self.task, game, self.config, record, row, step, clock)
            self.stress_seconds += _task_stress_metrics(
                self.task, game, self.config, row, *self.evaluation
            )
        row["seconds"] = round(record.train_seconds(self.clock, self.stress_seconds), 4)
        record.metrics.append(row)
        if self.observe is not None:
            self.observe(step, game.prover, game.verifier)
        if self._log is not None:
            self._log.append(row)
        if self._board is not None:
            board_row(self._board, self.task.name, row)
        return row

    def save(self, step: int) -> None:
        """Write the resumable training state after game step ``step``."""
        save_state(self.task, self.config, self.game, self.record, step, self.prover_steps,
                   self.clock, self.stress_seconds)  # fmt: skip


def _progress(task: PVGTask, config: TrainConfig) -> Progress:
    """The run's bar on stderr, shown only on a terminal and when ``config.progress``."""
    console = Console(stderr=True)
    return Progress(
        TextColumn(f"[bold]pvg {task.name} {config.formulation}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("acc {task.fields[acc]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not (config.progress and console.is_terminal),
    )


def _result(
    task: PVGTask,
    config: TrainConfig,
    game: Game,
    run: RunRecord,
    step: int,
    clock: tuple[float, float],
    evaluation: tuple[torch.Tensor, torch.Tensor],
) -> TrainResult:
    """The finished run: the kept agents (the best ones, if kept) saved and returned."""
    start, stress_seconds = clock
    if run.best is not None:
        game.prover.load_state_dict(run.best["prover"])
        game.verifier.load_state_dict(run.best["verifier"])
    checkpoint = None
    if config.out_dir is not None:
        checkpoint = save_checkpoint(Path(config.out_dir), task, game.prover, game.verifier, config)
    if run.metrics:
        accuracy = run.metrics[-1]["verifier_accuracy"]
    else:
        accuracy = evaluate(task, game.prover, game.verifier, *evaluation, config.seed)[
            "verifier_accuracy"
        ]
    return TrainResult(
        prover=game.prover,
        verifier=game.verifier,
        checkpoint=checkpoint,
        verifier_accuracy=accuracy,
        steps=step,
        seconds=run.seconds_before + time.perf_counter() - start,
        train_seconds=run.train_seconds(start, stress_seconds),
        sound_at=run.sound_at,
        sound_seconds=run.sound_seconds,
        metrics=run.metrics,
        best_step=None if run.best is None else run.best["step"],
        best_accuracy=None if run.best is None else run.best["score"],
    )


def _adapted(config: TrainConfig, run: RunRecord, prover_steps: int, accuracy: float) -> int:
    """The prover steps of the next game step under the adaptive rule.

    One more once the verifier's training accuracy has stayed above the threshold for
    ``adaptive_window`` game steps, up to ``max_prover_steps``.
    """
    if config.adaptive_threshold is None or prover_steps == 0:
        return prover_steps
    run.streak = run.streak + 1 if accuracy > config.adaptive_threshold else 0
    if run.streak >= config.adaptive_window and prover_steps < config.max_prover_steps:
        run.streak = 0
        return prover_steps + 1
    return prover_steps


def _evaluation(
    task: PVGTask, game: Game, eval_x: torch.Tensor, eval_y: torch.Tensor, seed: int
) -> Metrics:
    """The logged step's figures on the evaluation batch; one prover pass, shared."""
    message = greedy_messages(game.prover, eval_x, seed)
    row = evaluate(task, game.prover, game.verifier, eval_x, eval_y, seed, message)
    hook, shared = task.logged_metrics, {"message": message}
    if "message" not in inspect.signature(hook).parameters:
        shared = {}  # an override written before the hook took the messages
    row.update(hook(game.prover, game.verifier, eval_x, eval_y, **shared))
    return row


def _task_stress_metrics(
    task: PVGTask, game: Game, config: TrainConfig, row: Metrics, x: torch.Tensor, y: torch.Tensor
) -> float:
    """Add the task's :meth:`~proofgames.pvg.task.PVGTask.stress_metrics` to a stress row.

    Returns the seconds they took, which count as stress-test time.
    """
    tick = time.perf_counter()
    row.update(task.stress_metrics(game.prover, game.verifier, x, y, config.stress_attacks))
    return time.perf_counter() - tick


def _stress(
    task: PVGTask,
    game: Game,
    config: TrainConfig,
    run: RunRecord,
    row: Metrics,
    step: int,
    clock: tuple[float, float],
) -> float:
    """Stress-test the verifier into ``row``; keep the best agents and the first sound step.

    ``clock`` is ``(start, stress seconds so far)``; returns the run's stress-test seconds,
    this test included.
    """
    start, stress_seconds = clock
    tick = time.perf_counter()
    results = stress_test(task, game.verifier, game.prover, config.stress_attacks,
                          config.stress, config.max_memory_gb)  # fmt: skip
    for name, result in results.items():
        row[f"{name}_precision"] = result.precision
        row[f"{name}_recall"] = result.recall
        row[f"{name}_accuracy"] = result.accuracy
        row[f"{name}_specificity"] = result.specificity
    if config.keep_best is not None:
        score = results[config.keep_best].accuracy
        if run.best is None or score > run.best["score"]:
            prover_sd, verifier_sd = game.state_dicts()
            run.best = dict(score=score, step=step, prover=prover_sd, verifier=verifier_sd)
    stress_seconds += time.perf_counter() - tick
    if run.sound_at is None and all(r.perfect for r in results.values()):
        run.sound_at = step
        run.sound_seconds = run.train_seconds(start, stress_seconds)
    return stress_seconds


__all__ = [
    "BEST_RESPONSES",
    "RESUMABLE_CHANGES",
    "ClosedFormResponse",
    "FORMULATIONS",
    "TrainConfig",
    "Observer",
    "TrainResult",
    "UPDATES",
    "check_training",
    "resolve_device",
    "train",
]
