"""Memory estimates made before a batch is allocated, and the limit they are held to.

Private to :mod:`proofgames.pvg`. A batch too large for the machine would otherwise end
in an out-of-memory kill (no message) or a CUDA error deep in a training step, possibly
hours into a run. So the commands estimate, before anything is allocated, the memory of
their largest batch and refuse one whose estimate exceeds a limit:
:data:`DEFAULT_MAX_MEMORY_GB` unless raised (``--max-memory-gb``, ``max_memory_gb``).

The estimate is measured, not guessed: one training step's forward pass (prover, then
verifier) on 2 and on 4 instances of the task, counting the bytes of the instances and of
every tensor autograd keeps for the backward pass; the difference is the cost of an
instance. Twice that (the backward pass holds gradients the size of what was kept) times
the batch size is the estimate. On the shipped tasks it was 1.05 to 1.6 times the growth
of peak memory measured on CPU over repeated training steps on 2,000 and 20,000 instances
(BEC 1.1-1.3, FindThePlus 1.3-1.6, FindTheNeedle 1.05-1.1): an estimate on the safe side.
Attacks that keep more per instance (L-BFGS's history) add it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..errors import PVGError
from .task import PVGTask

#: Estimated memory (in GB, 10^9 bytes) a batch may take unless the limit is raised.
DEFAULT_MAX_MEMORY_GB = 8.0
GB = 1e9
_PER_INSTANCE: dict[tuple[str, str], float] = {}

#: One estimate to check: (what, instances, extra bytes per instance).
Need = tuple[str, int, float]


def check_limit(max_memory_gb: float) -> None:
    """Refuse a limit that is not a positive, finite number of GB."""
    if not (math.isfinite(max_memory_gb) and max_memory_gb > 0):
        raise PVGError(f"max_memory_gb must be a positive number of GB, got {max_memory_gb}")


def instance_bytes(task: PVGTask) -> float:
    """Estimated bytes one instance of ``task`` takes in a training step (cached per task)."""
    key = (task.name, repr(sorted(task.init_args().items())))
    if key not in _PER_INSTANCE:
        _PER_INSTANCE[key] = _probe(task)
    return _PER_INSTANCE[key]


def lbfgs_bytes(message_dim: int, history: int) -> float:
    """Bytes per instance of L-BFGS over messages: its history and working vectors."""
    return 4.0 * message_dim * (2 * history + 8)


def check_memory(task: PVGTask, needs: Sequence[Need], max_memory_gb: float) -> None:
    """Refuse the first batch of ``needs`` whose estimated memory exceeds the limit.

    Args:
        task: the task whose instances the batches hold.
        needs: ``(what, instances, extra bytes per instance)``, ``what`` naming the
            setting (and its command-line option) in the message.
        max_memory_gb: the limit, in GB.

    Raises:
        PVGError: naming the setting, the estimate and the limit.
    """
    check_limit(max_memory_gb)
    if not any(n > 0 for _, n, _ in needs):
        return
    per_instance = instance_bytes(task)
    for what, n, extra in needs:
        estimate = n * (per_instance + extra)
        if estimate > max_memory_gb * GB:
            raise PVGError(
                f"{what} = {n}: {n} {task.name} instances need an estimated "
                f"{estimate / GB:,.3g} GB of memory, over the limit of {max_memory_gb:g} GB; "
                "use a smaller batch, or raise the limit with --max-memory-gb "
                "(max_memory_gb) if the machine has the memory"
            )


def _probe(task: PVGTask) -> float:
    """Bytes per instance of a training step's forward pass, from 2 and 4 instances."""
    with torch.random.fork_rng(devices=[]), torch.enable_grad():
        torch.manual_seed(0)
        prover, verifier = task.make_prover().train(), task.make_verifier().train()
        generator = torch.Generator().manual_seed(0)
        small, large = (_step_bytes(task, prover, verifier, n, generator) for n in (2, 4))
    kept = (large - small) / 2
    kept = kept if kept > 0 else large / 4
    return 2 * kept  # what the forward pass keeps, and its gradients in the backward pass


def _step_bytes(
    task: PVGTask, prover: Any, verifier: Any, n: int, generator: torch.Generator
) -> float:
    """Bytes of ``n`` instances and of what one forward pass keeps for the backward pass."""
    x, y = task.sample(n, generator)
    saved = [float(_nbytes(x) + _nbytes(y))]

    def pack(tensor: Tensor) -> Tensor:
        saved.append(float(_nbytes(tensor)))
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = prover(x, y)
        logits = verifier(x, out.message)
        loss = F.softplus(-logits).mean() + out.aux_loss
    del loss
    return sum(saved)


def _nbytes(tensor: Tensor) -> int:
    try:
        return int(tensor.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):  # no plain storage (e.g. a wrapper subclass)
        return tensor.numel() * tensor.element_size()
