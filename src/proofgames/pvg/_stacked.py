"""One player of several seeds as stacked parameters, and Adam over them, seed by seed.

Private to :mod:`proofgames.pvg.batched`. Each parameter of the player's network becomes
one tensor whose first dimension runs over the seeds, so that a single batched call
(``torch.func.vmap`` over ``torch.func.functional_call``) plays every seed at once. Adam
is written out here rather than taken from ``torch.optim``, because a game step may
update some seeds and not others (their adaptive prover step counts differ): each seed
keeps its own step count per parameter, and a seed left out of an update keeps its
weights and moments exactly. The arithmetic is ``torch.optim.Adam``'s (coupled weight
decay, no AMSGrad), and a parameter without a gradient is skipped, as there.

The per-seed networks and optimizers stay the source of truth for everything else:
:meth:`StackedPlayer.store` writes the stacked weights and moments back into them
(``torch.optim.Adam`` state, so the single-seed checkpoint code saves them unchanged).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn

from ..errors import PVGError

#: ``(lr, (beta1, beta2), eps, weight_decay)`` of one parameter.
Hyper = tuple[float, tuple[float, float], float, float]


def _factors(hyper: Hyper, counts: tuple[int, ...]) -> list[list[float]]:
    """``[step sizes, roots]`` per seed at ``counts`` steps, as ``torch.optim.Adam`` has them.

    The step size is ``lr / (1 - beta1**step)`` and the root ``(1 - beta2**step) ** 0.5``,
    in Python floats; a seed at step 0 (idle, its update discarded) gets step 1's.
    """
    lr, (beta1, beta2), _, _ = hyper
    steps = [float(max(count, 1)) for count in counts]
    return [[lr / (1 - beta1**t) for t in steps], [(1 - beta2**t) ** 0.5 for t in steps]]


class StackedPlayer:
    """``B`` copies of one network (one per seed), stacked, with their Adam moments.

    Args:
        modules: the seeds' networks, all of one architecture.
        optimizers: their ``torch.optim.Adam`` optimizers (state read as it stands).

    Example:
        >>> net = [nn.Linear(2, 1) for _ in range(3)]
        >>> opts = [torch.optim.Adam(m.parameters(), lr=0.1) for m in net]
        >>> player = StackedPlayer(net, opts)
        >>> player.params["weight"].shape, player.seeds
        (torch.Size([3, 1, 2]), 3)
        >>> grads = {name: torch.ones_like(p) for name, p in player.params.items()}
        >>> player.step(grads, [True, False, True])
        >>> player.store(net, opts)
        >>> [int(opts[b].state[net[b].bias]["step"]) if net[b].bias in opts[b].state
        ...  else 0 for b in range(3)]
        [1, 0, 1]
    """

    def __init__(self, modules: Sequence[nn.Module], optimizers: Sequence[torch.optim.Optimizer]):
        self.seeds = len(modules)
        self.base = copy.deepcopy(modules[0]).to("meta")  # the architecture, no storage
        names = [name for name, _ in modules[0].named_parameters()]
        self.names = names
        self.hyper = {name: _hyper(optimizers, modules, name) for name in names}
        self.params: dict[str, Tensor] = {}
        self.buffers: dict[str, Tensor] = {
            name: torch.stack([dict(m.named_buffers())[name] for m in modules]).detach()
            for name, _ in modules[0].named_buffers()
        }
        self.exp_avg: dict[str, Tensor] = {}
        self.exp_avg_sq: dict[str, Tensor] = {}
        self.counts: dict[str, list[int]] = {}
        self.load(modules, optimizers)

    def load(
        self, modules: Sequence[nn.Module], optimizers: Sequence[torch.optim.Optimizer]
    ) -> None:
        """Stack the seeds' weights and Adam moments (zeros where a seed has none yet)."""
        with torch.no_grad():
            for name in self.names:
                own = [dict(m.named_parameters())[name] for m in modules]
                self.params[name] = torch.stack([p.detach() for p in own]).requires_grad_(True)
                states = [opt.state.get(p, {}) for opt, p in zip(optimizers, own, strict=True)]
                self.exp_avg[name] = _stack_state(states, "exp_avg", own)
                self.exp_avg_sq[name] = _stack_state(states, "exp_avg_sq", own)
                self.counts[name] = [int(s["step"]) if "step" in s else 0 for s in states]

    def detached(self) -> dict[str, Tensor]:
        """The stacked weights without autograd history (for a player that is not updated)."""
        return {name: p.detach() for name, p in self.params.items()}

    def step(self, grads: Mapping[str, Tensor | None], active: Sequence[bool]) -> None:
        """One Adam step of the seeds where ``active`` holds (one flag per seed).

        ``grads[name]`` is the stacked gradient of parameter ``name``; ``None`` skips it
        for every seed (no gradient reached it), as ``torch.optim.Adam`` does. The bias
        corrections are Python floats per seed, as there (so that a seed's update rounds
        as its own optimizer's would), sent to the device in one tensor.
        """
        live = {name: grad for name, grad in grads.items() if grad is not None}
        if not live:
            return
        counts = {
            name: [c + 1 if on else c for c, on in zip(self.counts[name], active, strict=True)]
            for name in live
        }
        rows: dict[tuple[Hyper, tuple[int, ...]], int] = {}
        for name in live:
            rows.setdefault((self.hyper[name], tuple(counts[name])), len(rows))
        first = next(iter(live.values()))
        table = torch.tensor([_factors(*key) for key in rows], dtype=first.dtype)
        table = table.to(first.device)
        mask = torch.tensor(list(active)).to(first.device)
        with torch.no_grad():
            for name, grad in live.items():
                factors = table[rows[self.hyper[name], tuple(counts[name])]]
                self._step_one(name, grad, factors, mask)
                self.counts[name] = counts[name]

    def _step_one(self, name: str, grad: Tensor, factors: Tensor, mask: Tensor) -> None:
        """Adam on parameter ``name``, in ``torch.optim.Adam``'s order of operations.

        ``factors`` is ``(2, B)``: each seed's step size and root of the second bias
        correction (see :func:`_factors`); ``mask`` the seeds to update.
        """
        _, (beta1, beta2), eps, decay = self.hyper[name]
        param = self.params[name]
        shape = (self.seeds,) + (1,) * (param.dim() - 1)
        step_size, root = factors[0].view(shape), factors[1].view(shape)
        if decay:
            grad = grad.add(param, alpha=decay)
        exp_avg = self.exp_avg[name].lerp(grad, 1 - beta1)
        exp_avg_sq = self.exp_avg_sq[name].mul(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = (exp_avg_sq.sqrt() / root).add_(eps)
        moved = param - step_size * exp_avg / denom
        keep = mask.view(shape)
        param.copy_(torch.where(keep, moved, param))
        self.exp_avg[name] = torch.where(keep, exp_avg, self.exp_avg[name])
        self.exp_avg_sq[name] = torch.where(keep, exp_avg_sq, self.exp_avg_sq[name])

    def store(
        self, modules: Sequence[nn.Module], optimizers: Sequence[torch.optim.Optimizer]
    ) -> None:
        """Write each seed's weights and Adam state back into its network and optimizer."""
        with torch.no_grad():
            for b, (module, opt) in enumerate(zip(modules, optimizers, strict=True)):
                own = dict(module.named_parameters())
                for name in self.names:
                    own[name].copy_(self.params[name][b])
                    count = self.counts[name][b]
                    if count == 0:
                        opt.state.pop(own[name], None)
                        continue
                    opt.state[own[name]] = {
                        "step": torch.tensor(float(count), dtype=torch.float32),
                        "exp_avg": self.exp_avg[name][b].clone(),
                        "exp_avg_sq": self.exp_avg_sq[name][b].clone(),
                    }

    def store_weights(self, modules: Sequence[nn.Module]) -> None:
        """Write each seed's weights (only) back into its network."""
        with torch.no_grad():
            for b, module in enumerate(modules):
                own = dict(module.named_parameters())
                for name in self.names:
                    own[name].copy_(self.params[name][b])


def _stack_state(states: list[dict[str, Tensor]], key: str, params: Sequence[Tensor]) -> Tensor:
    """One Adam moment of every seed, stacked; zeros for a seed with no state yet."""
    return torch.stack(
        [
            s[key].detach().clone() if key in s else torch.zeros_like(p)
            for s, p in zip(states, params, strict=True)
        ]
    )


def _hyper(
    optimizers: Sequence[torch.optim.Optimizer], modules: Sequence[nn.Module], name: str
) -> Hyper:
    """``(lr, betas, eps, weight_decay)`` of parameter ``name``, the same for every seed.

    Raises:
        PVGError: the seeds' optimizers differ for it, or are not plain Adam.
    """
    found = set()
    for opt, module in zip(optimizers, modules, strict=True):
        param = dict(module.named_parameters())[name]
        group = next(g for g in opt.param_groups if any(p is param for p in g["params"]))
        if not isinstance(opt, torch.optim.Adam) or group["amsgrad"] or group["maximize"]:
            raise PVGError("batched seeds need plain Adam optimizers (no AMSGrad, no maximize)")
        found.add(
            (
                float(group["lr"]),
                tuple(group["betas"]),
                float(group["eps"]),
                float(group["weight_decay"]),
            )
        )
    if len(found) != 1:
        raise PVGError(f"the seeds' optimizers differ for parameter {name!r}: {sorted(found)}")
    lr, betas, eps, decay = found.pop()
    return lr, (float(betas[0]), float(betas[1])), eps, decay
