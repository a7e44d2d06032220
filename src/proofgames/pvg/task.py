"""The task interface of Prover-Verifier Games (Anil et al. 2021).

A task supplies instances with binary labels, a prover network that reads the instance
and writes a message, and a verifier network that reads the message (and whatever view of
the instance the task allows) and outputs the logit of P[label = 1].  The prover always
argues for label 1.  Everything a training loop or a stress test needs goes through this
interface, so a new task is one file.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import PVGError


@dataclass
class ProverOutput:
    """What a prover produces for a batch.

    Attributes:
        message: shape ``(n, message_dim)``: what the verifier receives (for discrete
            channels, a one-hot vector with straight-through gradients).
        aux_loss: extra prover loss of the task's auxiliary heads (0 if none).
    """

    message: Tensor
    aux_loss: Tensor


def check_arguments(
    task: str,
    at_least: dict[str, tuple[int, int]] | None = None,
    positive: dict[str, float] | None = None,
    not_negative: dict[str, float] | None = None,
) -> None:
    """Refuse task arguments out of range, naming the task, the argument and its value.

    Args:
        task: the task's registered name.
        at_least: ``name -> (value, least)``: integers of at least ``least``.
        positive: ``name -> value``: finite numbers above 0.
        not_negative: ``name -> value``: finite numbers of at least 0.

    Raises:
        PVGError: the first argument out of range.
    """
    for name, (value, least) in (at_least or {}).items():
        if value < least:
            raise PVGError(f"{task}: {name} must be at least {least}, got {value}")
    for name, number in (positive or {}).items():
        if not (math.isfinite(number) and number > 0):
            raise PVGError(f"{task}: {name} must be a positive finite number, got {number}")
    for name, number in (not_negative or {}).items():
        if not (math.isfinite(number) and number >= 0):
            raise PVGError(f"{task}: {name} must be a finite number >= 0, got {number}")


def one_hot_message(logits: Tensor, temperature: float, sample: bool) -> Tensor:
    """A discrete message from token logits ``(n, K)``: one one-hot row per instance.

    With ``sample`` (training) it is a straight-through Gumbel-softmax sample: one-hot
    forwards, the gradient of the relaxed sample at ``temperature`` backwards.  Otherwise
    it is the one-hot of the most likely token.
    """
    if sample:
        return F.gumbel_softmax(logits, tau=temperature, hard=True)
    return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)


def layer_norm_mlp(inputs: int, hidden: int, outputs: int, hidden_layers: int) -> nn.Sequential:
    """Linear layers with LayerNorm then LeakyReLU after each hidden one (the paper's MLPs).

    Example:
        >>> net = layer_norm_mlp(2, 8, 3, hidden_layers=1)
        >>> [type(layer).__name__ for layer in net], net(torch.zeros(5, 2)).shape
        (['Linear', 'LayerNorm', 'LeakyReLU', 'Linear'], torch.Size([5, 3]))
    """
    layers: list[nn.Module] = []
    width = inputs
    for _ in range(hidden_layers):
        layers += [nn.Linear(width, hidden), nn.LayerNorm(hidden), nn.LeakyReLU()]
        width = hidden
    return nn.Sequential(*layers, nn.Linear(width, outputs))


class PVGTask(abc.ABC):
    """A Prover-Verifier Game task.

    Attributes:
        name: registry name (``"bec"``, ``"find-the-plus"``).
        message_dim: size of a message vector.
    """

    name: str
    message_dim: int

    def init_args(self) -> dict[str, Any]:
        """The constructor arguments, saved with checkpoints (a dataclass task's fields)."""
        if not is_dataclass(self):
            return {}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    @abc.abstractmethod
    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``n`` instances and their labels (float tensor of 0/1), balanced in expectation."""

    @abc.abstractmethod
    def make_prover(self) -> nn.Module:
        """A fresh prover; ``prover(x, labels)`` returns a :class:`ProverOutput`.

        ``labels`` (the true labels) feed only auxiliary losses; the message must not
        depend on them.
        """

    @abc.abstractmethod
    def make_verifier(self) -> nn.Module:
        """A fresh verifier; ``verifier(x, message)`` returns logits of P[label 1], ``(n,)``."""

    @abc.abstractmethod
    def message_from_free(self, free: Tensor, x: Tensor) -> Tensor:
        """Map unconstrained parameters ``(n, message_dim)`` to a legal message for ``x``.

        Used by the message-optimization stress test (L-BFGS over ``free``): e.g. a masked
        softmax over the tokens the channel allows, or the identity for real messages.
        """
