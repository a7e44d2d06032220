"""FindTheNeedle: the smallest witness task, and a template for new PVG tasks.

Not from the paper: a third task written against :class:`~proofgames.pvg.task.PVGTask`
in this one file, to show what a task needs.  The instance is a row of ``n`` bits; its
label is 1 when some bit is 1 (a *needle* in the haystack).  Label-1 rows hold between 1
and ``max_needles`` ones at uniformly drawn places; label-0 rows are all zeros; labels
are balanced in expectation.  The prover reads the whole row and points at one place
(a one-hot message of length ``n``, sent like BEC's tokens through a straight-through
Gumbel-softmax).  The verifier never sees the row: it sees the pointer and the one bit it
points at.  So the task is an NP-style "there exists" claim with a one-bit check:

* the honest protocol is "point at a 1; accept exactly when the bit pointed at is 1";
  it is complete (every label-1 row has a 1 to point at) and sound (a label-0 row has
  none, so no pointer is accepted);
* a verifier that ignores the bit and learns *where* the training prover tends to point
  is not sound; the stress tests find that.

Every message the prover can send is one of ``n`` pointers, so the verifier's exact worst
case is found by trying them all (:meth:`FindTheNeedle.best_messages`; the
``"exhaustive"`` stress attack and the exact follower of verifier-first play).  The
message attack (L-BFGS) searches the softmax relaxation, where a verifier may also be
fooled by a blend of pointers.

Example:
    >>> import torch
    >>> task = FindTheNeedle(size=8)
    >>> x, y = task.sample(6, torch.Generator().manual_seed(0))
    >>> bool(torch.equal(y, (x.sum(dim=1) > 0).float()))
    True
    >>> verifier = honest_verifier(task)
    >>> pointer = task.best_messages(verifier, x)
    >>> bool(torch.equal(verifier(x, pointer) > 0, y > 0.5))
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ...errors import PVGError
from ..task import ProverOutput, PVGTask, check_arguments, layer_norm_mlp, one_hot_message


class NeedleProver(nn.Module):
    """An MLP from the row to logits over the ``n`` places, one place sent per row.

    In training mode the pointer is a straight-through Gumbel-softmax sample; in
    evaluation mode it is the most likely place.

    Args:
        size: bits per row ``n``.
        hidden: width of the two hidden layers.
        temperature: the Gumbel-softmax temperature.
    """

    def __init__(self, size: int, hidden: int, temperature: float) -> None:
        super().__init__()
        self.temperature = temperature
        self.net = layer_norm_mlp(size, hidden, size, hidden_layers=2)

    def forward(self, x: Tensor, labels: Tensor | None = None) -> ProverOutput:
        """Point at one place per row (``labels`` are unused: no auxiliary heads)."""
        logits: Tensor = self.net(x)
        message = one_hot_message(logits, self.temperature, sample=self.training)
        return ProverOutput(message=message, aux_loss=logits.new_zeros(()))


class NeedleVerifier(nn.Module):
    """One hidden layer over what the verifier may see: the pointer and the bit it reads.

    Args:
        size: bits per row ``n``.
        hidden: width of the hidden layer.
    """

    def __init__(self, size: int, hidden: int) -> None:
        super().__init__()
        self.net = layer_norm_mlp(size + 1, hidden, 1, hidden_layers=1)

    def forward(self, x: Tensor, message: Tensor) -> Tensor:
        """Logit of P[label 1], ``(n,)``; of the row only ``<message, x>`` is read."""
        bit = (message * x).sum(dim=-1, keepdim=True)
        out: Tensor = self.net(torch.cat([message, bit], dim=-1))
        return out.squeeze(-1)


@dataclass(eq=False)
class FindTheNeedle(PVGTask):
    """Is there a 1 in a row of ``size`` bits?  The prover points, the verifier reads one bit.

    Attributes:
        size: bits per row ``n`` (at least 2).
        max_needles: most ones in a label-1 row (between 1 and ``size``).
        hidden: width of the agents' hidden layers.
        temperature: the prover's Gumbel-softmax temperature.
    """

    name = "find-the-needle"
    size: int = 16
    max_needles: int = 4
    hidden: int = 64
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.size < 2:
            raise PVGError(f"find-the-needle needs at least 2 bits per row, got {self.size}")
        if not 1 <= self.max_needles <= self.size:
            raise PVGError(
                f"find-the-needle: max_needles must lie in [1, size={self.size}], "
                f"got {self.max_needles}"
            )
        check_arguments(
            self.name,
            at_least={"hidden": (self.hidden, 1)},
            positive={"temperature": self.temperature},
        )
        self.message_dim = self.size

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """``n`` rows and labels: label-1 rows get 1..``max_needles`` ones, uniformly placed."""
        device = generator.device
        labels = torch.randint(0, 2, (n,), generator=generator, device=device).float()
        needles = torch.randint(1, self.max_needles + 1, (n, 1), generator=generator, device=device)
        # the ``needles`` smallest of n uniform keys mark uniformly chosen places
        keys = torch.rand(n, self.size, generator=generator, device=device)
        rank = keys.argsort(dim=1).argsort(dim=1)
        x = ((rank < needles) & (labels[:, None] > 0.5)).float()
        return x, labels

    def make_prover(self) -> NeedleProver:
        """A fresh prover (2 hidden layers)."""
        return NeedleProver(self.size, self.hidden, self.temperature)

    def make_verifier(self) -> NeedleVerifier:
        """A fresh verifier (1 hidden layer)."""
        return NeedleVerifier(self.size, self.hidden)

    def message_from_free(self, free: Tensor, x: Tensor) -> Tensor:
        """A softmax over the places: the relaxation of a pointer (any blend of places)."""
        return torch.softmax(free, dim=-1)

    def best_messages(self, verifier: nn.Module, x: Tensor) -> Tensor:
        """For each row the pointer with the highest logit, by trying all ``n`` of them."""
        n, size = x.shape
        pointers = torch.eye(size, dtype=x.dtype, device=x.device)
        with torch.no_grad():
            logits = verifier(x.repeat_interleave(size, dim=0), pointers.repeat(n, 1)).reshape(
                n, size
            )
        return pointers[logits.argmax(dim=1)]

    def message_metrics(self, x: Tensor, message: Tensor) -> dict[str, float]:
        """``on_needle``: the share of label-1 rows whose pointer lands on a 1."""
        has_needle = x.sum(dim=1) > 0
        if not bool(has_needle.any()):
            return {"on_needle": 0.0}
        read = (message * x).sum(dim=1)[has_needle]
        return {"on_needle": float(read.mean())}


def honest_verifier(task: FindTheNeedle, scale: float = 4.0) -> NeedleVerifier:
    """A hand-set verifier of the honest protocol, in the task's verifier architecture.

    It accepts exactly when the bit read is above 1/2 (so, for a pointer, when it points
    at a 1), whatever the pointer: complete and sound, also against blends of pointers.
    Its logits grow with ``scale``.  A reference point for tests and trained verifiers.
    """
    verifier = task.make_verifier()
    first, norm, _, last = verifier.net
    assert isinstance(first, nn.Linear) and isinstance(last, nn.Linear)
    assert isinstance(norm, nn.LayerNorm)
    with torch.no_grad():
        for module in (first, last):
            module.weight.zero_()
            assert module.bias is not None
            module.bias.zero_()
        # hidden unit 0 carries the bit, unit 1 its complement; after LayerNorm they
        # differ in sign whatever the bit, so the last layer reads them off
        first.weight[0, -1], first.weight[1, -1] = 1.0, -1.0
        first.bias[1] = 0.5
        first.bias[0] = -0.5
        last.weight[0, 0], last.weight[0, 1] = scale, -scale
    return verifier
