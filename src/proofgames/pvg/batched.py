"""Several seeds of one Prover-Verifier Game, trained together as one batched model.

:func:`train_seeds` plays the game of :func:`~proofgames.pvg.train.train` for several
seeds at once: each player's parameters are stacked over the seeds and every update is
one call of ``torch.func.vmap`` over ``torch.func.functional_call``, so a GPU runs all
seeds in the kernels one seed would use (convolutions become grouped convolutions). It is
meant for a GPU; on one CPU core it is no faster than the seeds run one after another
(``docs/pvg.md`` gives the measured ratio).

Everything but the game steps is each seed's own, done by the single-seed code: the
seed's initial weights, evaluation batch and data stream (its generator or bank), its
pretraining (run seed by seed, unbatched), its adaptive prover step count (a seed whose
count is higher takes its extra prover updates while the others sit them out: they draw
no batch and their weights and Adam moments do not move), its logged rows, stress tests,
kept best agents and saved state. Each seed's run lives in its own folder,
``out_dir/s<seed>``, in the single-seed format, so ``train(resume=out_dir/s<seed>)``
continues one seed alone, and :func:`train_seeds` with ``resume=out_dir`` continues them
all, batched.

The same seeds trained separately play the same game up to the rounding of the batched
kernels: a grouped convolution, a batched matrix product and a batched instance norm sum
in another order than the per-seed ones (on CPU, a few units in the last place of
float32 on the first step). ``tests/pvg/test_batched.py`` measures how far apart the
logged figures and final weights are after dozens of steps and holds them to that.

Batched play covers the ``simultaneous`` and ``collaborative`` formulations (either
update rule) on tasks whose prover draws no noise (FindThePlus); ``stop_when_sound``,
which would stop seeds at different steps, is refused.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.func import functional_call, vmap

from ..errors import PVGError, TrainingStopped
from ._bookkeeping import check_resumable, logged_rows
from ._game import Game
from ._memory import check_memory
from ._stacked import StackedPlayer
from ._stop_signals import stop_requests
from ._stress_settings import check_seeds
from .checkpoint import load_training_state
from .config import TrainConfig
from .stress import Metrics
from .task import PVGTask
from .train import TrainResult, _adapted, _progress, _result, _Run, check_training

__all__ = ["BATCHED_FORMULATIONS", "check_batched", "seed_config", "seed_folder", "train_seeds"]

#: Stacked gradients by parameter name (``None``: no gradient reached that parameter).
Grads = dict[str, Tensor | None]

#: The formulations :func:`train_seeds` plays batched.
BATCHED_FORMULATIONS = ("simultaneous", "collaborative")


def seed_folder(root: str | Path, seed: int) -> Path:
    """The folder of one seed's run under a batched run's ``root``: ``root/s<seed>``.

    Example:
        >>> seed_folder("runs/batch", 3).as_posix()
        'runs/batch/s3'
    """
    return Path(root) / f"s{seed}"


def seed_config(config: TrainConfig, seed: int) -> TrainConfig:
    """One seed's settings: ``config`` with that seed and its own folder under ``out_dir``.

    Example:
        >>> one = seed_config(TrainConfig(out_dir="runs/batch"), 2)
        >>> one.seed, Path(str(one.out_dir)).as_posix()
        (2, 'runs/batch/s2')
    """
    folder = None if config.out_dir is None else str(seed_folder(config.out_dir, seed))
    return replace(config, seed=seed, out_dir=folder)


def check_batched(task: PVGTask, config: TrainConfig, seeds: Sequence[int]) -> torch.device:
    """Refuse, before anything is allocated, batched seeds that cannot be trained together.

    Checks what :func:`~proofgames.pvg.train.check_training` checks for each seed, and
    that the seeds are distinct, the formulation is batched, the prover draws no noise
    and the batch of all seeds together fits the memory limit.

    Returns:
        The device the run will use.

    Raises:
        PVGError: the first problem found.
    """
    if not seeds:
        raise PVGError("seeds: give at least one seed")
    if len(set(seeds)) != len(seeds):
        raise PVGError(f"seeds must be distinct, got {list(seeds)}")
    for seed in seeds:
        check_seeds(seed=seed)
    if config.formulation not in BATCHED_FORMULATIONS:
        raise PVGError(
            f"batched seeds play {' or '.join(BATCHED_FORMULATIONS)}, not "
            f"{config.formulation!r}; train that formulation one seed at a time"
        )
    if config.stop_when_sound:
        raise PVGError("stop_when_sound would stop the seeds at different steps; not batched")
    device = check_training(task, seed_config(config, seeds[0]))
    with torch.random.fork_rng(devices=[]):  # building a prover draws its weights
        deterministic = task.deterministic_prover(task.make_prover())
    if not deterministic:
        raise PVGError(
            f"batched seeds need a prover that draws no noise, which {task.name!r}'s does; "
            "train its seeds one at a time"
        )
    total = config.batch_size * len(seeds)
    check_memory(task, [("batch_size x seeds", total, 0.0)], config.max_memory_gb)
    return device


class BatchedPlay:
    """The game steps of several seeds' games, played on their stacked players."""

    def __init__(self, games: Sequence[Game], config: TrainConfig, vectorize: bool = True) -> None:
        self.games = list(games)
        self.config, self.vectorize = config, vectorize
        self.prover = StackedPlayer(
            [g.prover for g in self.games], [g.prover_opt for g in self.games]
        )
        self.verifier = StackedPlayer(
            [g.verifier for g in self.games], [g.verifier_opt for g in self.games]
        )
        self.device = self.games[0].device
        nan = torch.full((len(self.games),), float("nan"), device=self.device)
        self.last = {key: nan.clone() for key in ("prover_loss", "verifier_loss", "train_accuracy")}

    def play(self, prover_steps: Sequence[int], verifier_steps: int) -> list[Metrics]:
        """One game step of every seed (``prover_steps`` per seed); each seed's losses."""
        most = max(prover_steps)
        if self.config.update == "alternating":  # the provers, then the verifiers
            for i in range(most):
                self.update([i < k for k in prover_steps], None)
            for _ in range(verifier_steps):
                self.update(None, [True] * len(self.games))
        else:  # both players' gradients at one point, as Game.joint_step takes them
            for i in range(max(most, verifier_steps)):
                provers = [i < k for k in prover_steps]
                self.update(provers if any(provers) else None,
                            [True] * len(self.games) if i < verifier_steps else None)  # fmt: skip
        values = {key: value.tolist() for key, value in self.last.items()}
        return [{key: values[key][b] for key in values} for b in range(len(self.games))]

    def update(self, provers: list[bool] | None, verifiers: list[bool] | None) -> None:
        """One update of the chosen players of the chosen seeds, each on its own batch."""
        drawn = [
            bool((provers and provers[b]) or (verifiers and verifiers[b]))
            for b in range(len(self.games))
        ]
        x, y = self._batches(drawn)
        losses, prover_grads, verifier_grads = self.gradients(x, y, bool(provers), bool(verifiers))
        if provers:
            self.prover.step(prover_grads, provers)
            self._keep(provers, prover_loss=losses["prover_loss"])
        if verifiers:
            self.verifier.step(verifier_grads, verifiers)
            kept = {k: losses[k] for k in ("verifier_loss", "train_accuracy")}
            self._keep(verifiers, **kept)

    def gradients(
        self, x: Tensor, y: Tensor, prover: bool, verifier: bool
    ) -> tuple[dict[str, Tensor], Grads, Grads]:
        """Every seed's losses and the chosen players' gradients, at the current point.

        ``x`` and ``y`` are the seeds' batches, stacked. Returns ``(losses, the prover's
        gradients, the verifier's)``. The losses are ``(B,)`` tensors keyed as the
        logged rows' (the prover's also as ``"total"``, with its auxiliary losses); a
        player not chosen gets no gradients.
        """
        prover_params = self.prover.params if prover else self.prover.detached()
        verifier_params = self.verifier.params if verifier else self.verifier.detached()
        one_seed = partial(self._losses, with_labels=prover)
        losses = vmap(one_seed) if self.vectorize else partial(_seed_by_seed, one_seed)
        values = losses(
            prover_params, self.prover.buffers, verifier_params, self.verifier.buffers, x, y
        )
        named = dict(zip(("total", "prover_loss", "verifier_loss", "train_accuracy"), values,
                         strict=True))  # fmt: skip
        prover_grads: Grads = {}
        verifier_grads: Grads = {}
        if prover:
            inputs = [prover_params[name] for name in self.prover.names]
            found = torch.autograd.grad(named["total"].sum(), inputs, retain_graph=verifier,
                                        allow_unused=True)  # fmt: skip
            prover_grads = dict(zip(self.prover.names, found, strict=True))
        if verifier:
            inputs = [verifier_params[name] for name in self.verifier.names]
            found = torch.autograd.grad(named["verifier_loss"].sum(), inputs, allow_unused=True)
            verifier_grads = dict(zip(self.verifier.names, found, strict=True))
        return named, prover_grads, verifier_grads

    def _keep(self, seeds: list[bool], **values: Tensor) -> None:
        """Record the updated seeds' latest losses."""
        mask = torch.tensor(seeds, device=self.device)
        for key, value in values.items():
            self.last[key] = torch.where(mask, value.detach(), self.last[key])

    def _batches(self, drawn: list[bool]) -> tuple[Tensor, Tensor]:
        """Each drawing seed's next batch, stacked; zeros for the seeds sitting out."""
        batches = {b: game.batch() for b, game in enumerate(self.games) if drawn[b]}
        x0, y0 = next(iter(batches.values()))
        idle = torch.zeros_like(x0), torch.zeros_like(y0)
        pairs = [batches.get(b, idle) for b in range(len(self.games))]
        return torch.stack([x for x, _ in pairs]), torch.stack([y for _, y in pairs])

    def _losses(
        self,
        prover_params: dict[str, Tensor],
        prover_buffers: dict[str, Tensor],
        verifier_params: dict[str, Tensor],
        verifier_buffers: dict[str, Tensor],
        x: Tensor,
        y: Tensor,
        with_labels: bool,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """One seed's losses on its batch, as ``Game.joint_step`` computes them."""
        config = self.config
        bf16 = config.precision == "bf16"  # the forward passes only, as Game.joint_step
        with torch.autocast(self.device.type, torch.bfloat16, enabled=bf16):
            out = functional_call(self.prover.base, (prover_params, prover_buffers),
                                  (x, y if with_labels else None))  # fmt: skip
            logits = functional_call(self.verifier.base, (verifier_params, verifier_buffers),
                                     (x, out.message)).float()  # fmt: skip
        target = y if config.formulation == "collaborative" else torch.ones_like(y)
        prover_loss = F.binary_cross_entropy_with_logits(logits, target)
        total = prover_loss + config.aux_weight * out.aux_loss
        s = config.label_smoothing
        verifier_loss = F.binary_cross_entropy_with_logits(logits, y * (1 - s) + s / 2)
        accuracy = ((logits > 0).float() == y).float().mean()
        return total, prover_loss, verifier_loss, accuracy

    def store(self, weights_only: bool = False) -> None:
        """Write the stacked players back into each seed's networks (and optimizers)."""
        for stacked, nets, opts in (
            (self.prover, [g.prover for g in self.games], [g.prover_opt for g in self.games]),
            (self.verifier, [g.verifier for g in self.games], [g.verifier_opt for g in self.games]),
        ):
            if weights_only:
                stacked.store_weights(nets)
            else:
                stacked.store(nets, opts)


def _seed_by_seed(one_seed: Callable[..., tuple[Tensor, ...]], *args: Any) -> tuple[Tensor, ...]:
    """What ``vmap(one_seed)(*args)`` computes, one seed after another (unvectorized)."""
    seeds = next(a for a in args if isinstance(a, Tensor)).shape[0]

    def part(arg: Any, b: int) -> Any:
        return {k: v[b] for k, v in arg.items()} if isinstance(arg, dict) else arg[b]

    outs = [one_seed(*(part(a, b) for a in args)) for b in range(seeds)]
    return tuple(torch.stack(values) for values in zip(*outs, strict=True))


class SeedRNG:
    """Each seed's own global RNG state, swapped in for the code that runs seed by seed."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.states: dict[int, tuple[Tensor, list[Tensor] | None]] = {}

    @contextmanager
    def use(self, b: int) -> Iterator[None]:
        """Run the block under seed ``b``'s RNG state (kept for next time after it)."""
        outside = self._get()
        if b in self.states:
            cpu, cuda = self.states[b]
            torch.set_rng_state(cpu)
            if cuda is not None:
                torch.cuda.set_rng_state_all(cuda)
        try:
            yield
        finally:
            self.states[b] = self._get()
            torch.set_rng_state(outside[0])
            if outside[1] is not None:
                torch.cuda.set_rng_state_all(outside[1])

    def _get(self) -> tuple[Tensor, list[Tensor] | None]:
        return torch.get_rng_state(), torch.cuda.get_rng_state_all() if self.cuda else None


def train_seeds(
    task: PVGTask,
    config: TrainConfig,
    seeds: Sequence[int],
    resume: str | Path | None = None,
    vectorize: bool = True,
) -> list[TrainResult]:
    """Train ``seeds`` of ``task`` under ``config`` together; see the module docstring.

    Args:
        task: the game's task.
        config: the settings of every seed (its ``seed`` is ignored); ``out_dir``, if
            set, is the root under which each seed's run is written (:func:`seed_folder`).
        seeds: the seeds, distinct.
        resume: a root written by an earlier call with ``checkpoint_every`` (or any
            folder holding ``s<seed>`` run folders saved at one step): continue every
            seed up to ``config.steps``, under the checks of ``train(resume=...)``.
        vectorize: play the seeds in one ``vmap`` call (the point of batching). With
            ``False`` the same stacked players, masks, Adam and bookkeeping run each
            seed's forward and backward pass on its own, in the kernels a separate run
            uses: on CPU that plays exactly the separate runs' game, bit for bit, which
            is how the tests check everything but the batched kernels' rounding.

    Returns:
        Each seed's :class:`~proofgames.pvg.train.TrainResult`, in the order of ``seeds``.
        Its times are the batched run's.

    Example:
        >>> from proofgames.pvg import make_task
        >>> config = TrainConfig(steps=2, batch_size=16, eval_size=16, pretrain_steps=1,
        ...                      formulation="simultaneous", progress=False)
        >>> results = train_seeds(make_task("find-the-plus"), config, [0, 1])
        >>> tuple((r.steps, len(r.metrics)) for r in results)
        ((2, 1), (2, 1))

    Raises:
        PVGError: as :func:`check_batched`, or a ``resume`` folder whose seeds' states
            are unreadable, do not match or were saved at different steps.
        TrainingStopped: SIGTERM or SIGINT with ``checkpoint_every``: every seed's state
            was saved after the game step in progress.
    """
    device = check_batched(task, config, seeds)
    configs = [seed_config(config, seed) for seed in seeds]
    saved = _saved_runs(task, configs, seeds, resume)
    clock, rng = time.perf_counter(), SeedRNG(device)
    runs = [_Run(task, one, clock, None) for one in configs]
    for b, run in enumerate(runs):
        source = Path("") if resume is None else seed_folder(resume, seeds[b])
        with rng.use(b):
            run.start(device, saved[b], source, None)
    play = BatchedPlay([run.game for run in runs], config, vectorize)
    step = _loop(runs, play, rng, config, task)
    play.store()
    results = []
    for b, run in enumerate(runs):
        with rng.use(b):
            clocks = (run.clock, run.stress_seconds)
            results.append(_result(task, run.config, run.game, run.record, step, clocks,
                                   run.evaluation))  # fmt: skip
    return results


def _saved_runs(
    task: PVGTask, configs: list[TrainConfig], seeds: Sequence[int], resume: str | Path | None
) -> list[Any]:
    """Each seed's saved state and logged rows (``None`` each for a fresh run), all checked."""
    if resume is None:
        return [None] * len(seeds)
    saved = []
    for seed, one in zip(seeds, configs, strict=True):
        folder = seed_folder(resume, seed)
        state = load_training_state(folder)
        try:
            check_resumable(task, one, state)
        except PVGError as exc:
            raise PVGError(f"{folder}: {exc}") from None
        saved.append((state, logged_rows(folder, state.step)))
    steps = sorted({state.step for state, _ in saved})
    if len(steps) > 1:
        raise PVGError(
            f"{resume}: the seeds were saved at different steps {steps}; resume them one at "
            "a time (train --resume on each folder) up to one step first"
        )
    return saved


def _loop(runs: list[_Run], play: BatchedPlay, rng: SeedRNG, config: TrainConfig,
          task: PVGTask) -> int:  # fmt: skip
    """The game steps up to ``config.steps``; logs and saves seed by seed. The last step."""
    verifier_steps = config.step_counts()[0]
    first = step = runs[0].record.step
    saved_at = None
    with ExitStack() as stack, warnings.catch_warnings():
        # vmap loops over the seeds for affine_grid, which has no batching rule; it says so
        warnings.filterwarnings("ignore", message="There is a performance drop")
        bar = stack.enter_context(_progress(task, config))
        for run in runs:
            stack.enter_context(run.outputs())
        stop = stack.enter_context(stop_requests(config))
        bar_task = bar.add_task("train", total=config.steps, completed=first, acc="-")
        for step in range(first + 1, config.steps + 1):
            losses = play.play([run.prover_steps for run in runs], verifier_steps)
            for run, loss in zip(runs, losses, strict=True):
                run.prover_steps = _adapted(run.config, run.record, run.prover_steps,
                                            loss["train_accuracy"])  # fmt: skip
            stress_now = config.stress_every > 0 and (
                step == config.steps or step % config.stress_every == 0
            )
            if stress_now or step == config.steps or step % config.log_every == 0:
                play.store(weights_only=True)
                accuracy = [
                    _log(run, rng, b, step, losses[b], stress_now) for b, run in enumerate(runs)
                ]
                bar.update(bar_task, advance=1, acc=f"{min(accuracy):.3f}-{max(accuracy):.3f}")
            else:
                bar.advance(bar_task)
            if (config.checkpoint_every and step % config.checkpoint_every == 0) or stop:
                _save(runs, play, rng, step)
                saved_at = step
            if stop:
                raise TrainingStopped(
                    f"training stopped by {stop[0]} after game step {step}; every seed's "
                    f"state is saved under {config.out_dir}, and a run resumed from there "
                    "continues it exactly"
                )
    if config.checkpoint_every and saved_at != step:
        _save(runs, play, rng, step)
    return step


def _log(run: _Run, rng: SeedRNG, b: int, step: int, losses: Metrics, stress_now: bool) -> float:
    """Log seed ``b``'s row (under its own RNG state); its verifier accuracy."""
    with rng.use(b):
        row = run.log(step, losses, stress_now)
    return float(row["verifier_accuracy"])


def _save(runs: list[_Run], play: BatchedPlay, rng: SeedRNG, step: int) -> None:
    """Write every seed's training state after game step ``step``."""
    play.store()
    for b, run in enumerate(runs):
        with rng.use(b):
            run.save(step)
