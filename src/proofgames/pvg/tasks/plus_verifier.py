"""The FindThePlus verifier: spatial-transformer heads that look where the message points.

Kept apart from the task (:mod:`proofgames.pvg.tasks.find_the_plus`) because the
exhaustive message search (:mod:`proofgames.pvg.find_the_plus.message_search`) builds on
the verifier and the task builds on that search; both modules import this one.

Example:
    >>> import torch
    >>> verifier = PlusVerifier()
    >>> x, message = torch.zeros(3, 1, 10, 10), torch.zeros(3, 32)
    >>> verifier(x, message).shape, verifier.glimpses(x, message)[0].shape
    (torch.Size([3]), torch.Size([3, 4, 5, 5]))
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["PlusVerifier", "pixel_to_shift", "shift_to_pixel"]


def pixel_to_shift(pixel: Tensor, extent: int) -> Tensor:
    """Normalized translation that centres a glimpse on pixel coordinate ``pixel``.

    Uses the ``align_corners=False`` convention: pixel ``p`` of an axis of ``extent``
    pixels sits at normalized coordinate ``(2p + 1) / extent - 1``.
    """
    return (2.0 * pixel + 1.0) / extent - 1.0


def shift_to_pixel(shift: Tensor, extent: int) -> Tensor:
    """Inverse of :func:`pixel_to_shift`: the (fractional) pixel a glimpse is centred on."""
    return ((shift + 1.0) * extent - 1.0) / 2.0


class PlusVerifier(nn.Module):
    """Spatial-transformer verifier restricted to shifts.

    A linear map turns the message into one translation ``(tx, ty)`` per head (normalized
    coordinates, ``[-1, 1]`` spans the image). Each head samples a ``glimpse x glimpse``
    patch through the affine map ``[[1/zoom, 0, tx], [0, 1/zoom, ty]]`` (bilinear,
    zero padding outside the image, ``align_corners=False``); a linear classifier reads
    all the glimpses and outputs the logit of P[label 1]. With the defaults (10x10 images,
    zoom 2, 5x5 glimpses) a head sees half the image's extent at its native resolution,
    so a shift that points at a pixel yields exactly the 5x5 patch around it.

    Args:
        size: image side length.
        message_dim: message size.
        heads: number of spatial-transformer heads.
        glimpse: side length of each glimpse, in output samples.
        zoom: magnification (the glimpse covers ``1/zoom`` of each axis).
        bounded_shifts: pass the shifts through ``tanh``, so every glimpse centre stays
            inside the image (the paper lets a head look anywhere, with zero padding; a
            head that drifts wholly outside sees nothing and its shift gets no gradient).
        logits: ``1`` (a single logit) or ``2`` (two class logits, read as their
            difference: the literal reading of a spatial-transformer classifier with a
            softmax over two classes; the same functions, another parametrization).
    """

    def __init__(
        self,
        size: int = 10,
        message_dim: int = 32,
        heads: int = 4,
        glimpse: int = 5,
        zoom: float = 2.0,
        bounded_shifts: bool = False,
        logits: int = 1,
    ) -> None:
        super().__init__()
        if logits not in (1, 2):
            raise ValueError(f"logits must be 1 or 2, got {logits!r}")
        self.size, self.heads, self.glimpse, self.zoom = size, heads, glimpse, zoom
        self.bounded_shifts, self.logits = bounded_shifts, logits
        self.to_shift = nn.Linear(message_dim, 2 * heads)
        self.classifier = nn.Linear(heads * glimpse * glimpse, logits)

    @property
    def spacing(self) -> float:
        """Pixels between neighbouring samples of a glimpse: ``size / (glimpse * zoom)``.

        1 with the defaults (a 5x5 glimpse of a 5-pixel region); 1/2 for the literal
        spatial-transformer reading (10x10 samples of the same region).
        """
        return self.size / (self.glimpse * self.zoom)

    @property
    def half_extent(self) -> float:
        """Pixels from a glimpse's centre to its outermost sample row (or column)."""
        return (self.glimpse - 1) / 2 * self.spacing

    def readout(self) -> tuple[Tensor, Tensor]:
        """The logit as one linear map of the glimpses: ``(weight (heads * g * g,), bias)``.

        With two class logits it is their difference (class 1 minus class 0).
        """
        w, b = self.classifier.weight, self.classifier.bias
        if self.logits == 2:
            return w[1] - w[0], b[1] - b[0]
        return w[0], b[0]

    def shifts(self, message: Tensor) -> Tensor:
        """Translations ``(n, heads, 2)`` as ``(tx, ty)`` in normalized coordinates."""
        out: Tensor = self.to_shift(message)
        if self.bounded_shifts:
            out = torch.tanh(out)
        return out.view(-1, self.heads, 2)

    def glimpses_at(self, x: Tensor, shifts: Tensor) -> Tensor:
        """Glimpses ``(n, k, glimpse, glimpse)`` of images ``x`` at ``shifts`` ``(n, k, 2)``.

        ``k`` is usually the number of heads, but any number of places can be looked at.
        """
        n, k, g = x.shape[0], shifts.shape[1], self.glimpse
        theta = shifts.new_zeros(n * k, 2, 3)
        theta[:, 0, 0] = theta[:, 1, 1] = 1.0 / self.zoom
        theta[:, :, 2] = shifts.reshape(-1, 2)
        grid = F.affine_grid(theta, [n * k, 1, g, g], align_corners=False)
        # Stack the grids vertically so one grid_sample call serves all places.
        grid = grid.view(n, k * g, g, 2)
        out = F.grid_sample(x, grid, padding_mode="zeros", align_corners=False)
        return out.view(n, k, g, g)

    def glimpses(self, x: Tensor, message: Tensor) -> tuple[Tensor, Tensor]:
        """Where each head looks for ``message``.

        Returns:
            ``(glimpses, centres)``: glimpses ``(n, heads, glimpse, glimpse)`` and the
            glimpse centres ``(n, heads, 2)`` as fractional ``(row, col)`` pixel
            coordinates.
        """
        shifts = self.shifts(message)
        height, width = x.shape[-2:]
        centres = torch.stack(
            [shift_to_pixel(shifts[..., 1], height), shift_to_pixel(shifts[..., 0], width)],
            dim=-1,
        )
        return self.glimpses_at(x, shifts), centres

    def forward(self, x: Tensor, message: Tensor) -> Tensor:
        """Logits ``(n,)`` of P[label 1] from the glimpses the message points to."""
        looks = self.glimpses_at(x, self.shifts(message))
        out: Tensor = self.classifier(looks.flatten(1))
        return out[:, 1] - out[:, 0] if self.logits == 2 else out[:, 0]
