"""Problems for stochastic debate with a witness (Figure 2 with Figure 1).

A problem gives, for each well-formed witness w, a stochastic machine M(x, w) of the same
length, and a Lipschitz constant valid for every witness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import ProtocolError
from .machines import make_stochastic_machine
from .model import StochasticMachine


@dataclass(frozen=True)
class PanelChoice:
    """Is there an item a noisy panel approves?  Witness: the item's index (bits).

    M(x, w) asks the panel ``votes`` times about item w and takes the majority; item i is
    approved by each vote with probability ``probabilities[i]``.  ``max_steps`` limits the
    steps of M(x, w) (default :data:`~proofgames.stochastic.machines.MAX_STEPS`).
    """

    probabilities: tuple[float, ...]
    votes: int = 3
    name: str = "panel-choice"
    max_steps: int | None = None
    witness_length: int = field(init=False)

    def __post_init__(self) -> None:
        if not self.probabilities:
            raise ProtocolError("a panel-choice problem needs at least one item")
        if any(not 0.0 <= p <= 1.0 for p in self.probabilities):
            raise ProtocolError(f"item probabilities must lie in [0, 1]: {self.probabilities}")
        width = max(1, math.ceil(math.log2(len(self.probabilities))))
        object.__setattr__(self, "witness_length", width)

    def _machine(self, i: int) -> StochasticMachine:
        spec = f"majority:n={self.votes},p={self.probabilities[i]}"
        return make_stochastic_machine(spec, max_steps=self.max_steps)

    @property
    def steps(self) -> int:
        """T of M(x, w) (the same for every witness)."""
        return self._machine(0).length

    @property
    def lipschitz(self) -> float:
        """A Lipschitz constant valid for every witness (the largest)."""
        items = range(len(self.probabilities))
        return max(float(self._machine(i).lipschitz or 0.0) for i in items)

    def validate_witness(self, w: object) -> bytes:
        """Check length, bits and range."""
        if not isinstance(w, (bytes, bytearray)) or len(w) != self.witness_length:
            raise ValueError(f"a witness is {self.witness_length} bits, got {w!r:.40}")
        if any(b not in (0, 1) for b in w):
            raise ValueError("witness symbols must be bits")
        if self._index(bytes(w)) >= len(self.probabilities):
            raise ValueError(f"item {self._index(bytes(w))} does not exist")
        return bytes(w)

    def _index(self, w: bytes) -> int:
        return int("".join(map(str, w)), 2)

    def machine(self, w: bytes) -> StochasticMachine:
        """Majority of the panel's votes on the witnessed item."""
        return self._machine(self._index(w))

    def candidates(self) -> list[bytes]:
        """Every item's index."""
        n = self.witness_length
        return [bytes(int(c) for c in format(i, f"0{n}b")) for i in range(len(self.probabilities))]
