"""FindThePlus: the visual-search task of Prover-Verifier Games (Anil et al. 2021, E.2).

Each instance is a single-channel ``size x size`` binary image (default 10x10) holding
exactly one plus: the centre cell of a 3x3 window and its four edge neighbours, all equal
to the plus's colour. The label is that colour (1 for a plus of 1-pixels). The verifier
never sees the whole image: it reads glimpses that its spatial-transformer heads take at
places chosen from the prover's 32-dimensional message, so an honest prover must say
*where* the plus is, and a sound verifier accepts only when a glimpse shows one.
The verifier, :class:`PlusVerifier`, lives in :mod:`proofgames.pvg.tasks.plus_verifier`
(the exhaustive message search, :mod:`proofgames.pvg.find_the_plus.message_search`,
builds on it) and is re-exported here, as are the plus's cells and masks
(:data:`PLUS_OFFSETS`, :func:`plus_mask`, :func:`plus_maps`, :func:`plus_centres`,
:func:`count_pluses`). The research code on this task (why trained verifiers are not
sound, and what would make them) is in :mod:`proofgames.pvg.find_the_plus`.

Example:
    >>> import torch
    >>> task = FindThePlus()
    >>> x, y = task.sample(6, torch.Generator().manual_seed(0))
    >>> x.shape, int(y.sum())
    (torch.Size([6, 1, 10, 10]), 3)
    >>> zeros, ones = count_pluses(x)
    >>> (zeros + ones).tolist(), bool((ones == y).all())
    ([1, 1, 1, 1, 1, 1], True)
    >>> prover, verifier = task.make_prover(), task.make_verifier()
    >>> out = prover(x, y)
    >>> out.message.shape, verifier(x, out.message).shape
    (torch.Size([6, 32]), torch.Size([6]))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...errors import PVGError
from ..find_the_plus.detectors import detector_figures, pointing
from ..find_the_plus.message_search import lattice_shifts, search_messages
from ..task import ProverOutput, PVGTask, check_arguments
from ._plus_pattern import PLUS_OFFSETS, count_pluses, plus_centres, plus_maps, plus_mask
from .plus_verifier import PlusVerifier, pixel_to_shift, shift_to_pixel

__all__ = [
    "PLUS_OFFSETS",
    "FindThePlus",
    "PlusProver",
    "PlusVerifier",
    "SpatialBroadcastDecoder",
    "count_accuracy",
    "count_pluses",
    "pixel_to_shift",
    "plus_centres",
    "plus_maps",
    "plus_mask",
    "shift_to_pixel",
]


def _match_count(images: Tensor, planted: Tensor, target: Tensor, gen: torch.Generator) -> None:
    """Flip random background cells of ``images`` (in place) until each holds ``target`` ones."""
    n = images.shape[0]
    flat, free = images.view(n, -1), ~planted.view(n, -1)
    missing = target - flat.sum(dim=1).long()  # > 0: too few ones
    wrong = torch.where(missing[:, None] > 0, flat < 0.5, flat > 0.5) & free
    score = torch.rand(flat.shape, generator=gen, device=flat.device).masked_fill(~wrong, 2.0)
    order = score.argsort(dim=1)
    take = torch.arange(flat.shape[1], device=flat.device)[None, :] < missing.abs()[:, None]
    rows = torch.arange(n, device=flat.device)[:, None].expand_as(order)
    cells = order[take]
    flat[rows[take], cells] = 1.0 - flat[rows[take], cells]


def count_accuracy(images: Tensor, labels: Tensor) -> float:
    """Best accuracy of a threshold on the number of 1-pixels: a label leak, if above 0.5.

    Each threshold predicts label 1 above it; the best over all thresholds is returned
    (measured on the given images, so slightly optimistic on small batches).
    """
    counts = images.flatten(1).sum(dim=1)
    thresholds = torch.arange(images[0].numel() + 2, device=counts.device)
    predicted = counts[None, :] >= thresholds[:, None]  # (thresholds, n)
    return float((predicted == (labels > 0.5)[None, :]).float().mean(dim=1).max())


class SpatialBroadcastDecoder(nn.Module):
    """Spatial broadcast decoder: tile a latent over the grid, add coordinates, convolve.

    Three 3x3 convolutions (``hidden`` channels, LeakyReLU between them); the last one
    outputs one channel, the reconstructed image.
    """

    coords: Tensor

    def __init__(self, latent_dim: int, size: int, hidden: int = 32) -> None:
        super().__init__()
        self.size = size
        axis = torch.linspace(-1.0, 1.0, size)
        grid_y, grid_x = torch.meshgrid(axis, axis, indexing="ij")
        self.register_buffer("coords", torch.stack([grid_y, grid_x])[None])
        self.net = nn.Sequential(
            nn.Conv2d(latent_dim + 2, hidden, 3, padding=1),
            nn.LeakyReLU(),
            nn.Conv2d(hidden, hidden, 3, padding=1),
            nn.LeakyReLU(),
            nn.Conv2d(hidden, 1, 3, padding=1),
        )

    def forward(self, latent: Tensor) -> Tensor:
        """Reconstruction ``(n, 1, size, size)`` from ``latent`` ``(n, latent_dim)``."""
        n = latent.shape[0]
        tiled = latent[:, :, None, None].expand(-1, -1, self.size, self.size)
        coords = self.coords.expand(n, -1, -1, -1)
        out: Tensor = self.net(torch.cat([tiled, coords], dim=1))
        return out


def _checked_pool(pool: int) -> int:
    if pool < 0:
        raise PVGError(f"pool must be 0 (global) or a positive window, got {pool}")
    return pool


class PlusProver(nn.Module):
    """Convolutional prover with auxiliary classification and autoencoding heads.

    Backbone: three 3x3 convolutions (``channels`` wide, padding 1), each followed by
    LeakyReLU and InstanceNorm, then a ``pool x pool`` average pool (Appendix E.2: "a
    mean-pooling operation"). The pooled feature map feeds a linear layer (the message),
    a linear classifier and, through a linear projection to ``latent_dim``, a
    :class:`SpatialBroadcastDecoder`.

    The paper does not give the pooling window. A *global* mean pool cannot be what it
    used: right after a per-channel InstanceNorm it makes every image's features (hence
    its message) the same. ``pool=0`` selects a global mean pool anyway, with the last
    InstanceNorm dropped so that the features still vary; but a global pool keeps only
    what the zero padding at the borders reveals about where the plus is, and it learns
    to say where far more slowly (see the FindThePlus notes in docs/pvg.md).

    Args:
        size: image side length.
        message_dim: message size.
        channels: backbone width.
        pool: average-pooling window before the heads; ``0`` for a global mean pool.
        latent_dim: size of the decoder's latent vector.
        decoder_channels: hidden width of the decoder.
        cls_weight: weight of the auxiliary classification BCE (0 turns it off).
        recon_weight: weight of the pixelwise-MSE reconstruction loss (0 turns it off).
    """

    def __init__(
        self,
        size: int = 10,
        message_dim: int = 32,
        channels: int = 40,
        pool: int = 2,
        latent_dim: int = 32,
        decoder_channels: int = 32,
        cls_weight: float = 1.0,
        recon_weight: float = 1.0,
    ) -> None:
        super().__init__()
        self.pool = _checked_pool(pool)
        self.cls_weight = cls_weight
        self.recon_weight = recon_weight
        layers: list[nn.Module] = []
        for i in range(3):
            layers += [nn.Conv2d(1 if i == 0 else channels, channels, 3, padding=1)]
            layers += [nn.LeakyReLU()]
            if pool or i < 2:
                layers += [nn.InstanceNorm2d(channels, affine=True)]
        self.backbone = nn.Sequential(*layers)
        cells = math.ceil(size / pool) ** 2 if pool else 1
        self.feature_dim = channels * cells
        self.to_message = nn.Linear(self.feature_dim, message_dim)
        self.classifier = nn.Linear(self.feature_dim, 1)
        self.decoder = nn.Sequential(
            nn.Linear(self.feature_dim, latent_dim),
            SpatialBroadcastDecoder(latent_dim, size, decoder_channels),
        )

    def features(self, x: Tensor) -> Tensor:
        """Pooled backbone features ``(n, feature_dim)`` of images ``(n, 1, H, W)``."""
        feats: Tensor = self.backbone(x)
        if not self.pool:
            return feats.mean(dim=(2, 3))
        return F.avg_pool2d(feats, self.pool, ceil_mode=True).flatten(1)

    def classify(self, x: Tensor) -> Tensor:
        """Logits ``(n,)`` of the auxiliary classification head."""
        logits: Tensor = self.classifier(self.features(x))
        return logits[:, 0]

    def forward(self, x: Tensor, labels: Tensor | None = None) -> ProverOutput:
        """Message and auxiliary loss.

        ``labels`` (true labels) only feed the auxiliary heads; without them no auxiliary
        loss is computed (it is 0), which saves the decoder's cost when only the message
        is needed.
        """
        feats = self.features(x)
        message: Tensor = self.to_message(feats)
        aux = x.new_zeros(())
        if labels is None:
            return ProverOutput(message=message, aux_loss=aux)
        if self.recon_weight:
            aux = aux + self.recon_weight * F.mse_loss(self.decoder(feats), x)
        if self.cls_weight:
            logits: Tensor = self.classifier(feats)
            aux = aux + self.cls_weight * F.binary_cross_entropy_with_logits(
                logits[:, 0], labels.float()
            )
        return ProverOutput(message=message, aux_loss=aux)


@dataclass(eq=False)
class FindThePlus(PVGTask):
    """The FindThePlus task.

    Attributes:
        size: image side length (the paper uses 10).
        cls_weight: prover's auxiliary classification loss weight.
        recon_weight: prover's auxiliary reconstruction loss weight.
        glimpse: side length of each verifier glimpse.
        max_repairs: bound on background repair rounds in :meth:`sample`.
        bounded_shifts: the verifier keeps its glimpse centres inside the image (see
            :class:`PlusVerifier`; off in the paper).
        pool: the prover's average-pooling window, ``0`` for a global mean pool (see
            :class:`PlusProver`).
        heads: the verifier's spatial-transformer heads, 1 to 16 (the paper uses 4; at most
            ``message_dim / 2``, so that each head's shift is a separate linear read of
            the message and the exhaustive search can send any combination).
        logits: the verifier's class logits, ``1`` or ``2`` (see :class:`PlusVerifier`).
            ``glimpse=10, logits=2`` is the literal spatial-transformer reading: each head
            resamples its 5x5 region to 10x10 (zoom 2, the input's size) and the
            classifier has two logits.
        balanced_ones: make the number of 1-pixels independent of the label. With
            uniform noise around the planted plus, label-1 images hold 5 more planted
            1-pixels than label-0 images, and thresholding the count of 1-pixels alone
            is right about 68% of the time (:func:`count_accuracy`), a shortcut that
            needs no message. With this option each image's count is drawn from one
            binomial, whatever the label, and the background is filled to match it.
            Off by default: the paper does not say how its background was drawn.
    """

    name = "find-the-plus"
    message_dim = 32
    size: int = 10
    cls_weight: float = 1.0
    recon_weight: float = 1.0
    glimpse: int = 5
    max_repairs: int = 1000
    bounded_shifts: bool = False
    pool: int = 2
    balanced_ones: bool = False
    logits: int = 1
    heads: int = 4

    def __post_init__(self) -> None:
        if self.logits not in (1, 2):
            raise PVGError(f"find-the-plus: logits must be 1 or 2, got logits={self.logits!r}")
        if self.heads > self.message_dim // 2:
            raise PVGError(
                f"find-the-plus: heads must be at most {self.message_dim // 2} (two message "
                f"coordinates per head), got heads={self.heads}"
            )
        if self.size < 3:
            raise PVGError(f"find-the-plus: images must be at least 3x3, got size={self.size}")
        _checked_pool(self.pool)
        check_arguments(
            self.name,
            at_least={
                "glimpse": (self.glimpse, 1),
                "max_repairs": (self.max_repairs, 1),
                "heads": (self.heads, 1),
            },
            not_negative={"cls_weight": self.cls_weight, "recon_weight": self.recon_weight},
        )

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``n`` images ``(n, 1, size, size)`` and labels ``(n,)`` on the generator's device.

        Exactly ``n // 2`` labels are 1 (plus a fair coin for odd ``n``), shuffled. The
        background is uniform noise, then repaired: while an image holds a plus other than
        the planted one, a random cell of that plus (outside the planted plus) is flipped.
        """
        dev, s = generator.device, self.size
        labels = torch.zeros(n, device=dev)
        labels[: n // 2] = 1.0
        coin = torch.rand(1, generator=generator, device=dev)
        if n % 2:
            labels[-1] = (coin < 0.5).float()
        labels = labels[torch.randperm(n, generator=generator, device=dev)]
        images = (torch.rand(n, s, s, generator=generator, device=dev) < 0.5).float()
        rows = torch.randint(1, s - 1, (n,), generator=generator, device=dev)
        cols = torch.randint(1, s - 1, (n,), generator=generator, device=dev)
        planted = plus_mask(rows, cols, s)
        images = torch.where(planted, labels[:, None, None], images)
        target = None
        if self.balanced_ones:  # one count distribution for both labels
            draws = torch.rand(n, s * s, generator=generator, device=dev) < 0.5
            target = draws.sum(dim=1).clamp(len(PLUS_OFFSETS), s * s - len(PLUS_OFFSETS))
            _match_count(images, planted, target, generator)
        self._repair(images, planted, rows, cols, generator, target)
        return images[:, None], labels

    def _repair(
        self,
        images: Tensor,
        planted: Tensor,
        rows: Tensor,
        cols: Tensor,
        gen: torch.Generator,
        target: Tensor | None = None,
    ) -> None:
        """Flip background cells in place until each image holds only its planted plus.

        With ``target`` (per-image counts of 1-pixels), each round also flips random
        background cells to restore the counts; the loop ends only when both hold.
        """
        n, s, dev = images.shape[0], self.size, images.device
        index = torch.arange(n, device=dev)
        own = torch.zeros(n, s - 2, s - 2, dtype=torch.bool, device=dev)
        own[index, rows - 1, cols - 1] = True
        flat = images.view(n, s * s)
        for _ in range(self.max_repairs):
            zeros, ones = plus_maps(images)
            extra = (zeros | ones) & ~own
            bad = extra.flatten(1).any(dim=1)
            if not bool(bad.any()):
                return
            # One extra plus per bad image, chosen at random; then one of its free cells.
            score = torch.rand(extra.shape, generator=gen, device=dev).masked_fill(~extra, -1.0)
            pick = score.flatten(1).argmax(dim=1)
            victim = plus_mask(pick // (s - 2) + 1, pick % (s - 2) + 1, s) & ~planted
            cell_score = torch.rand(n, s, s, generator=gen, device=dev)
            cell = cell_score.masked_fill(~victim, -1.0).flatten(1).argmax(dim=1)
            idx, cell = index[bad], cell[bad]
            flat[idx, cell] = 1.0 - flat[idx, cell]
            if target is not None:
                _match_count(images, planted, target, gen)
        raise RuntimeError(f"background repair did not finish in {self.max_repairs} rounds")

    def make_prover(self) -> PlusProver:
        """A fresh :class:`PlusProver` (call as ``prover(x, labels)``)."""
        return PlusProver(
            size=self.size,
            message_dim=self.message_dim,
            pool=self.pool,
            cls_weight=self.cls_weight,
            recon_weight=self.recon_weight,
        )

    def make_verifier(self) -> PlusVerifier:
        """A fresh :class:`PlusVerifier` (call as ``verifier(x, message)``)."""
        return PlusVerifier(
            size=self.size,
            message_dim=self.message_dim,
            glimpse=self.glimpse,
            bounded_shifts=self.bounded_shifts,
            logits=self.logits,
            heads=self.heads,
        )

    def best_messages(self, verifier: nn.Module, x: Tensor) -> Tensor:
        """Messages maximizing ``verifier``'s logit on ``x``, found exactly.

        See :func:`proofgames.pvg.find_the_plus.message_search.search_messages`.
        """
        if not isinstance(verifier, PlusVerifier):
            name = type(verifier).__name__
            raise TypeError(f"exhaustive search needs a PlusVerifier, got {name}")
        return search_messages(verifier, x).messages

    def check_exhaustive(self) -> None:
        """Refuse (``PVGError``) a glimpse geometry the exact search cannot cover."""
        with torch.random.fork_rng(devices=[]):  # building a verifier draws weights
            lattice_shifts(self.make_verifier())

    def message_from_free(self, free: Tensor, x: Tensor) -> Tensor:
        """Messages are unconstrained real vectors: the identity."""
        return free

    def deterministic_prover(self, prover: nn.Module) -> bool:
        """Yes for a :class:`PlusProver`: it sends the same messages in either mode.

        Its messages are a linear read of convolutional features whose InstanceNorm uses
        each image's own statistics in training and evaluation alike; it draws no noise.
        Agents of another class handed to training get the default (no).

        Example:
            >>> task = FindThePlus()
            >>> with torch.random.fork_rng():  # building a prover draws its weights
            ...     prover = task.make_prover()
            >>> task.deterministic_prover(prover)
            True
        """
        return type(prover) is PlusProver

    def logged_metrics(
        self,
        prover: nn.Module,
        verifier: nn.Module,
        x: Tensor,
        y: Tensor,
        message: Tensor | None = None,
    ) -> dict[str, float]:
        """Where the prover points the plus detector, for each logged training row.

        :func:`~proofgames.pvg.find_the_plus.detectors.pointing` on ``(x, y)``:
        ``pointing_error_px``, the rms distance from where the most plus-shaped head's
        detector looks to the plus, and ``on_plus``, the share of label-1 images on which
        it looks within half a pixel of the plus. None for a verifier of another kind
        (agents handed to training). ``message``: the prover's most likely messages on
        ``x``, if the caller has them (training does), so that the prover is not run again.

        Example:
            >>> task = FindThePlus()
            >>> x, y = task.sample(8, torch.Generator().manual_seed(0))
            >>> sorted(task.logged_metrics(task.make_prover(), task.make_verifier(), x, y))
            ['on_plus', 'pointing_error_px']
        """
        if not isinstance(verifier, PlusVerifier):
            return {}
        return pointing(verifier, prover, x, y, message=message)

    def stress_metrics(
        self,
        prover: nn.Module,
        verifier: nn.Module,
        x: Tensor,
        y: Tensor,
        attacks: Sequence[str],
    ) -> dict[str, float]:
        """The plus detector's figures, for a training row whose stress test is exhaustive.

        :func:`~proofgames.pvg.find_the_plus.detectors.detector_figures` on ``(x, y)``,
        only where ``attacks`` include ``"exhaustive"`` (its search is the cost); none for
        glimpses the exact search does not cover or a verifier of another kind.

        Example:
            >>> task = FindThePlus()
            >>> x, y = task.sample(8, torch.Generator().manual_seed(0))
            >>> agents = task.make_prover(), task.make_verifier()
            >>> figures = task.stress_metrics(*agents, x, y, ("messages", "exhaustive"))
            >>> always = {"detector_arms", "detector_centre", "readout_bias"}
            >>> always <= set(figures), task.stress_metrics(*agents, x, y, ("messages",))
            (True, {})
        """
        if not isinstance(verifier, PlusVerifier) or "exhaustive" not in attacks:
            return {}
        try:
            return detector_figures(verifier, prover, x, y)
        except PVGError:  # glimpses it does not cover (the spatial-transformer reading)
            return {}
