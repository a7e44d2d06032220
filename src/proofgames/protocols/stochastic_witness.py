"""Stochastic debate with a witness (Figure 2, Theorem 7.2).

Rules: A sends a witness w for instance x; V checks its format (a malformed witness loses);
then the stochastic protocol (Figure 1, :mod:`proofgames.protocols.stochastic`) runs on the
machine M(x, w) with A claiming P[M(x, w) = 1] >= 2/3.  The parameters are fixed before the
witness is seen, from the problem's T and a Lipschitz constant valid for every witness.

Guarantee (Theorem 7.2, via Theorem 6.2): if some witness has P[M(x, w) = 1] >= 2/3, honest
A (sending the best witness) is accepted w.p. >= 3/5 against any B; if every witness has
P[M(x, w) = 1] <= 1/3, honest B keeps acceptance <= 2/5 whatever witness A sends.

Example:
    >>> from proofgames.protocols.stochastic_witness import PanelChoice, play_stochastic_witness
    >>> from proofgames.stochastic import lean_params
    >>> from proofgames.strategies import make_strategy
    >>> problem = PanelChoice((0.2, 0.9, 0.4))
    >>> res = play_stochastic_witness(problem, lean_params(problem.lipschitz, problem.steps),
    ...     make_strategy("stochastic-witness", "A", "honest"),
    ...     make_strategy("stochastic-witness", "B", "honest"), debates=2000, seed=0)
    >>> bool(res.acceptance > 0.6), res.witnesses
    (True, {'01': 2000})
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .._errors import ProtocolError
from .._registry import Player
from ..stochastic.machine import StochasticMachine
from ..stochastic.params import StochasticParams
from ._catalog import ProtocolInfo, register_protocol
from ._common import spawn_rngs
from .stochastic import BatchResult, play_stochastic_batch

NAME = "stochastic-witness"


class StochasticWitnessProblem(Protocol):
    """What the protocol needs from a problem (see :class:`PanelChoice`)."""

    @property
    def name(self) -> str:
        """Name used in records."""

    @property
    def witness_length(self) -> int:
        """Symbols in a well-formed witness."""

    @property
    def steps(self) -> int:
        """T of M(x, w), the same for every witness."""

    @property
    def lipschitz(self) -> float:
        """A Lipschitz constant valid for M(x, w) for every witness."""

    def validate_witness(self, w: object) -> bytes:
        """``w`` as bytes, or raise ``ValueError`` naming what is malformed."""

    def machine(self, w: bytes) -> StochasticMachine:
        """M(x, w)."""

    def candidates(self) -> list[bytes]:
        """Every well-formed witness (the honest prover searches them)."""


@dataclass(frozen=True)
class PanelChoice:
    """Is there an item a noisy panel approves?  Witness: the item's index (bits).

    M(x, w) asks the panel ``votes`` times about item w and takes the majority; item i is
    approved by each vote with probability ``probabilities[i]``.
    """

    probabilities: tuple[float, ...]
    votes: int = 3
    name: str = "panel-choice"
    witness_length: int = field(init=False)

    def __post_init__(self) -> None:
        if not self.probabilities:
            raise ProtocolError("a panel-choice problem needs at least one item")
        if any(not 0.0 <= p <= 1.0 for p in self.probabilities):
            raise ProtocolError(f"item probabilities must lie in [0, 1]: {self.probabilities}")
        width = max(1, math.ceil(math.log2(len(self.probabilities))))
        object.__setattr__(self, "witness_length", width)

    def _machine(self, i: int) -> StochasticMachine:
        from ..stochastic.machines import make_stochastic_machine

        return make_stochastic_machine(f"majority:n={self.votes},p={self.probabilities[i]}")

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


@dataclass(frozen=True)
class WitnessBatch:
    """Many stochastic debates with a witness: the merged result and witnesses sent."""

    verdicts: np.ndarray
    witnesses: dict[str, int]
    forfeits: tuple[str, ...]
    results: tuple[BatchResult, ...] = field(repr=False)

    @property
    def acceptance(self) -> float:
        """Fraction of debates V accepted."""
        return float(self.verdicts.mean())


def play_stochastic_witness(
    problem: StochasticWitnessProblem,
    params: StochasticParams,
    prover_a: Player,
    prover_b: Player,
    *,
    debates: int = 1,
    seed: int | None = 0,
) -> WitnessBatch:
    """Run ``debates`` debates: A's witnesses first, then Figure 1 on each M(x, w).

    Debates sharing a witness run in lockstep together.  A strategy whose ``witnesses``
    raises, or sends a malformed witness, loses those debates (reasons recorded).
    """
    if params.steps != problem.steps:
        raise ProtocolError(f"params are for T = {params.steps}; M(x, w) has {problem.steps}")
    rng_w, rng_debate = spawn_rngs(seed, 2)
    forfeits: list[str] = []
    verdicts = np.zeros(debates, dtype=np.int64)
    try:
        sent: Any = getattr(prover_a, "witnesses")(problem, debates, rng_w)
        sent = list(sent)
        if len(sent) != debates:
            raise ValueError(f"sent {len(sent)} witnesses for {debates} debates")
    except Exception as exc:  # a strategy's failure loses, never crashes the run
        return WitnessBatch(verdicts, {}, (f"A's witnesses failed: {exc}",), ())
    groups: dict[bytes, list[int]] = {}
    for i, w in enumerate(sent):
        try:
            groups.setdefault(problem.validate_witness(w), []).append(i)
        except ValueError as exc:
            forfeits.append(f"debate {i}: malformed witness ({exc})")
    results = []
    seeds = np.random.SeedSequence(int(rng_debate.integers(2**63))).spawn(max(1, len(groups)))
    for (w, rows), s in zip(sorted(groups.items()), seeds, strict=False):
        res = play_stochastic_batch(
            problem.machine(w),
            params,
            1,
            prover_a,
            prover_b,
            debates=len(rows),
            seed=int(s.generate_state(1)[0]),
        )
        verdicts[rows] = res.verdicts
        forfeits.extend(res.forfeits)
        results.append(res)
    names = {"".join(map(str, w)): len(rows) for w, rows in groups.items()}
    return WitnessBatch(verdicts, names, tuple(forfeits), tuple(results))


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 2 (stochastic oracle: Figure 1 on M(x, w))",
        theorem="Theorem 7.2",
        instance="stochastic",
        completeness=3 / 5,
        soundness=2 / 5,
        verifier_cost="the witness's format, then as Figure 1 on M(x, w)",
        play=play_stochastic_witness,  # type: ignore[arg-type]
    )
)
