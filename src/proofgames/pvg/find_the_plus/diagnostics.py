"""Where a FindThePlus verifier looks, and whether it looks at the plus.

Diagnostics of trained agents, used by the reproduction's report: the glimpses of
Figure 4 (:func:`gaze`), heads whose glimpse falls wholly outside the image
(:func:`blind_heads`), heads the prover points at the plus (:func:`on_the_plus`,
:func:`pointing`), and how the exhaustive attack wins (:func:`attack_anatomy`). What the
heads detect is in :mod:`proofgames.pvg.find_the_plus.detectors`, whose functions are
re-exported here.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from ...errors import PVGError
from .._memory import DEFAULT_MAX_MEMORY_GB, check_memory
from .._stress_settings import check_seeds
from ..registry import task_defaults
from ..stress import evaluate, positive
from ..task import PVGTask
from ..tasks.find_the_plus import (
    PLUS_OFFSETS,
    FindThePlus,
    PlusVerifier,
    count_accuracy,
    plus_centres,
    plus_maps,
)
from .detectors import (
    PLUS_CELLS,
    _plus_verifier,
    best_detector,
    detector_figures,
    detector_gradient,
    detector_place,
    missing_cells,
    plus_alignment,
    plus_cells,
    plus_detectors,
    plus_offsets,
    plus_template,
    pointing,
    threshold_gap,
)
from .message_search import ExhaustiveSearch, search_messages


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
    :class:`~proofgames.pvg.tasks.find_the_plus.FindThePlus`); and ``detector_gradient``
    (:func:`~proofgames.pvg.find_the_plus.detectors.detector_gradient` on the same instances, with
    the task's training label smoothing).

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
        smoothing = float(task_defaults(task.name).get("label_smoothing", 0.0))
        try:
            report["detector_gradient"] = detector_gradient(
                _plus_verifier(verifier), prover, x, y, smoothing
            )
        except PVGError as exc:
            report["detector_gradient"] = {"skipped": str(exc)}
    return report


def attack_anatomy(
    verifier: PlusVerifier, x: Tensor, y: Tensor, found: ExhaustiveSearch | None = None
) -> dict[str, Any]:
    """How the exhaustive attack gets the label-0 images of ``(x, y)`` accepted, by head.

    The verifier's logit is its bias plus one term per head (the head's glimpse read
    by its classifier weights); the exact search
    (:func:`~proofgames.pvg.find_the_plus.message_search.search_messages`) places each
    head where its term is largest. A sound verifier must keep the sum below 0 on every
    label-0 image, so this shows which heads pay the bias: the plus head on a partial
    plus, or other heads (blind ones included: the attack can point a head its prover
    never uses back into the image).

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
        found = found or search_messages(verifier, negative)
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
        cells = plus_cells(looks, detector_place(verifier))
        counts = torch.bincount((cells > 0.5).sum(1).cpu(), minlength=len(PLUS_OFFSETS) + 1)
        report["attack_plus_cells"] = [int(v) for v in counts]
    return report


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
    seed; ``pointing`` is :func:`pointing` on it (where the prover aims the most
    plus-shaped head's detector). Each of these four is ``{"skipped": why}`` where it
    cannot be measured (the exact search cannot cover the verifier's glimpses, a batch
    lacks a label).
    """
    v = _plus_verifier(verifier)
    x, y, centres = _head_centres(task, prover, verifier, n, seed)
    gen = torch.Generator().manual_seed(seed)
    task.sample(n, gen)  # the batch above; the check batch comes next
    check = tuple(t.to(x.device) for t in task.sample(n, gen))
    try:  # one exact search of the label-0 images serves the three measures below
        with torch.no_grad():
            search = search_messages(v, x[y < 0.5]) if bool((y < 0.5).any()) else None
    except PVGError:
        search = None  # each measure below then says why it is skipped
    found: dict[str, Any] = {}
    for key, measure in (
        ("attack", lambda: attack_anatomy(v, x, y, search)),
        ("missing_cells", lambda: missing_cells(v, prover, x, y, search)),
        ("threshold", lambda: threshold_gap(v, prover, (x, y), (check[0], check[1]), search)),
        ("pointing", lambda: pointing(v, prover, x, y)),
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
    "best_detector",
    "blind_heads",
    "detector_figures",
    "detector_gradient",
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
