"""Where the verifier's first step goes from the hand-set sound FindThePlus protocol.

The stability experiment (:mod:`proofgames.pvg.find_the_plus.stability`) shows that gradient play
loses the hand-set sound protocol within about 100 steps. This module measures why: the
gradient of the verifier's training loss at :func:`sound_verifier`, on messages from

* ``"prover"``: a :class:`PointingProver`, which is what simultaneous play trains on
  (on a label-0 image it points head 0 at the plus of 0-pixels); or
* ``"exhaustive"``: the exact best response (:mod:`~proofgames.pvg.find_the_plus.message_search`),
  which is what verifier-first play against the exact prover trains on (on a label-0
  image it points head 0 at the most convincing place, almost always a plus with one
  cell of five missing, and every other head where it adds most).

A weight moves against its gradient, so a negative figure means the weight grows. The
hand-set verifier gives a full plus the logit ``5w + b = 2`` (probability 0.88), short of
the training target, so the loss raises the logit of label-1 images through every input
that is 1 there, the idle heads' included. Once the idle heads have weight, the exact
best response aims them where they add most on label-0 images, and the loss pushes
them back; the pointing prover never does, so on its messages they keep growing, until
the exhaustive attack can use them to pass a four-cell plus.

Example:
    >>> g = start_gradient(FindThePlus(), size=512)
    >>> g["idle_heads_max"] < 0  # every idle-head weight grows under the first step
    True
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from ...errors import PVGError
from .._stress_settings import check_seeds
from ..registry import task_defaults
from ..tasks.find_the_plus import FindThePlus, plus_mask
from .stability import PointingProver, check_error, sound_verifier

__all__ = ["MAX_SIZE", "NEGATIVES", "start_gradient"]

#: The largest batch measured (its exhaustive search takes about 0.3 s per 2,000 images).
MAX_SIZE = 100_000

#: The largest idle-head weight (in size) set before measuring; the plus cells weigh 4.
MAX_IDLE_WEIGHT = 100.0

#: Where the messages come from (see the module docstring).
NEGATIVES = ("prover", "exhaustive")


def start_gradient(
    task: FindThePlus,
    error_px: float = 0.0,
    *,
    negatives: str = "prover",
    size: int = 4096,
    seed: int = 0,
    label_smoothing: float | None = None,
    idle_weight: float = 0.0,
) -> dict[str, Any]:
    """The verifier's loss gradient at the hand-set sound start, summarized by part.

    Args:
        task: the FindThePlus task (glimpses one pixel apart, one logit).
        error_px: the pointing prover's rms error in pixels (0: exact).
        negatives: where the messages come from, one of :data:`NEGATIVES`.
        size: images in the batch (half of each label).
        seed: seed of the images and of the pointing error.
        label_smoothing: the verifier's label smoothing (the task's training default if
            ``None``).
        idle_weight: every weight of heads 1, 2, ... set to this value first (0: the
            hand-set start; about ``100 * lr`` is where Adam has taken them after 100
            steps of a consistent sign).

    Returns:
        Measured on one batch: ``bias``; ``plus_cells`` (mean over head 0's five plus
        cells), ``plus_cells_max``; ``head0_other`` (mean over head 0's other cells);
        ``idle_heads`` (mean over every weight of heads 1, 2, ...) and
        ``idle_heads_min`` / ``idle_heads_max``; the mean logits ``label0_logit`` and
        ``label1_logit``; and the arguments.

    Raises:
        PVGError: an unknown ``negatives``, a size outside ``[2, MAX_SIZE]``, a bad seed,
            idle weight or smoothing, or a task the hand-set verifier cannot be built for.
    """
    if negatives not in NEGATIVES:
        raise PVGError(f"negatives must be one of {NEGATIVES}, got {negatives!r}")
    if type(size) is not int or not 2 <= size <= MAX_SIZE:
        raise PVGError(f"size must be an integer in [2, {MAX_SIZE:,}], got {size!r}")
    check_seeds(seed=seed)
    s = task_defaults("find-the-plus")["label_smoothing"]
    s = s if label_smoothing is None else label_smoothing
    if not 0.0 <= s < 1.0:
        raise PVGError(f"label_smoothing must be in [0, 1), got {s}")
    if not (math.isfinite(idle_weight) and abs(idle_weight) <= MAX_IDLE_WEIGHT):
        raise PVGError(f"idle_weight must be in [-{MAX_IDLE_WEIGHT:g}, {MAX_IDLE_WEIGHT:g}], "
                       f"got {idle_weight}")  # fmt: skip
    check_error(error_px)
    verifier = sound_verifier(task)
    g = verifier.glimpse
    with torch.no_grad():
        verifier.classifier.weight[0, g * g :] = idle_weight
    x, y = task.sample(size, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        if negatives == "exhaustive":
            messages = task.best_messages(verifier, x)
        else:
            messages = PointingProver(task, error_px, seed)(x).message
    logits = verifier(x, messages)
    loss = F.binary_cross_entropy_with_logits(logits, y * (1 - s) + s / 2)
    weight, bias = verifier.classifier.weight, verifier.classifier.bias
    grad_w, grad_b = torch.autograd.grad(loss, [weight, bias])
    heads = grad_w.view(verifier.heads, g, g)
    centre = torch.tensor([g // 2])
    plus = plus_mask(centre, centre, g)[0]  # head 0's five plus cells
    idle = heads[1:]
    return {
        "error_px": error_px,
        "negatives": negatives,
        "label_smoothing": s,
        "size": size,
        "seed": seed,
        "idle_weight": idle_weight,
        "bias": float(grad_b[0]),
        "plus_cells": float(heads[0][plus].mean()),
        "plus_cells_max": float(heads[0][plus].max()),
        "head0_other": float(heads[0][~plus].mean()),
        "idle_heads": float(idle.mean()),
        "idle_heads_min": float(idle.min()),
        "idle_heads_max": float(idle.max()),
        "label0_logit": float(logits[y == 0].mean().detach()),
        "label1_logit": float(logits[y == 1].mean().detach()),
    }
