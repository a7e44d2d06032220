"""The plus of FindThePlus images: its five cells, masks, and where an image's pluses are.

Private to :mod:`proofgames.pvg.tasks.find_the_plus`, which re-exports these names; kept
apart so that the FindThePlus research code (:mod:`proofgames.pvg.find_the_plus`), which
the task's logged figures use, can build on them without importing the task.

Example:
    >>> import torch
    >>> mask = plus_mask(torch.tensor([2]), torch.tensor([3]), 6)
    >>> image = torch.full((1, 1, 6, 6), 0.5).masked_fill(mask[:, None], 1.0)
    >>> int(mask.sum()), plus_centres(image).tolist(), count_pluses(image)
    (5, [[2.0, 3.0]], (tensor([0]), tensor([1])))
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = ["PLUS_OFFSETS", "count_pluses", "plus_centres", "plus_maps", "plus_mask"]

#: (row, column) offsets of the five plus cells from its centre.
PLUS_OFFSETS = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))


def plus_mask(rows: Tensor, cols: Tensor, size: int) -> Tensor:
    """Boolean masks ``(n, size, size)`` of the pluses centred at ``(rows[i], cols[i])``."""
    n = rows.shape[0]
    mask = torch.zeros(n, size, size, dtype=torch.bool, device=rows.device)
    index = torch.arange(n, device=rows.device)
    for dr, dc in PLUS_OFFSETS:
        mask[index, rows + dr, cols + dc] = True
    return mask


def plus_maps(images: Tensor) -> tuple[Tensor, Tensor]:
    """Where zero-pluses and one-pluses are centred: two bool maps ``(n, size-2, size-2)``.

    Entry ``[i, r, c]`` refers to the plus centred at pixel ``(r + 1, c + 1)``.
    """
    x = images.reshape(-1, 1, *images.shape[-2:]).float()
    kernel = torch.zeros(1, 1, 3, 3, device=x.device)
    for dr, dc in PLUS_OFFSETS:
        kernel[0, 0, 1 + dr, 1 + dc] = 1.0
    ones = F.conv2d(x, kernel)[:, 0]
    zeros = F.conv2d(1.0 - x, kernel)[:, 0]
    return zeros > 4.5, ones > 4.5


def plus_centres(images: Tensor) -> Tensor:
    """``(n, 2)`` float ``(row, col)`` pixel of each image's plus centre (either colour).

    Meant for task images, which hold exactly one plus; with several, the first in
    row-major order is returned, and with none, ``(1, 1)``.
    """
    zeros, ones = plus_maps(images)
    inner = zeros.shape[-1]
    flat = (zeros | ones).flatten(1).float().argmax(dim=1)
    return torch.stack([flat // inner + 1, flat % inner + 1], dim=1).float()


def count_pluses(images: Tensor) -> tuple[Tensor, Tensor]:
    """Number of pluses of 0-pixels and of 1-pixels in each binary image.

    Args:
        images: ``(n, 1, H, W)`` or ``(n, H, W)`` tensor of 0/1 values.

    Returns:
        ``(n_zero_plus, n_one_plus)``, two integer tensors of shape ``(n,)``.
    """
    zeros, ones = plus_maps(images)
    return zeros.flatten(1).sum(1), ones.flatten(1).sum(1)
