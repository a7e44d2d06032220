"""The settings of a Prover-Verifier Games training run: :class:`TrainConfig`.

Kept apart from the training loop (:mod:`proofgames.pvg.train`) so that the game, the
bookkeeping and the checkpoints, which all read the settings, need not import the loop.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import torch

from ..errors import PVGError
from ._memory import DEFAULT_MAX_MEMORY_GB, check_limit
from ._stress_settings import at_most, check_seeds
from .stress import ALL_ATTACKS, ATTACKS, StressConfig, at_least_zero, positive

__all__ = ["BEST_RESPONSES", "FORMULATIONS", "UPDATES", "TrainConfig", "resolve_device"]

FORMULATIONS = ("simultaneous", "prover-first", "verifier-first", "collaborative")
BEST_RESPONSES = ("auto", "closed-form", "trained")
#: How simultaneous and collaborative play order the two players' updates in a game step.
UPDATES = ("simultaneous", "alternating")
PRECISIONS = ("fp32", "bf16")
"""``TrainConfig.precision``: float32 throughout, or bfloat16 autocast in the game steps."""


@dataclass
class TrainConfig:
    """Everything that defines a training run (paper defaults for BEC).

    Attributes:
        formulation: one of :data:`FORMULATIONS`.
        update: one of :data:`UPDATES`, the update rule of simultaneous and
            collaborative play. ``"simultaneous"``: both players' gradients are taken at
            the same point on one batch (extra steps of one player repeat that for it
            alone); ``"alternating"`` (the paper's, Section 5.1): the prover takes its
            ``prover_steps`` updates, then the verifier its ``verifier_steps``, each on a
            fresh batch and against the other player as already updated. Prover-first and
            verifier-first play are sequential by definition and ignore it. Runs saved
            before this setting existed played ``"simultaneous"``.
        steps: game steps (one leader round each; see :mod:`proofgames.pvg.train`).
        batch_size: instances per gradient step.
        lr: Adam learning rate of the prover, and of the verifier unless
            ``verifier_lr`` is set (PyTorch's other Adam defaults).
        verifier_lr: the verifier's own learning rate (the paper's proof of Theorem 4
            assumes the verifier learns faster than the prover).
        verifier_weight_decay: ``λ >= 0``, an L2 penalty ``λ ||W||² / 2`` on the
            verifier's weight matrices and kernels (parameters of two or more
            dimensions; biases and other vectors are not penalized), added to its
            gradient before Adam's normalization (``torch.optim.Adam``'s coupled
            ``weight_decay``, not AdamW's decoupled decay). 0, the default and the
            paper's, adds nothing. Not a setting of the paper: a remedy on the
            verifier's side (see ``docs/find-the-plus.md``).
        verifier_steps: verifier updates per game step (default 1 for verifier-first,
            else 5).
        prover_steps: prover updates per game step (default 5 for verifier-first, else 1).
            In verifier-first play against the exact prover it may be 0: the verifier
            trains alone (the prover network only serves the logs), and the adaptive
            rule is off.
        adaptive_threshold: if set, add one prover step per game step whenever the
            verifier's training accuracy stayed above this for ``adaptive_window`` game
            steps, up to ``max_prover_steps``.
        adaptive_window: see ``adaptive_threshold``.
        max_prover_steps: see ``adaptive_threshold``.
        pretrain_steps: prover steps on the task's auxiliary losses before the game.
        label_smoothing: ``s``: the verifier's targets are ``y (1 - s) + s / 2``.
        aux_weight: weight of the prover's auxiliary losses during the game.
        best_response: how the leader sees the follower. Prover-first:
            ``"closed-form"`` uses the verifier's exact best response (needs a task with
            :class:`~proofgames.pvg.task.ClosedFormResponse`, BEC); verifier-first:
            ``"closed-form"`` trains the verifier against the prover's exact best
            response (needs a task with :class:`~proofgames.pvg.task.ExhaustiveMessages`:
            FindThePlus, FindTheNeedle).
            ``"trained"`` uses the trained follower network; ``"auto"`` the exact
            response when the task has one. Ignored by the other formulations.
        seed: seeds weight init, Gumbel noise and the data.
        device: ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"``, ...
        eval_size: size of the fixed evaluation batch.
        log_every: game steps between metric rows (the last step is always logged).
            Each row evaluates the agents on the ``eval_size`` batch (one prover pass;
            FindThePlus at 2,000 images: 0.23 CPU s measured on one core), so a larger
            interval cuts that cost in proportion without changing the training.
        data_bank: ``0`` (the default): every training batch is generated afresh, as
            runs saved before this setting were. ``N > 0``: ``N`` instances (at least
            ``batch_size``) are generated once from ``seed`` and the batches are drawn
            from them, each instance once per epoch in a seeded order (see
            :mod:`proofgames.pvg._data`): much cheaper per batch where generating is
            costly (FindThePlus), but a *different* training stream from the default,
            a finite sample seen repeatedly. A resumed run rebuilds the same bank.
        precision: ``"fp32"`` (the default): float32 throughout. ``"bf16"``: the game
            steps' forward passes run under ``torch.autocast`` with bfloat16 (weights,
            optimizer state, losses, evaluation rows, stress tests and exact responses stay
            float32). Faster per step (0.80x the CPU time at batch 256 on one core with
            AMX; measured), but it changes the numerics, and it **failed the side-by-side
            check**: resumed from seed 2's state at step 26,000 for 2,000 steps, its
            exhaustive specificity left the seed-to-seed spread at three of four checks
            (``docs/find-the-plus.md``). For experiments only: ``pvg train`` does not offer
            it.
        stress_every: if positive, stress-test the verifier every this many game steps
            (and at the end), logging precision and recall per attack.
        stop_when_sound: stop at the first stress test with precision = recall = 1
            against every attack run.
        stress_attacks: which attacks those stress tests run (from
            :data:`~proofgames.pvg.stress.ALL_ATTACKS`; the paper's two by default).
        keep_best: if set to an attack name, return (and checkpoint) the agents of the
            stress test with the highest verifier accuracy against that attack instead
            of the last ones -- the paper's model selection for FindThePlus (Appendix
            E.2, ``"messages"``).
        stress: settings of those stress tests.
        out_dir: where to write ``agents.pt``, ``config.json`` and ``metrics.jsonl``
            (nothing is written if omitted).
        checkpoint_every: if positive, write the training state (``state.pt`` in
            ``out_dir``) every this many game steps and at the end, so that
            :func:`train` can resume the run exactly; SIGTERM or SIGINT then saves it
            after the game step in progress and stops it (``TrainingStopped``).
        tensorboard: also log every metric row as TensorBoard scalars under
            ``out_dir/tensorboard`` (needs the ``tensorboard`` package:
            ``pip install 'proofgames[tensorboard]'``).
        progress: show a progress bar on a terminal.
        max_memory_gb: refuse (before allocating anything) a run whose largest batch
            -- ``batch_size``, ``eval_size`` or, with stress tests, theirs -- is estimated
            to take more memory than this many GB (see :mod:`proofgames.pvg._memory`;
            default :data:`~proofgames.pvg._memory.DEFAULT_MAX_MEMORY_GB`).
    """

    formulation: str = "simultaneous"
    update: str = "simultaneous"
    steps: int = 1000
    batch_size: int = 2000
    lr: float = 3e-4
    verifier_lr: float | None = None
    verifier_weight_decay: float = 0.0
    verifier_steps: int | None = None
    prover_steps: int | None = None
    adaptive_threshold: float | None = None
    adaptive_window: int = 20
    max_prover_steps: int = 15
    pretrain_steps: int = 0
    label_smoothing: float = 0.05
    aux_weight: float = 1.0
    best_response: str = "auto"
    seed: int = 0
    device: str = "auto"
    eval_size: int = 2000
    log_every: int = 10
    data_bank: int = 0
    precision: str = "fp32"
    stress_every: int = 0
    stop_when_sound: bool = False
    stress_attacks: tuple[str, ...] = ATTACKS
    keep_best: str | None = None
    stress: StressConfig = field(default_factory=StressConfig)
    out_dir: str | None = None
    checkpoint_every: int = 0
    tensorboard: bool = False
    progress: bool = True
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB

    def step_counts(self) -> tuple[int, int]:
        """``(verifier_steps, prover_steps)`` per game step, defaults filled in."""
        leader_is_verifier = self.formulation == "verifier-first"
        v = (
            self.verifier_steps
            if self.verifier_steps is not None
            else (1 if leader_is_verifier else 5)
        )
        p = self.prover_steps if self.prover_steps is not None else (5 if leader_is_verifier else 1)
        return v, p

    def validate(self) -> None:
        """Refuse an inconsistent configuration, naming the setting and its value.

        Raises:
            PVGError: (a ``ValueError``) the first setting that is out of range or
                inconsistent with the others.
        """
        if self.formulation not in FORMULATIONS:
            raise PVGError(f"formulation {self.formulation!r} not in {FORMULATIONS}")
        if self.update not in UPDATES:
            raise PVGError(f"update {self.update!r} not in {UPDATES}")
        if self.best_response not in BEST_RESPONSES:
            raise PVGError(f"best_response {self.best_response!r} not in {BEST_RESPONSES}")
        if self.precision not in PRECISIONS:
            raise PVGError(f"precision {self.precision!r} not in {PRECISIONS}")
        positive(steps=self.steps, batch_size=self.batch_size, eval_size=self.eval_size)
        positive(log_every=self.log_every, adaptive_window=self.adaptive_window)
        check_seeds(seed=self.seed)
        at_least_zero(
            stress_every=self.stress_every,
            checkpoint_every=self.checkpoint_every,
            pretrain_steps=self.pretrain_steps,
            max_prover_steps=self.max_prover_steps,
            data_bank=self.data_bank,
        )
        self._check_step_counts()
        at_most(
            steps=self.steps, batch_size=self.batch_size, eval_size=self.eval_size,
            data_bank=self.data_bank,
            pretrain_steps=self.pretrain_steps, max_prover_steps=self.max_prover_steps,
            verifier_steps=self.step_counts()[0], prover_steps=self.step_counts()[1],
        )  # fmt: skip
        self._check_stress_tests()
        for name, rate in (("lr", self.lr), ("verifier_lr", self.verifier_lr)):
            if rate is not None and not (math.isfinite(rate) and rate > 0):
                raise PVGError(f"{name} must be a positive finite number, got {rate}")
        finite_not_negative(
            aux_weight=self.aux_weight, verifier_weight_decay=self.verifier_weight_decay
        )
        if 0 < self.data_bank < self.batch_size:
            raise PVGError(
                f"data_bank must be 0 (no bank) or at least batch_size ({self.batch_size}), "
                f"got {self.data_bank}"
            )
        if self.checkpoint_every and self.out_dir is None:
            raise PVGError("checkpoint_every needs out_dir (where state.pt is written)")
        if self.tensorboard and self.out_dir is None:
            raise PVGError("tensorboard needs out_dir (where its event files are written)")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise PVGError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        check_limit(self.max_memory_gb)
        self.stress.validate()

    def _check_step_counts(self) -> None:
        verifier_steps, prover_steps = self.step_counts()
        exact_follower = self.formulation == "verifier-first" and self.best_response != "trained"
        if verifier_steps < 1:
            raise PVGError(f"verifier_steps must be positive, got {verifier_steps}")
        if prover_steps < (0 if exact_follower else 1):
            raise PVGError(
                f"prover_steps must be positive (prover_steps may be 0 only in verifier-first "
                f"play against the exact prover), got {prover_steps}"
            )

    def _check_stress_tests(self) -> None:
        unknown = [a for a in self.stress_attacks if a not in ALL_ATTACKS]
        if unknown or not self.stress_attacks:
            raise PVGError(
                f"stress_attacks must be a non-empty subset of {ALL_ATTACKS}, "
                f"got {tuple(self.stress_attacks)}"
            )
        if self.keep_best is not None:
            if self.keep_best not in self.stress_attacks:
                raise PVGError(
                    f"keep_best={self.keep_best!r} must be one of stress_attacks "
                    f"{self.stress_attacks}"
                )
            if self.stress_every < 1:
                raise PVGError("keep_best needs stress tests: set stress_every > 0")

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form.

        ``data_bank`` is left out at 0 (no bank) and ``precision`` at ``"fp32"``, so that
        a run saved without them can still be resumed by code from before the settings
        (which refuses settings it does not know); :meth:`from_dict` gives them back their
        defaults.

        Example:
            >>> banked = TrainConfig(data_bank=5000)
            >>> "data_bank" in TrainConfig().to_dict(), banked.to_dict()["data_bank"]
            (False, 5000)
        """
        values = asdict(self)
        if not values["data_bank"]:
            del values["data_bank"]
        if values["precision"] == "fp32":
            del values["precision"]
        return values

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Inverse of :meth:`to_dict`; settings added since ``data`` was saved take defaults.

        Raises:
            PVGError: ``data`` has settings this version does not know, or malformed ones.
        """
        values = dict(data)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise PVGError(f"unknown training settings {unknown}")
        try:
            stress = dict(values.get("stress", {}))
            if "stress" in values:
                stress.setdefault("prover_attack", "fresh")  # what runs saved before it ran
            values["stress"] = StressConfig(**stress)
        except (TypeError, ValueError) as exc:
            raise PVGError(f"malformed stress settings {values.get('stress')!r}: {exc}") from None
        if "stress_attacks" in values:
            values["stress_attacks"] = tuple(values["stress_attacks"])
        return cls(**values)


def finite_not_negative(**values: float) -> None:
    """Refuse (``PVGError``, naming it) the first value that is not a finite number >= 0."""
    for name, value in values.items():
        if not (math.isfinite(value) and value >= 0):
            raise PVGError(f"{name} must be a finite number >= 0, got {value}")


def resolve_device(name: str) -> torch.device:
    """The device ``name`` means: ``auto`` (CUDA if available, else CPU), ``cpu``, ``cuda[:N]``.

    Raises:
        PVGError: another device, or a CUDA device this machine does not have.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise PVGError(f"--device {name!r} is not a device here; choose auto, cpu or cuda[:N]")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise PVGError(
                f"--device {name!r}: CUDA is not available here (this PyTorch sees no CUDA "
                "GPU); use --device cpu or auto"
            )
        if device.index is not None and device.index >= count:
            raise PVGError(f"--device {name!r}: this machine has {count} CUDA device(s)")
    return device
