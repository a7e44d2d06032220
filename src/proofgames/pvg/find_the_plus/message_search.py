"""Exhaustive message search against a FindThePlus verifier: its exact worst case.

A :class:`~proofgames.pvg.tasks.plus_verifier.PlusVerifier` head reads a glimpse by bilinear
sampling at a shift chosen from the message, and the verifier's logit is a bias plus one
linear term per head. When a glimpse's samples lie a whole number of pixels apart (the
default: 10x10 images, zoom 2 and 5x5 glimpses put them one pixel apart), they all share
one fractional offset, so the glimpse at any shift is a bilinear blend of the four
glimpses around it whose samples sit exactly on pixel centres (zero padding included).
A head's term is therefore bilinear in the shift on each cell of that lattice and peaks
at a corner; far outside the image it is constant (the glimpse is all padding). And the
message sets every head's shift independently when the message-to-shift map has full
row rank (8 rows against 32 columns). So the supremum of the logit over *all* messages is

    bias + sum over heads h of max over lattice places c of w_h . glimpse(x, c),

a maximum over a few hundred places, computed here exactly. It is the strongest
adversary there is: the message attack's L-BFGS can only match it. It is also a
certificate: where the bound is below 0, the verifier rejects every message.

With ``bounded_shifts`` (``tanh``), the reachable shifts form an open box; its edges
join the candidate places and the bound is a supremum approached, not reached.

Example:
    >>> import torch
    >>> from proofgames.pvg import FindThePlus
    >>> task = FindThePlus()
    >>> x, _ = task.sample(4, torch.Generator().manual_seed(0))
    >>> verifier = task.make_verifier()
    >>> found = search_messages(verifier, x)
    >>> found.messages.shape, found.reachable
    (torch.Size([4, 32]), True)
    >>> bool(torch.allclose(verifier(x, found.messages), found.bound, atol=1e-4))
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ...errors import PVGError
from ..tasks.plus_verifier import PlusVerifier, pixel_to_shift

__all__ = ["ExhaustiveSearch", "head_scores", "lattice_shifts", "search_messages"]

#: How far inside the open box of ``tanh`` shifts the messages aim.
_EDGE = 1e-6


@dataclass(frozen=True)
class ExhaustiveSearch:
    """The most convincing messages for a batch, found by exhaustive search.

    Attributes:
        messages: ``(n, message_dim)`` messages that reach ``bound`` (up to float error)
            when ``reachable``.
        bound: ``(n,)`` the supremum of the verifier's logit over all messages.
        shifts: ``(n, heads, 2)`` the best ``(tx, ty)`` of each head.
        reachable: whether the message-to-shift map has full row rank, so that every
            combination of head shifts (and thus ``bound``) is reachable. If not,
            ``bound`` is only an upper bound and ``messages`` the least-squares choice.
    """

    messages: Tensor
    bound: Tensor
    shifts: Tensor
    reachable: bool


def _axis_places(verifier: PlusVerifier) -> Tensor:
    """Candidate glimpse centres along one axis, in (fractional) pixels.

    Samples ``spacing`` pixels apart cross pixel centres on a lattice of step 1 when the
    spacing is whole, and of step ``spacing`` when it is ``1/m`` (a zoomed-in glimpse
    that resamples, e.g. 10x10 samples of a 5x5 region): between those places every
    sample's bilinear weights are linear in the centre.
    """
    size, g, spacing = verifier.size, verifier.glimpse, verifier.spacing
    whole = spacing >= 1 - 1e-9 and abs(spacing - round(spacing)) <= 1e-9
    inverse = spacing < 1 and abs(1 / spacing - round(1 / spacing)) <= 1e-9
    if not (whole or inverse):
        raise PVGError(
            "exhaustive search needs glimpse samples a whole number of pixels (or 1/m of a "
            f"pixel) apart; this verifier's are {spacing:g} apart (size / (glimpse * zoom) "
            f"= {size} / ({g} * {verifier.zoom:g}))"
        )
    step = 1.0 if whole else 1.0 / round(1 / spacing)
    half = (round(spacing) if whole else step) * (g - 1) / 2  # centre to outermost sample
    count = math.ceil((size + 2 * half + 2) / step - 1e-9)  # as arange(low, high, step)
    places = -1 - half + step * torch.arange(count, dtype=torch.float64)
    if verifier.bounded_shifts:  # the open box of centres (-1/2, size - 1/2)
        low, high = -0.5, size - 0.5
        inside = places[(places > low) & (places < high)]
        edges = torch.tensor([low, high], dtype=torch.float64)
        places = torch.cat([edges[:1], inside, edges[1:]])
    return places


def lattice_shifts(verifier: PlusVerifier) -> Tensor:
    """``(L, 2)`` shifts ``(tx, ty)`` where some head attains its maximum, for any image.

    Every glimpse centre on the pixel lattice (or its shifted copy, for even glimpses)
    from wholly left of / above the image to wholly right of / below it.

    Raises:
        ValueError: the verifier's glimpse samples are not a whole number of pixels apart.
    """
    places = pixel_to_shift(_axis_places(verifier), verifier.size)
    if verifier.bounded_shifts:
        places = places.clamp(-1 + _EDGE, 1 - _EDGE)
    rows, cols = torch.meshgrid(places, places, indexing="ij")
    return torch.stack([cols.flatten(), rows.flatten()], dim=1).float()


def head_scores(verifier: PlusVerifier, x: Tensor, shifts: Tensor) -> Tensor:
    """``(n, heads, L)``: each head's logit term at each of ``shifts`` ``(L, 2)``."""
    g = verifier.glimpse
    looks = verifier.glimpses_at(x, shifts[None].expand(x.shape[0], -1, -1))
    weights = verifier.readout()[0].view(verifier.heads, g * g)
    return torch.einsum("nlp,hp->nhl", looks.flatten(2), weights)


def search_messages(verifier: PlusVerifier, x: Tensor, chunk: int = 256) -> ExhaustiveSearch:
    """The most convincing message for each image of ``x``, by exhaustive search.

    Args:
        verifier: the (frozen) verifier; not modified.
        x: images ``(n, 1, size, size)`` on the verifier's device.
        chunk: images scored at once (memory: ``chunk * L * glimpse**2`` floats).

    Raises:
        ValueError: the verifier's glimpse samples are not a whole number of pixels apart.
    """
    if chunk < 1:
        raise PVGError(f"chunk must be positive, got {chunk}")
    shifts = lattice_shifts(verifier).to(x.device)
    values, places = [], []
    with torch.no_grad():
        for part in torch.split(x, chunk):
            best = head_scores(verifier, part, shifts).max(dim=2)
            values.append(best.values)
            places.append(best.indices)
        bias = verifier.readout()[1]
        bound = bias + torch.cat(values).sum(dim=1)
        best_shifts = shifts[torch.cat(places)]  # (n, heads, 2)
        weight = verifier.to_shift.weight.double()  # (2 * heads, message_dim)
        target = best_shifts.flatten(1).double()
        if verifier.bounded_shifts:
            target = torch.atanh(target)
        solve = torch.linalg.pinv(weight)
        messages = (target - verifier.to_shift.bias.double()) @ solve.T
    reachable = int(torch.linalg.matrix_rank(weight)) == weight.shape[0]
    return ExhaustiveSearch(
        messages=messages.to(x.dtype), bound=bound, shifts=best_shifts, reachable=reachable
    )
