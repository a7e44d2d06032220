"""The task interface of Prover-Verifier Games (Anil et al. 2021).

A task supplies instances with binary labels, a prover network that reads the instance
and writes a message, and a verifier network that reads the message (and whatever view of
the instance the task allows) and outputs the logit of P[label = 1].  The prover always
argues for label 1.  Everything a training loop or a stress test needs goes through this
interface, so a new task is one file.

Beyond the abstract methods of :class:`PVGTask` a task may offer two kinds of extras,
and the engine (training, stress tests) names no task:

* *capabilities*, which decide whether an option exists at all: a task with
  :class:`ExhaustiveMessages` can find its verifier's most convincing message exactly
  (the ``exhaustive`` attack, verifier-first play against the exact prover); one with
  :class:`ClosedFormResponse` knows the verifier's exact best response (prover-first
  play against it). They are runtime-checkable protocols: a task has one by defining its
  method;
* *hooks*, methods of :class:`PVGTask` with a neutral default that a task overrides to
  add to what the engine does: :meth:`~PVGTask.message_metrics` (statistics of a batch of
  messages, in every evaluation), :meth:`~PVGTask.logged_metrics` (figures of each logged
  training row), :meth:`~PVGTask.stress_metrics` (figures of a training row with a stress
  test) and :meth:`~PVGTask.check_exhaustive` (refuse settings the exact search cannot
  cover).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Protocol, runtime_checkable

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

    def message_metrics(self, x: Tensor, message: Tensor) -> dict[str, float]:
        """Named statistics of ``message`` sent for ``x``, for every evaluation (hook).

        :func:`~proofgames.pvg.stress.evaluate` adds them to its figures (with the
        ``sampled_`` prefix for sampled messages). None by default; BEC reports its
        erasure fraction, FindTheNeedle how often the pointer lands on a 1.
        """
        return {}

    def deterministic_prover(self, prover: nn.Module) -> bool:
        """Whether ``prover`` sends the same messages in training mode as in evaluation (hook).

        If so, :func:`~proofgames.pvg.stress.evaluate` takes its ``sampled_*`` figures
        from the same prover pass as the others instead of running the prover again. No
        by default (e.g. Gumbel-softmax messages are sampled only in training mode);
        FindThePlus's own prover has no noise, dropout or batch statistics, so yes.

        Example:
            >>> from proofgames.pvg import make_task
            >>> task = make_task("bec")
            >>> with torch.random.fork_rng():  # building a prover draws its weights
            ...     prover = task.make_prover()
            >>> task.deterministic_prover(prover)
            False
        """
        return False

    def logged_metrics(
        self,
        prover: nn.Module,
        verifier: nn.Module,
        x: Tensor,
        y: Tensor,
        message: Tensor | None = None,
    ) -> dict[str, float]:
        """Figures of the task's own for each logged training row (hook).

        :func:`~proofgames.pvg.train.train` calls it at every logged game step with the
        agents and the fixed evaluation batch ``(x, y)`` and adds the figures to the row.
        It must not change the agents (nor their training mode). None by default;
        FindThePlus reports where its prover points the plus detector.

        Where an override takes ``message``, training passes it the prover's most likely
        messages on ``x`` (:func:`~proofgames.pvg.stress.greedy_messages`, the pass its
        evaluation already ran), so that the hook need not run the prover again; an
        override with the four arguments alone is called with those.

        Example:
            >>> from proofgames.pvg import make_task
            >>> task = make_task("bec")
            >>> x, y = task.sample(8, torch.Generator().manual_seed(0))
            >>> task.logged_metrics(task.make_prover(), task.make_verifier(), x, y)
            {}
        """
        return {}

    def stress_metrics(
        self,
        prover: nn.Module,
        verifier: nn.Module,
        x: Tensor,
        y: Tensor,
        attacks: Sequence[str],
    ) -> dict[str, float]:
        """Figures of the task's own for a training row with a stress test (hook).

        Called, like :meth:`logged_metrics`, on the evaluation batch, after the stress
        test of ``attacks``; its time counts as stress-test time, so it may be costly
        (an exact search). None by default; FindThePlus reports its plus detector's
        weights and the 4-of-5 pluses shown to it, where the exhaustive attack is tested.

        Example:
            >>> from proofgames.pvg import make_task
            >>> task = make_task("find-the-needle")
            >>> x, y = task.sample(8, torch.Generator().manual_seed(0))
            >>> task.stress_metrics(task.make_prover(), task.make_verifier(), x, y, ["exhaustive"])
            {}
        """
        return {}

    def check_exhaustive(self) -> None:
        """Refuse settings the exact message search cannot cover (hook).

        Called before the ``exhaustive`` attack or the exact prover is used, for a task
        with :class:`ExhaustiveMessages`. Nothing to refuse by default.

        Raises:
            PVGError: e.g. FindThePlus glimpses whose samples fall between pixels.
        """
        return  # nothing to refuse


@runtime_checkable
class ExhaustiveMessages(Protocol):
    """A task whose verifier's most convincing message can be found exactly (capability).

    Gives the ``exhaustive`` attack and, in verifier-first play, the exact prover
    (FindThePlus, FindTheNeedle).
    """

    def best_messages(self, verifier: nn.Module, x: Tensor) -> Tensor:
        """For each instance of ``x``, a message maximizing ``verifier``'s logit."""
        ...


@runtime_checkable
class ClosedFormResponse(Protocol):
    """A task that knows the verifier's exact best response to a prover (capability; BEC).

    Gives prover-first play against the exact, anticipated verifier response.
    """

    def best_response_prover_loss(self, prover: nn.Module, label_smoothing: float) -> Tensor:
        """The prover's loss against the best-responding verifier, differentiable."""
        ...


@runtime_checkable
class MessageMetrics(Protocol):
    """A task with statistics of a batch of messages (kept for compatibility).

    Every :class:`PVGTask` has :meth:`PVGTask.message_metrics` now (a hook with no
    statistics by default), so every task satisfies this protocol.
    """

    def message_metrics(self, x: Tensor, message: Tensor) -> dict[str, float]:
        """Named statistics of ``message`` sent for ``x``."""
        ...
