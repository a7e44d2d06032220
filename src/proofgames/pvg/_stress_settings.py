"""The settings and the results of the stress tests: :class:`StressConfig`, :class:`AttackResult`.

Private: :mod:`proofgames.pvg.stress` documents the attacks and re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

from ..analysis.intervals import confusion_intervals
from ..errors import PVGError

#: Where the prover attack starts: a copy of the trained prover (the paper's) or afresh.
PROVER_ATTACKS = ("continued", "fresh")


@dataclass
class StressConfig:
    """Settings of the two attacks (paper defaults).

    Attributes:
        prover_steps: Adam steps of the prover attack.
        prover_lr: its learning rate.
        batch_size: its training batch size.
        eval_size: instances in the evaluation batch (both attacks).
        lbfgs_lr: L-BFGS learning rate.
        lbfgs_max_iter: L-BFGS iteration cap.
        lbfgs_history: L-BFGS history size.
        tolerance_change: L-BFGS stop when the iterates change less than this.
        tolerance_grad: L-BFGS stop when the gradient is smaller than this.
        random_starts: seeded random starting points of the message attack (besides the
            trained prover's messages).
        keep: how many of the most convincing label-0 messages each result keeps.
        seed: seed of the evaluation batch, the prover attack and the random starts.
        prover_attack: one of :data:`PROVER_ATTACKS`: the prover attack continues
            training a copy of the trained prover (``"continued"``, the paper's; it needs
            that prover) or trains a fresh one (``"fresh"``). Settings saved before this
            one existed ran ``"fresh"``.
    """

    prover_steps: int = 500
    prover_lr: float = 3e-4
    batch_size: int = 2000
    eval_size: int = 2000
    lbfgs_lr: float = 1.0
    lbfgs_max_iter: int = 300
    lbfgs_history: int = 300
    tolerance_change: float = 1e-9
    tolerance_grad: float = 1e-5
    random_starts: int = 1
    keep: int = 16
    seed: int = 0
    prover_attack: str = "continued"

    def validate(self) -> None:
        """Refuse settings under which an attack would not run, naming the setting.

        An attack that never ran (no Adam step, no L-BFGS iteration, no instance) would
        still report figures -- those of the untrained prover or the starting messages
        (precision 1.0 on an empty batch) -- so every count must be positive.

        Raises:
            PVGError: the first setting out of range.
        """
        positive(
            prover_steps=self.prover_steps,
            batch_size=self.batch_size,
            eval_size=self.eval_size,
            lbfgs_max_iter=self.lbfgs_max_iter,
            lbfgs_history=self.lbfgs_history,
        )
        at_least_zero(random_starts=self.random_starts, keep=self.keep)
        at_most(
            prover_steps=self.prover_steps, batch_size=self.batch_size,
            eval_size=self.eval_size, lbfgs_max_iter=self.lbfgs_max_iter,
            lbfgs_history=self.lbfgs_history, random_starts=self.random_starts, keep=self.keep,
        )  # fmt: skip
        check_seeds(seed=self.seed)
        if self.prover_attack not in PROVER_ATTACKS:
            raise PVGError(f"prover_attack {self.prover_attack!r} not in {PROVER_ATTACKS}")
        for name, value, least in (
            ("prover_lr", self.prover_lr, "> 0"),
            ("lbfgs_lr", self.lbfgs_lr, "> 0"),
            ("tolerance_change", self.tolerance_change, ">= 0"),
            ("tolerance_grad", self.tolerance_grad, ">= 0"),
        ):
            if not (math.isfinite(value) and (value > 0 or (value == 0 and least == ">= 0"))):
                raise PVGError(f"{name} must be a finite number {least}, got {value}")


def positive(**counts: int) -> None:
    """Refuse a count (named by its keyword) below 1."""
    for name, value in counts.items():
        if value < 1:
            raise PVGError(f"{name} must be positive, got {value}")


MAX_SEED = 2**63 - 1
"""The largest seed a PVG run takes; a stress test also uses ``seed + 1`` and ``seed + 2``,
and torch folds a negative seed onto a positive one, so seeds are kept in
``[0, MAX_SEED]``, where no two of them give the same run."""


def check_seeds(**seeds: int) -> None:
    """Refuse a seed (named by its keyword) outside ``[0, MAX_SEED]``."""
    for name, value in seeds.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
            raise PVGError(f"{name} must be an integer in [0, 2**63 - 1], got {value!r}")


MAX_COUNT = 10**8
"""The largest count a PVG setting takes (steps, batch sizes, updates per step): at the
fastest measured rates (docs/pvg.md) 10^8 game steps are years of training, and a batch
of 10^8 images is terabytes; a count beyond it is a typo, refused before any work."""


def at_most(limit: int = MAX_COUNT, **counts: int) -> None:
    """Refuse a count (named by its keyword) above ``limit``.

    Example:
        >>> at_most(steps=2**63 - 1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.PVGError: steps = 9,223,372,036,854,775,807 is over the limit ...
    """
    for name, value in counts.items():
        if value > limit:
            raise PVGError(f"{name} = {value:,} is over the limit of {limit:,}")


def at_least_zero(**counts: int) -> None:
    """Refuse a count (named by its keyword) below 0."""
    for name, value in counts.items():
        if value < 0:
            raise PVGError(f"{name} must be >= 0, got {value}")


@dataclass
class AttackResult:
    """The frozen verifier's confusion counts against one attack, and its worst messages.

    Attributes:
        attack: ``"prover"``, ``"messages"`` or ``"exhaustive"``.
        tp: label-1 instances accepted.
        fp: label-0 instances accepted.
        fn: label-1 instances rejected.
        tn: label-0 instances rejected.
        strongest_messages: up to ``keep`` adversarial messages (on label-0 instances)
            with the highest verifier logits, strongest first, ``(k, message_dim)``.
        strongest_logits: their verifier logits ``(k,)``.
        strongest_inputs: the label-0 instances they were sent for.
    """

    attack: str
    tp: int
    fp: int
    fn: int
    tn: int
    strongest_messages: Tensor = field(repr=False)
    strongest_logits: Tensor = field(repr=False)
    strongest_inputs: Tensor = field(repr=False)

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 1.0 when nothing was accepted."""
        accepted = self.tp + self.fp
        return self.tp / accepted if accepted else 1.0

    @property
    def recall(self) -> float:
        """TP / (TP + FN); 0.0 when there were no label-1 instances."""
        positives = self.tp + self.fn
        return self.tp / positives if positives else 0.0

    @property
    def specificity(self) -> float:
        """TN / (TN + FP); 1.0 when there were no label-0 instances."""
        negatives = self.tn + self.fp
        return self.tn / negatives if negatives else 1.0

    @property
    def accuracy(self) -> float:
        """(TP + TN) / all: the verifier's accuracy when the attacker argues for 1."""
        total = self.tp + self.fp + self.fn + self.tn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def perfect(self) -> bool:
        """Whether precision and recall are both exactly 1."""
        return self.fp == 0 and self.fn == 0 and self.tp > 0

    def intervals(self, confidence: float = 0.95) -> dict[str, tuple[float, float] | None]:
        """Clopper--Pearson intervals for precision, recall and specificity.

        See :func:`proofgames.analysis.intervals.confusion_intervals`: they bound the attack's
        rates on instances drawn like this batch, each conditional on its denominator.
        """
        return confusion_intervals(self.tp, self.fp, self.fn, self.tn, confidence)

    def to_dict(self, top: int = 3) -> dict[str, Any]:
        """JSON-friendly summary with the ``top`` strongest adversarial messages.

        ``intervals`` holds 95% Clopper--Pearson intervals ``[low, high]`` for
        precision, recall and specificity (``null`` where a rate has no instances).
        """
        strongest = [
            {
                "logit": round(float(logit), 4),
                "message": [round(float(v), 4) for v in message.flatten().tolist()],
            }
            for message, logit in zip(
                self.strongest_messages[:top], self.strongest_logits[:top], strict=True
            )
        ]
        return {
            "precision": self.precision,
            "recall": self.recall,
            "specificity": self.specificity,
            "accuracy": self.accuracy,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "intervals": {
                rate: None if bounds is None else [round(b, 6) for b in bounds]
                for rate, bounds in self.intervals().items()
            },
            "strongest": strongest,
        }
