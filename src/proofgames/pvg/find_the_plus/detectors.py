"""What a FindThePlus verifier's heads detect, and what its prover and the attack show them.

A head's classifier weights on its glimpse can form a plus anywhere in the glimpse
(:func:`plus_detectors`, with :func:`plus_alignment` for a centred plus); its prover then
points it beside the plus. On label-0 images the prover and the exhaustive attack place
that detector on 4-of-5 pluses, and which cell those lack (:func:`missing_cells`) tells
what the verifier has been taught; :func:`threshold_gap` measures how far its bias is
from sound. :func:`pointing` (where the prover aims the detector) and
:func:`detector_figures` (these flattened) are the figures FindThePlus adds to a
training's metric rows (its :meth:`~proofgames.pvg.tasks.find_the_plus.FindThePlus.logged_metrics`
and :meth:`~proofgames.pvg.tasks.find_the_plus.FindThePlus.stress_metrics`).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn

from ...errors import PVGError
from ..tasks._plus_pattern import PLUS_OFFSETS, plus_centres, plus_mask
from ..tasks.plus_verifier import PlusVerifier, pixel_to_shift
from .message_search import ExhaustiveSearch, search_messages


def best_detector(verifier: PlusVerifier) -> tuple[int, tuple[int, int]]:
    """The most plus-shaped head and its plus's offset from the glimpse centre (pixels)."""
    detectors = plus_detectors(verifier)
    head = max(range(verifier.heads), key=lambda h: float(detectors[h]["alignment"]))
    dr, dc = detectors[head]["offset"]
    return head, (int(dr), int(dc))


#: The plus cells in :data:`~proofgames.pvg.tasks.find_the_plus.PLUS_OFFSETS` order.
PLUS_CELLS = ("centre", "up", "down", "left", "right")


def detector_place(verifier: PlusVerifier) -> tuple[int, int, int]:
    """``(head, row, col)``: the most plus-shaped head and its plus's centre in the glimpse."""
    head, (row, col) = best_detector(verifier)
    g = verifier.glimpse
    return head, g // 2 + row, g // 2 + col


def plus_cells(looks: Tensor, place: tuple[int, int, int]) -> Tensor:
    """``(n, 5)``: the :data:`PLUS_CELLS` at ``place`` of glimpses ``(n, heads, g, g)``."""
    head, r, c = place
    return torch.stack([looks[:, head, r + dr, c + dc] for dr, dc in PLUS_OFFSETS], 1)


def missing_cells(
    verifier: PlusVerifier,
    prover: nn.Module,
    x: Tensor,
    y: Tensor,
    found: ExhaustiveSearch | None = None,
) -> dict[str, Any]:
    """Which plus cell is missing where a label-0 image shows the plus detector 4 of 5.

    The most plus-shaped head (:func:`plus_detectors`) is placed on each label-0 image
    of ``(x, y)`` twice: where ``prover``'s message puts it, and where the exhaustive
    search does. Among the images on which the detector then sees exactly four of the
    five plus cells as 1-pixels, this counts how many lack each cell. A verifier learns
    only what its prover's label-0 messages show it: a cell they never lack cannot tell
    those images from label-1 ones.

    Returns:
        ``cells`` (:data:`PLUS_CELLS`), and per placement a count per cell: ``prover``,
        ``prover_accepted`` (the prover's placements the verifier accepts) and
        ``attack``.

    Raises:
        PVGError: glimpses not sampled a pixel apart with an odd side, or no label-0
            image.
    """
    g = verifier.glimpse
    if verifier.spacing != 1.0 or g % 2 == 0 or not bool((y < 0.5).any()):
        raise PVGError("missing_cells needs label-0 images and odd glimpses a pixel apart")
    place = detector_place(verifier)
    negative = x[y < 0.5]
    with torch.no_grad():
        message = prover(negative, None).message
        accepted = verifier(negative, message) > 0
        shown = verifier.glimpses(negative, message)[0]
        found = found or search_messages(verifier, negative)
        attacked = verifier.glimpses_at(negative, found.shifts)

    def census(looks: Tensor, keep: Tensor) -> list[int]:
        ones = plus_cells(looks, place)[keep] > 0.5
        return [int(v) for v in (~ones[ones.sum(1) == 4]).sum(0)]

    everywhere = torch.ones_like(accepted)
    return {
        "cells": list(PLUS_CELLS),
        "prover": census(shown, everywhere),
        "prover_accepted": census(shown, accepted),
        "attack": census(attacked, everywhere),
    }


def detector_figures(
    verifier: PlusVerifier, prover: nn.Module, x: Tensor, y: Tensor
) -> dict[str, float]:
    """Flat figures of the plus detector, for a training's metric rows.

    ``detector_centre`` and ``detector_arms``: the most plus-shaped head's weights on the
    centre cell of its plus and their mean on the four arms; ``readout_bias``; and, from
    :func:`missing_cells` on ``(x, y)``, ``prover_centre_missing`` and
    ``attack_centre_missing``: the shares of the 4-of-5 placements lacking the centre
    (absent where there are none).

    Raises:
        PVGError: as :func:`missing_cells`.
    """
    cells = missing_cells(verifier, prover, x, y)
    g = verifier.glimpse
    weights, bias = (t.detach().cpu() for t in verifier.readout())
    plus = [
        float(v)
        for v in plus_cells(weights.view(1, verifier.heads, g, g), detector_place(verifier))[0]
    ]

    figures = {
        "detector_centre": plus[0],
        "detector_arms": sum(plus[1:]) / 4,
        "readout_bias": float(bias),
    }
    for who in ("prover", "attack"):
        if sum(cells[who]):  # no share without a 4-of-5 placement (no NaN in a row)
            figures[f"{who}_centre_missing"] = cells[who][0] / sum(cells[who])
    return figures


def detector_gradient(
    verifier: PlusVerifier,
    prover: nn.Module,
    x: Tensor,
    y: Tensor,
    label_smoothing: float = 0.0,
    found: ExhaustiveSearch | None = None,
) -> dict[str, Any]:
    """Which way the verifier's training loss moves its plus detector, per adversary.

    The descent direction (minus the gradient) of the verifier's loss, the mean over
    ``(x, y)`` of the cross-entropy with targets ``y (1 - s) + s / 2``, on the most
    plus-shaped head's five plus-cell weights (:func:`best_detector`) and on the readout
    bias, taken twice: against ``prover``'s messages, what simultaneous play trains the
    verifier on, and against the exhaustive search's best messages, what verifier-first
    play against the exact prover trains it on. Each is split into the label-0 and the
    label-1 images' parts (the two add up to the whole). Positive: a gradient step raises
    the weight. Exact for the batch, up to float rounding.

    Returns:
        ``cells`` (:data:`PLUS_CELLS`), and for ``prover`` and ``exact`` each:
        ``{"label 0": [5 floats], "label 1": [5 floats], "bias": float}``.

    Raises:
        PVGError: glimpses not sampled a pixel apart with an odd side and one logit.
    """
    g = verifier.glimpse
    if verifier.spacing != 1.0 or g % 2 == 0 or verifier.logits != 1:
        raise PVGError("detector_gradient needs one logit and odd glimpses a pixel apart")
    place = detector_place(verifier)
    weights, bias = (t.detach() for t in verifier.readout())
    target = y * (1 - label_smoothing) + label_smoothing / 2
    with torch.no_grad():
        placements = {
            "prover": verifier.glimpses(x, prover(x, None).message)[0],
            "exact": verifier.glimpses_at(x, (found or search_messages(verifier, x)).shifts),
        }
    out: dict[str, Any] = {"cells": list(PLUS_CELLS)}
    for who, looks in placements.items():
        logits = looks.flatten(1) @ weights.reshape(-1) + bias.reshape(())
        pull = (target - torch.sigmoid(logits)) / len(x)  # minus dLoss/dlogit, per image
        cells = plus_cells(looks, place)
        parts = {
            name: [round(float(v), 6) for v in (pull[keep, None] * cells[keep]).sum(0)]
            for name, keep in (("label 0", y < 0.5), ("label 1", y > 0.5))
        }
        out[who] = {**parts, "bias": round(float(pull.sum()), 6)}
    return out


def threshold_gap(
    verifier: PlusVerifier,
    prover: nn.Module,
    calibrate: tuple[Tensor, Tensor],
    check: tuple[Tensor, Tensor],
    found: ExhaustiveSearch | None = None,
) -> dict[str, float]:
    """How far the verifier's threshold is from sound, and what soundness would cost.

    On the label-0 images of ``calibrate`` the exhaustive search gives each image's
    highest logit over all messages; ``sound_shift`` is minus the largest, the change
    of the readout bias that makes the verifier reject every one of them (exact on that
    batch). The shifted verifier is then measured on ``check``, other images: its
    exhaustive specificity and recall (exact on that batch) and its recall with
    ``prover``'s own messages. A post-hoc diagnostic, not a training method: the shift
    is chosen with the exhaustive search, which the paper's verifier never sees.

    Raises:
        PVGError: a batch without label-0 or label-1 images where one is needed.
    """
    if not bool((calibrate[1] < 0.5).any()) or not bool((check[1] < 0.5).any()):
        raise PVGError("threshold_gap needs label-0 images in both batches")
    if not bool((check[1] > 0.5).any()):
        raise PVGError("threshold_gap needs label-1 images in the check batch")
    was_training = (verifier.training, prover.training)
    verifier.eval()
    prover.eval()
    with torch.no_grad():
        found = found or search_messages(verifier, calibrate[0][calibrate[1] < 0.5])
        shift = -float(found.bound.max())
        x, y = check
        best = search_messages(verifier, x).bound + shift
        own = verifier(x, prover(x, None).message) + shift
    verifier.train(was_training[0])
    prover.train(was_training[1])
    negative, positive = y < 0.5, y > 0.5
    return {
        "sound_shift": round(shift, 4),
        "shifted_exhaustive_specificity": round(float((best[negative] <= 0).float().mean()), 4),
        "shifted_exhaustive_recall": round(float((best[positive] > 0).float().mean()), 4),
        "shifted_recall": round(float((own[positive] > 0).float().mean()), 4),
    }


def plus_alignment(verifier: nn.Module) -> list[float]:
    """Per head, how much the verifier's classifier weights look like a centred plus.

    The cosine between a head's ``glimpse x glimpse`` classifier weights and
    :func:`plus_template` (what a head centred on a plus sees), both with their mean
    removed: 1 for a pure plus detector (the weights of the sound verifier of the paper's
    Figure 1), near 0 for weights that ignore the plus's shape, e.g. a count of
    1-pixels (uniform weights).
    """
    cosine = _plus_cosines(_plus_verifier(verifier), [(0, 0)])[:, 0]
    return [round(float(v), 4) for v in cosine]


def _plus_cosines(verifier: PlusVerifier, offsets: list[tuple[int, int]]) -> Tensor:
    """``(heads, offsets)``: cosines of the mean-removed weights and plus templates."""
    g = verifier.glimpse
    weights = verifier.readout()[0].detach().cpu().view(verifier.heads, g * g)
    templates = torch.stack([plus_template(verifier, o).view(g * g) for o in offsets])
    weights = weights - weights.mean(dim=1, keepdim=True)
    templates = templates - templates.mean(dim=1, keepdim=True)
    return torch.nn.functional.cosine_similarity(weights[:, None], templates[None], dim=2)


def plus_template(verifier: PlusVerifier, offset: tuple[int, int] = (0, 0)) -> Tensor:
    """``(glimpse, glimpse)``: the glimpse a head centred near a plus of 1-pixels takes.

    With samples a pixel apart (the defaults) it is the plus's five cells; with samples
    ``1/m`` of a pixel apart (``glimpse=10``: the literal spatial-transformer reading) it
    is the plus as the head resamples it, each arm about ``m`` samples wide. ``offset``
    ``(rows, columns)``, in pixels, places the plus that far from the glimpse's centre.
    """
    device = next(verifier.parameters()).device
    centre = torch.tensor([verifier.size // 2], device=device)
    rows, cols = centre + offset[0], centre + offset[1]
    image = plus_mask(rows, cols, verifier.size).double()[:, None]
    shift = pixel_to_shift(centre.double(), verifier.size).expand(1, 1, 2)
    with torch.no_grad():  # in float64, so that a pixel's 1 is not sampled as 1 - 2e-7
        look = verifier.glimpses_at(image, shift)[0, 0].cpu()
    return torch.where(look.abs() < 1e-9, 0.0, look).float()


def plus_offsets(verifier: PlusVerifier) -> list[tuple[int, int]]:
    """The pixel offsets from a glimpse's centre at which a whole plus fits in the glimpse.

    ``(0, 0)`` first; nine with the defaults (5x5 glimpses a pixel apart).
    """
    reach = max(0, math.floor(verifier.half_extent - 1 + 1e-9))  # the arms must fit too
    reach = max(0, min(reach, verifier.size // 2 - 2))  # and the plus must fit the image
    steps = sorted(range(-reach, reach + 1), key=abs)
    return [(dr, dc) for dr in steps for dc in steps]


def plus_detectors(verifier: nn.Module) -> list[dict[str, Any]]:
    """Per head, the plus it detects best: ``{"alignment": cosine, "offset": [dr, dc]}``.

    Like :func:`plus_alignment`, but the plus may sit anywhere in the glimpse (at each of
    :func:`plus_offsets`): a head whose weights form a plus one pixel right of its
    centre is a plus detector whose prover points it one pixel left of the plus. The
    offset (pixels) is where that plus sits; ties go to the most central one.
    """
    offsets = plus_offsets(_plus_verifier(verifier))
    cosine = _plus_cosines(_plus_verifier(verifier), offsets)
    best = cosine.argmax(dim=1)  # the first maximum: the most central placement
    return [
        {"alignment": round(float(cosine[h, i]), 4), "offset": list(offsets[int(i)])}
        for h, i in enumerate(best)
    ]


def pointing(
    verifier: nn.Module,
    prover: nn.Module,
    x: Tensor,
    y: Tensor,
    head: int | None = None,
    message: Tensor | None = None,
) -> dict[str, float]:
    """Where ``prover`` points ``verifier``'s heads on the label-1 images of ``(x, y)``.

    ``message``: the prover's most likely messages on the whole of ``x``, if the caller
    has them (training's evaluation does); otherwise the prover is run (in evaluation
    mode) on the label-1 images.

    Returns:
        ``pointing_error_px``: the rms distance in pixels from where the plus detector of
        ``head`` (default: the most plus-shaped head, see :func:`plus_detectors`) looks
        -- its glimpse centre moved by the detector's offset -- to the plus;
        ``on_plus``: the share of label-1 images on which that point lies within half a
        pixel of the plus on both axes (the prover aims the detector at the plus).
    """
    v = _plus_verifier(verifier)
    positive = y > 0.5
    if not bool(positive.any()):
        return {"pointing_error_px": float("nan"), "on_plus": float("nan")}
    detectors = plus_detectors(v)
    if head is None:
        head = max(range(v.heads), key=lambda h: float(detectors[h]["alignment"]))
    with torch.no_grad():
        if message is None:
            was_training = prover.training
            prover.eval()
            message = prover(x[positive], None).message
            prover.train(was_training)
        else:
            message = message[positive]
        _, centres = v.glimpses(x[positive], message)
    truth = plus_centres(x[positive]).to(centres.device)
    looks_at = centres[:, head] + torch.tensor(detectors[head]["offset"]).to(centres)
    error = (looks_at - truth).pow(2).sum(dim=1).mean().sqrt()
    near = (looks_at - truth).abs().amax(dim=-1) <= 0.5
    return {"pointing_error_px": float(error), "on_plus": float(near.float().mean())}


def _plus_verifier(verifier: nn.Module) -> PlusVerifier:
    if not isinstance(verifier, PlusVerifier):
        raise TypeError("head diagnostics need a PlusVerifier")
    return verifier


__all__ = [
    "PLUS_CELLS",
    "best_detector",
    "detector_figures",
    "detector_gradient",
    "detector_place",
    "missing_cells",
    "plus_alignment",
    "plus_cells",
    "plus_detectors",
    "plus_offsets",
    "plus_template",
    "pointing",
    "threshold_gap",
]
