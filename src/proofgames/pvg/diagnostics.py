"""Where a FindThePlus verifier looks, and whether it looks at the plus.

Diagnostics of trained agents, used by the reproduction's report: the glimpses of
Figure 4 (:func:`gaze`), heads whose glimpse falls wholly outside the image
(:func:`blind_heads`), heads the prover points at the plus (:func:`on_the_plus`), and
heads whose classifier weights are shaped like a plus (:func:`plus_alignment`).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn

from .._errors import PVGError
from ._memory import DEFAULT_MAX_MEMORY_GB, check_memory
from ._stress_settings import check_seeds
from .find_the_plus import (
    PLUS_OFFSETS,
    FindThePlus,
    PlusVerifier,
    count_accuracy,
    plus_centres,
    plus_maps,
    plus_mask,
)
from .message_search import search_messages
from .plus_verifier import pixel_to_shift
from .stress import evaluate, positive
from .task import PVGTask


def diagnose(
    task: PVGTask,
    prover: nn.Module,
    verifier: nn.Module,
    n: int = 2000,
    seed: int = 0,
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB,
) -> dict[str, Any]:
    """What a trained pair does on ``n`` fresh instances (the ``pvg diagnose`` command).

    Every task: the verifier's accuracy, precision, recall and counts with its own prover
    (and the task's message statistics, e.g. BEC's erasure fraction). FindThePlus adds
    :func:`head_diagnostics`; ``count_accuracy``, what a threshold on the number of
    1-pixels gets without any message (the task's label leak, see
    :class:`~proofgames.pvg.find_the_plus.FindThePlus`).

    Example:
        >>> import torch
        >>> from proofgames.pvg import make_task
        >>> task = make_task("find-the-plus")
        >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
        <torch._C.Generator object at ...>
        >>> report = diagnose(task, task.make_prover(), task.make_verifier(), n=64)
        >>> report["n"], len(report["plus_alignment"]), 0.5 <= report["count_accuracy"] <= 1
        (64, 4, True)

    Raises:
        PVGError: ``n`` below 1, or ``n`` instances estimated to need more memory than
            ``max_memory_gb`` (GB).
    """
    positive(n=n)
    check_seeds(seed=seed)
    check_memory(task, [("n (--n)", n, 0.0)], max_memory_gb)
    device = next(verifier.parameters()).device
    x, y = (t.to(device) for t in task.sample(n, torch.Generator().manual_seed(seed)))
    report: dict[str, Any] = {"n": n, **evaluate(task, prover, verifier, x, y, seed)}
    if isinstance(task, FindThePlus):
        report["count_accuracy"] = count_accuracy(x, y)
        report.update(head_diagnostics(task, prover, verifier, n, seed))
    return report


def attack_anatomy(verifier: PlusVerifier, x: Tensor, y: Tensor) -> dict[str, Any]:
    """How the exhaustive attack gets the label-0 images of ``(x, y)`` accepted, by head.

    The verifier's logit is its bias plus one term per head (the head's glimpse read
    by its classifier weights); the exact search
    (:func:`~proofgames.pvg.message_search.search_messages`) places each head where its
    term is largest. A sound verifier must keep the sum below 0 on every label-0 image,
    so this shows which heads pay the bias: the plus head on a partial plus, or other
    heads (blind ones included: the attack can point a head its prover never uses back
    into the image).

    Returns:
        ``readout_bias``; ``attack_accepts_label0``: the share of label-0 images the best
        message gets accepted (1 minus the exhaustive specificity);
        ``attack_terms`` and ``attack_terms_min``: per head, the mean and the least of
        its term at the attack's place; ``attack_plus_cells``: for the most plus-shaped
        head (:func:`plus_detectors`), how many label-0 images show it 0, 1, ..., 5 plus
        cells of 1-pixels where its detector looks (only for glimpses sampled a pixel
        apart, else ``None``).
    """
    negative = x[y < 0.5]
    if negative.shape[0] == 0:
        raise PVGError("attack_anatomy needs label-0 images")
    with torch.no_grad():
        found = search_messages(verifier, negative)
        looks = verifier.glimpses_at(negative, found.shifts)  # (n, heads, g, g)
        weights, bias = (t.detach() for t in verifier.readout())
        g = verifier.glimpse
        terms = torch.einsum("nhp,hp->nh", looks.flatten(2), weights.view(verifier.heads, g * g))
    report: dict[str, Any] = {
        "readout_bias": round(float(bias), 4),
        "attack_accepts_label0": round(float((found.bound > 0).float().mean()), 4),
        "attack_terms": [round(float(v), 4) for v in terms.mean(0)],
        "attack_terms_min": [round(float(v), 4) for v in terms.min(0).values],
        "attack_plus_cells": None,
    }
    if verifier.spacing == 1.0 and g % 2 == 1:
        detectors = plus_detectors(verifier)
        head = max(range(verifier.heads), key=lambda h: float(detectors[h]["alignment"]))
        r, c = (g // 2 + d for d in detectors[head]["offset"])
        cells = torch.stack([looks[:, head, r + dr, c + dc] for dr, dc in PLUS_OFFSETS], 1)
        counts = torch.bincount((cells > 0.5).sum(1).cpu(), minlength=len(PLUS_OFFSETS) + 1)
        report["attack_plus_cells"] = [int(v) for v in counts]
    return report


#: The plus cells in :data:`~proofgames.pvg.find_the_plus.PLUS_OFFSETS` order.
PLUS_CELLS = ("centre", "up", "down", "left", "right")


def missing_cells(
    verifier: PlusVerifier, prover: nn.Module, x: Tensor, y: Tensor
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
    detectors = plus_detectors(verifier)
    head = max(range(verifier.heads), key=lambda h: float(detectors[h]["alignment"]))
    r, c = (g // 2 + d for d in detectors[head]["offset"])
    negative = x[y < 0.5]
    with torch.no_grad():
        message = prover(negative, None).message
        accepted = verifier(negative, message) > 0
        shown = verifier.glimpses(negative, message)[0]
        attacked = verifier.glimpses_at(negative, search_messages(verifier, negative).shifts)

    def census(looks: Tensor, keep: Tensor) -> list[int]:
        cells = torch.stack([looks[:, head, r + dr, c + dc] for dr, dc in PLUS_OFFSETS], 1)
        ones = cells[keep] > 0.5
        return [int(v) for v in (~ones[ones.sum(1) == 4]).sum(0)]

    everywhere = torch.ones_like(accepted)
    return {
        "cells": list(PLUS_CELLS),
        "prover": census(shown, everywhere),
        "prover_accepted": census(shown, accepted),
        "attack": census(attacked, everywhere),
    }


def threshold_gap(
    verifier: PlusVerifier,
    prover: nn.Module,
    calibrate: tuple[Tensor, Tensor],
    check: tuple[Tensor, Tensor],
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
        shift = -float(search_messages(verifier, calibrate[0][calibrate[1] < 0.5]).bound.max())
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


def gaze(task: FindThePlus, prover: nn.Module, verifier: nn.Module, n: int = 6) -> dict[str, Any]:
    """Where each head of ``verifier`` looks on ``n`` fresh images, half with label 1."""
    if not isinstance(verifier, PlusVerifier):
        raise TypeError("gaze needs a PlusVerifier")
    device = next(verifier.parameters()).device
    x, y = task.sample(64, torch.Generator().manual_seed(12345))
    order = torch.argsort(-y, stable=True)
    pick = torch.cat([order[: n // 2], order[-(n - n // 2) :]])
    x, y = x[pick].to(device), y[pick].to(device)
    prover.eval()
    verifier.eval()
    with torch.no_grad():
        message = prover(x, None).message
        glimpses, centres = verifier.glimpses(x, message)
        logits = verifier(x, message)
    zeros, ones = plus_maps(x)
    where = (zeros | ones).flatten(1).float().argmax(dim=1)
    side = x.shape[-1] - 2
    return {
        "plus_centres": [[int(i // side) + 1, int(i % side) + 1] for i in where.tolist()],
        "images": x[:, 0].cpu().tolist(),
        "labels": y.cpu().tolist(),
        "glimpses": glimpses.cpu().tolist(),
        "centres": centres.cpu().tolist(),
        "logits": logits.cpu().tolist(),
        "zoom": verifier.zoom,
    }


def _head_centres(
    task: FindThePlus, prover: nn.Module, verifier: nn.Module, n: int, seed: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Images, labels and glimpse centres ``(n, heads, 2)`` on a fixed evaluation batch."""
    if not isinstance(verifier, PlusVerifier):
        raise TypeError("head diagnostics need a PlusVerifier")
    device = next(verifier.parameters()).device
    x, y = (t.to(device) for t in task.sample(n, torch.Generator().manual_seed(seed)))
    prover.eval()
    verifier.eval()
    with torch.no_grad():
        _, centres = verifier.glimpses(x, prover(x, None).message)
    return x, y, centres


def head_diagnostics(
    task: FindThePlus, prover: nn.Module, verifier: nn.Module, n: int = 1000, seed: int = 54321
) -> dict[str, Any]:
    """:func:`blind_heads`, :func:`on_the_plus`, plus shapes, the attack, the threshold.

    The plus shapes are :func:`plus_alignment` (centred) and :func:`plus_detectors`.
    One batch of ``n`` images (of ``seed``) serves them all and :func:`attack_anatomy`;
    ``missing_cells`` is :func:`missing_cells` on it; ``threshold`` is
    :func:`threshold_gap` calibrated on it and checked on the next ``n`` images of that
    seed. Each of these three is ``{"skipped": why}`` where the exact search cannot cover
    the verifier's glimpses (or a batch lacks a label).
    """
    v = _plus_verifier(verifier)
    x, y, centres = _head_centres(task, prover, verifier, n, seed)
    gen = torch.Generator().manual_seed(seed)
    task.sample(n, gen)  # the batch above; the check batch comes next
    check = tuple(t.to(x.device) for t in task.sample(n, gen))
    found: dict[str, Any] = {}
    for key, measure in (
        ("attack", lambda: attack_anatomy(v, x, y)),
        ("missing_cells", lambda: missing_cells(v, prover, x, y)),
        ("threshold", lambda: threshold_gap(v, prover, (x, y), (check[0], check[1]))),
    ):
        try:
            found[key] = measure()
        except PVGError as exc:
            found[key] = {"skipped": str(exc)}
    return {
        "blind_heads": _blind_share(v.half_extent, x, y, centres),
        "on_the_plus": _plus_share(x, y, centres, tolerance=0.5),
        "plus_alignment": plus_alignment(verifier),
        "plus_detectors": plus_detectors(verifier),
        **found,
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


def blind_heads(
    task: FindThePlus, prover: nn.Module, verifier: nn.Module, n: int = 1000, seed: int = 54321
) -> dict[str, list[float]]:
    """Per head, the share of images on which its whole glimpse falls on zero padding.

    A glimpse's outermost samples lie ``half_extent`` pixels from its centre
    (``glimpse // 2`` with the defaults); bilinear sampling sees a pixel only within one
    pixel of it, so a head is blind on an image when every sample row (or column) lies at
    least one pixel outside the image.  A blind head
    also passes no gradient back to its shift.  Reported separately for label-1 and
    label-0 images (a head blind on one label only is a *tell*).
    """
    half = _plus_verifier(verifier).half_extent
    return _blind_share(half, *_head_centres(task, prover, verifier, n, seed))


def on_the_plus(
    task: FindThePlus,
    prover: nn.Module,
    verifier: nn.Module,
    n: int = 1000,
    seed: int = 54321,
    tolerance: float = 0.5,
) -> list[float]:
    """Per head, the share of label-1 images whose glimpse is centred on the plus.

    The honest protocol of the paper's Figure 1: the prover points a head at the plus
    of 1-pixels (within ``tolerance`` pixels on both axes), and the verifier checks it.
    Near 0 for every head means that no head follows the plus, whatever the accuracy.
    """
    return _plus_share(*_head_centres(task, prover, verifier, n, seed), tolerance)


def pointing(
    verifier: nn.Module, prover: nn.Module, x: Tensor, y: Tensor, head: int | None = None
) -> dict[str, float]:
    """Where ``prover`` points ``verifier``'s heads on the label-1 images of ``(x, y)``.

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
    was_training = prover.training
    prover.eval()
    with torch.no_grad():
        _, centres = v.glimpses(x[positive], prover(x[positive], None).message)
    prover.train(was_training)
    truth = plus_centres(x[positive]).to(centres.device)
    looks_at = centres[:, head] + torch.tensor(detectors[head]["offset"]).to(centres)
    error = (looks_at - truth).pow(2).sum(dim=1).mean().sqrt()
    near = (looks_at - truth).abs().amax(dim=-1) <= 0.5
    return {"pointing_error_px": float(error), "on_plus": float(near.float().mean())}


def _plus_verifier(verifier: nn.Module) -> PlusVerifier:
    if not isinstance(verifier, PlusVerifier):
        raise TypeError("head diagnostics need a PlusVerifier")
    return verifier


def _blind_share(half: float, x: Tensor, y: Tensor, centres: Tensor) -> dict[str, list[float]]:
    size = x.shape[-1]
    outside = (centres + half <= -1) | (centres - half >= size)  # (n, heads, 2)
    blind = outside.any(dim=-1).float()
    return {
        "label 1": [round(float(v), 4) for v in blind[y > 0.5].mean(0)],
        "label 0": [round(float(v), 4) for v in blind[y < 0.5].mean(0)],
    }


def _plus_share(x: Tensor, y: Tensor, centres: Tensor, tolerance: float) -> list[float]:
    positive = y > 0.5
    distance = (centres[positive] - plus_centres(x[positive])[:, None, :]).abs()
    hit = (distance.amax(dim=-1) <= tolerance).float()  # (positives, heads)
    return [round(float(v), 4) for v in hit.mean(0)]


__all__ = [
    "PLUS_CELLS",
    "attack_anatomy",
    "blind_heads",
    "diagnose",
    "gaze",
    "head_diagnostics",
    "missing_cells",
    "on_the_plus",
    "plus_alignment",
    "plus_detectors",
    "plus_offsets",
    "plus_template",
    "pointing",
    "threshold_gap",
]
