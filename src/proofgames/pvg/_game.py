"""The two players of a Prover-Verifier Game, their optimizers and one game step's updates.

Private to :mod:`proofgames.pvg.train`, which documents the formulations.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import PVGError
from ._data import DataBank
from .checkpoint import TrainingState, first_line
from .config import TrainConfig
from .stress import Metrics
from .task import ClosedFormResponse, ExhaustiveMessages, ProverOutput, PVGTask


def verifier_optimizer(verifier: nn.Module, config: TrainConfig) -> torch.optim.Adam:
    """The verifier's Adam, at ``config.verifier_lr`` (else ``config.lr``).

    With ``config.verifier_weight_decay`` > 0 its parameters of two or more dimensions
    (weights, kernels) carry that L2 penalty and the others (biases) none; at 0 it has one
    parameter group, as runs saved before the option had.
    """
    lr = config.lr if config.verifier_lr is None else config.verifier_lr
    decay = config.verifier_weight_decay
    if not decay:
        return torch.optim.Adam(verifier.parameters(), lr=lr)
    params = list(verifier.parameters())
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.Adam([g for g in groups if g["params"]], lr=lr)


class Game:
    """The two players, their optimizers and the update rules of one game step."""

    def __init__(
        self, task: PVGTask, config: TrainConfig, device: torch.device, data: torch.Generator
    ) -> None:
        self.task, self.config, self.device, self.data = task, config, device, data
        self.prover = task.make_prover().to(device).train()
        self.verifier = task.make_verifier().to(device).train()
        self.prover_opt = torch.optim.Adam(self.prover.parameters(), lr=config.lr)
        self.verifier_opt = verifier_optimizer(self.verifier, config)
        self.collaborative = config.formulation == "collaborative"
        self.bf16 = config.precision == "bf16"
        self.closed_form = False
        self.bank = None
        if config.data_bank:
            self.bank = DataBank(task, config.data_bank, config.seed, device)

    def use_agents(self, prover: nn.Module, verifier: nn.Module) -> None:
        """Play with copies of ``prover`` and ``verifier`` (e.g. hand-set), fresh optimizers."""
        self.prover = copy.deepcopy(prover).to(self.device).train().requires_grad_(True)
        self.verifier = copy.deepcopy(verifier).to(self.device).train().requires_grad_(True)
        self.prover_opt = torch.optim.Adam(self.prover.parameters(), lr=self.config.lr)
        self.verifier_opt = verifier_optimizer(self.verifier, self.config)

    def state_dicts(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Copies of both players' weights."""
        return (
            copy.deepcopy(self.prover.state_dict()),
            copy.deepcopy(self.verifier.state_dict()),
        )

    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """``(agents, optimizers, rng)``: what a resumed run needs to continue exactly."""
        agents = {"prover": self.prover.state_dict(), "verifier": self.verifier.state_dict()}
        optimizers = {
            "prover": self.prover_opt.state_dict(),
            "verifier": self.verifier_opt.state_dict(),
        }
        rng: dict[str, Any] = {"data": self.data.get_state(), "torch": torch.get_rng_state()}
        if self.bank is not None:
            rng["bank"] = self.bank.served  # the bank itself is rebuilt from the seed
        if self.device.type == "cuda":
            rng["cuda"] = torch.cuda.get_rng_state_all()
        return agents, optimizers, rng

    def restore_from(self, state: TrainingState, source: Path) -> None:
        """Restore the agents, optimizers and generators of a saved training state.

        Raises:
            PVGError: naming ``source``, when the saved state does not fit this game.
        """
        try:
            self.restore(state.agents, state.optimizers, state.rng)
        except (RuntimeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise PVGError(
                f"{source}: the saved agents or optimizers do not fit this run ({first_line(exc)})"
            ) from None

    def restore(
        self, agents: dict[str, Any], optimizers: dict[str, Any], rng: dict[str, Any]
    ) -> None:
        """Inverse of :meth:`snapshot`."""
        self.prover.load_state_dict(agents["prover"])
        self.verifier.load_state_dict(agents["verifier"])
        self.prover_opt.load_state_dict(optimizers["prover"])
        self.verifier_opt.load_state_dict(optimizers["verifier"])
        self.data.set_state(rng["data"])
        torch.set_rng_state(rng["torch"])
        if "cuda" in rng and self.device.type == "cuda":
            torch.cuda.set_rng_state_all(rng["cuda"])
        if self.bank is not None:
            served = rng["bank"]
            if type(served) is not int or served < 0:
                raise ValueError(f"the bank's draw count is {served!r}, not a count")
            self.bank.served = served

    def batch(self) -> tuple[Tensor, Tensor]:
        """A training batch: drawn from the bank if the run has one, else generated."""
        if self.bank is not None:
            return self.bank.draw(self.config.batch_size)
        x, y = self.task.sample(self.config.batch_size, self.data)
        return x.to(self.device), y.to(self.device)

    def play(self, verifier_steps: int, prover_steps: int) -> Metrics:
        """One game step of the configured formulation; returns the last losses."""
        out: Metrics = {}
        formulation = self.config.formulation
        if formulation in ("simultaneous", "collaborative") and self.config.update != "alternating":
            for i in range(max(verifier_steps, prover_steps)):  # both from the same point
                out.update(self.joint_step(i < prover_steps, i < verifier_steps))
        elif formulation in ("simultaneous", "collaborative"):  # the prover, then the verifier
            out.update(self.alternating_steps(verifier_steps, prover_steps))
        elif formulation == "prover-first":
            for _ in range(verifier_steps):  # the follower moves towards its best response
                out.update(self.joint_step(False, True))
            for _ in range(prover_steps):
                out.update(
                    self.closed_form_step() if self.closed_form else self.joint_step(True, False)
                )
        else:  # verifier-first
            out.update(self.alternating_steps(verifier_steps, prover_steps, self.closed_form))
        return out

    def alternating_steps(
        self, verifier_steps: int, prover_steps: int, exact: bool = False
    ) -> Metrics:
        """The prover's updates, then the verifier's, each on a fresh batch.

        Each player's gradient is taken against the other as already updated; with
        ``exact`` the verifier plays against the prover's exact best response instead.
        """
        out: Metrics = {}
        for _ in range(prover_steps):
            out.update(self.joint_step(True, False))
        for _ in range(verifier_steps):
            out.update(self.exact_response_step() if exact else self.joint_step(False, True))
        return out

    def joint_step(self, update_prover: bool, update_verifier: bool) -> Metrics:
        """Gradients of both losses at the current point; step the chosen players."""
        x, y = self.batch()
        with torch.autocast(self.device.type, torch.bfloat16, enabled=self.bf16):
            with torch.set_grad_enabled(update_prover):
                out: ProverOutput = self.prover(x, y if update_prover else None)
            logits = self.verifier(x, out.message).float()
        metrics: Metrics = {}
        if update_prover:
            target = y if self.collaborative else torch.ones_like(y)
            prover_loss = F.binary_cross_entropy_with_logits(logits, target)
            total = prover_loss + self.config.aux_weight * out.aux_loss
            self.prover_opt.zero_grad()
            torch.autograd.backward(
                total, inputs=list(self.prover.parameters()), retain_graph=update_verifier
            )
            metrics["prover_loss"] = float(prover_loss.detach())
        if update_verifier:
            metrics.update(self.verifier_gradient(logits, y))
        if update_prover:
            self.prover_opt.step()
        if update_verifier:
            self.verifier_opt.step()
        return metrics

    def verifier_gradient(self, logits: Tensor, y: Tensor) -> Metrics:
        """Backpropagate the verifier's (label-smoothed) loss into its parameters."""
        s = self.config.label_smoothing
        verifier_loss = F.binary_cross_entropy_with_logits(logits, y * (1 - s) + s / 2)
        self.verifier_opt.zero_grad()
        torch.autograd.backward(verifier_loss, inputs=list(self.verifier.parameters()))
        return {
            "verifier_loss": float(verifier_loss.detach()),
            "train_accuracy": float(((logits > 0).float() == y).float().mean()),
        }

    def exact_response_step(self) -> Metrics:
        """A leading verifier's step against the prover's exact best response.

        The follower's value is a maximum over finitely many messages, so its gradient
        (Danskin) is the gradient at the maximizing messages, held fixed.
        """
        assert isinstance(self.task, ExhaustiveMessages)
        x, y = self.batch()
        with torch.no_grad():
            messages = self.task.best_messages(self.verifier, x)
        metrics = self.verifier_gradient(self.verifier(x, messages), y)
        self.verifier_opt.step()
        return metrics

    def closed_form_step(self) -> Metrics:
        """A leading prover's step against the exact, anticipated verifier response."""
        assert isinstance(self.task, ClosedFormResponse)
        loss = self.task.best_response_prover_loss(self.prover, self.config.label_smoothing)
        self.prover_opt.zero_grad()
        torch.autograd.backward(loss, inputs=list(self.prover.parameters()))
        self.prover_opt.step()
        return {"prover_loss": float(loss.detach())}

    def pretrain_step(self) -> None:
        """One prover step on the task's auxiliary losses alone (skipped if there are none)."""
        x, y = self.batch()
        out: ProverOutput = self.prover(x, y)
        if out.aux_loss.requires_grad:
            self.prover_opt.zero_grad()
            torch.autograd.backward(out.aux_loss)
            self.prover_opt.step()


def use_closed_form(task: PVGTask, choice: str, formulation: str) -> bool:
    """Whether the leader of ``formulation`` plays against the follower's exact response."""
    if formulation == "prover-first":
        available, what = isinstance(task, ClosedFormResponse), "closed-form verifier"
    elif formulation == "verifier-first":
        available, what = isinstance(task, ExhaustiveMessages), "exact prover"
    else:
        return False
    if choice == "closed-form" and not available:
        raise PVGError(f"task {task.name!r} has no {what} best response")
    return available and choice != "trained"
