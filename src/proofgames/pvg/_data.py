"""A training run's bank of instances: generated once from the seed, then drawn from.

Private to :mod:`proofgames.pvg.train` (through its game). Without a bank
(``TrainConfig.data_bank = 0``, the default) every batch is generated afresh by the
task's :meth:`~proofgames.pvg.task.PVGTask.sample`; a bank generates ``data_bank``
instances at the start and serves the batches from them, far cheaper per batch where
generation is costly (FindThePlus, whose background is repaired until the image holds one
plus: a batch of 256 measured 8.6 ms generated, 0.06 ms drawn, on one shared core; see
``docs/find-the-plus.md``), but a different training stream: a finite sample, seen once
per epoch.

Every random choice comes from the run's seed: ``SeedSequence([seed, BANK_KEY])`` has two
children, one seeding the generator that fills the bank, the other the permutation of
each epoch (epoch ``e`` from its ``e``-th grandchild). What a run has drawn is one
number, the instances served so far, which the training state keeps, so a resumed run
rebuilds the same bank and continues the same draws.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from ..errors import PVGError
from ._memory import GB
from .task import PVGTask

#: Mixed into the seed, so that the bank's stream is not the run's other streams.
BANK_KEY = 0xBA4C
#: Instances generated per call of ``task.sample`` while filling the bank.
CHUNK = 2_000


def _torch_seed(seeds: np.random.SeedSequence) -> int:
    return int(seeds.generate_state(1, np.uint64)[0])


def bank_bytes(task: PVGTask, size: int) -> float:
    """The bytes a bank of ``size`` instances of ``task`` holds (its instances and labels)."""
    with torch.random.fork_rng(devices=[]):
        x, y = task.sample(2, torch.Generator().manual_seed(0))
    per_instance = (x.element_size() * x.numel() + y.element_size() * y.numel()) / 2
    return per_instance * size


def check_bank(task: PVGTask, size: int, max_memory_gb: float) -> None:
    """Refuse a bank of ``size`` instances whose data would take over ``max_memory_gb``.

    Raises:
        PVGError: naming the setting and the estimate.
    """
    need = bank_bytes(task, size) if size else 0.0
    if need > max_memory_gb * GB:
        raise PVGError(
            f"data_bank={size:,} instances would take {need / GB:,.3g} GB of memory, over "
            f"the limit of {max_memory_gb:g} GB; use a smaller bank or raise max_memory_gb"
        )


class DataBank:
    """``size`` instances of ``task`` generated from ``seed``; batches drawn in epochs.

    Each epoch serves every instance once, in an order drawn from the seed; a batch that
    crosses the end of an epoch takes the rest of it and the start of the next.

    Example:
        >>> from proofgames.pvg import make_task
        >>> bank = DataBank(make_task("bec"), 10, seed=0, device=torch.device("cpu"))
        >>> x, y = bank.draw(4)
        >>> x.shape[0], bank.served
        (4, 4)
        >>> again = DataBank(make_task("bec"), 10, seed=0, device=torch.device("cpu"))
        >>> again.served = 0
        >>> bool((again.draw(4)[0] == x).all())
        True
    """

    def __init__(self, task: PVGTask, size: int, seed: int, device: torch.device) -> None:
        content, self._order = np.random.SeedSequence([seed, BANK_KEY]).spawn(2)
        gen = torch.Generator().manual_seed(_torch_seed(content))
        parts = [task.sample(min(CHUNK, size - i), gen) for i in range(0, size, CHUNK)]
        self.x = torch.cat([x for x, _ in parts]).to(device)
        self.y = torch.cat([y for _, y in parts]).to(device)
        self.size = size
        self.served = 0  # instances drawn so far, over all epochs
        self._epoch = -1
        self._permutation = torch.empty(0, dtype=torch.long)

    def order(self, epoch: int) -> Tensor:
        """The order (a permutation of the bank's indices) in which ``epoch`` serves it."""
        if epoch != self._epoch:
            seeds = np.random.SeedSequence(
                self._order.entropy, spawn_key=(*self._order.spawn_key, epoch)
            )
            gen = torch.Generator().manual_seed(_torch_seed(seeds))
            self._permutation = torch.randperm(self.size, generator=gen).to(self.x.device)
            self._epoch = epoch
        return self._permutation

    def draw(self, n: int) -> tuple[Tensor, Tensor]:
        """The next ``n`` instances and their labels."""
        pieces = []
        start, end = self.served, self.served + n
        while start < end:
            epoch, offset = divmod(start, self.size)
            take = min(end - start, self.size - offset)
            pieces.append(self.order(epoch)[offset : offset + take])
            start += take
        self.served = end
        index = pieces[0] if len(pieces) == 1 else torch.cat(pieces)
        return self.x[index], self.y[index]
