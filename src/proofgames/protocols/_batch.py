"""The one record of many debates: per-debate verdicts, forfeits by party and reason, costs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._registry import StrategySpec
from .._transcript import IntArray
from ._lockstep import ForfeitCount


@dataclass(frozen=True)
class Batch:
    """Many debates of one protocol on one instance, played together or one by one.

    Attributes:
        protocol: the protocol's name.
        machine: the instance's name.
        claim: the output A asserts.
        verdicts: 1 where V accepted A's claim, per debate.
        forfeited_by: ``"A"``, ``"B"`` or ``""`` per debate: who lost it by misbehaving.
        forfeits: how many debates each party forfeited, by reason.
        samples: per party (``A``, ``B``, ``V``), the oracle queries each debate called for.
        oracle_calls: per party, real oracle calls made (0 when sampling from known p).
        abort_rounds: per debate, the round B aborted in, or -1 (stochastic protocols).
        rounds_played: the most rounds any debate lasted.
        prover_a: who played A.
        prover_b: who played B.
        seed: the root seed.
        params: the stochastic parameters (``None`` for deterministic protocols).
        details: protocol-specific facts (e.g. the witnesses sent and how often).
        seconds: wall time.

    Example:
        A lies about the 2-state busy beaver (it halts by T = 6; A claims it does not).
        Over 20 debates, a B who disputes halves at random lets the lie through most of
        the time; the honest B never does:

        >>> from proofgames import play_batch
        >>> lazy = play_batch("bisection", "bb2", claim=0, a="flip-step", b="random", debates=20)
        >>> lazy.debates, lazy.acceptance, lazy.forfeit_counts()
        (20, 0.9, {'A': 0, 'B': 0})
        >>> lazy.to_dict()["accepted"], lazy.prover_a.label, lazy.prover_b.label
        (18, 'flip-step(at=0.5)', 'random')
        >>> honest = play_batch("bisection", "bb2", claim=0, a="flip-step", b="honest", debates=20)
        >>> honest.acceptance
        0.0
    """

    protocol: str
    machine: str
    claim: int
    verdicts: IntArray
    forfeited_by: NDArray[np.str_]
    forfeits: tuple[ForfeitCount, ...]
    samples: dict[str, IntArray]
    oracle_calls: dict[str, int]
    abort_rounds: IntArray
    rounds_played: int
    prover_a: StrategySpec
    prover_b: StrategySpec
    seed: int | None
    params: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = field(default=0.0, compare=False)

    @property
    def debates(self) -> int:
        """Number of debates."""
        return int(self.verdicts.size)

    @property
    def acceptance(self) -> float:
        """Fraction of debates in which V accepted A's claim."""
        return float(self.verdicts.mean()) if self.verdicts.size else 0.0

    def forfeit_counts(self) -> dict[str, int]:
        """Debates forfeited by each party."""
        return {p: int((self.forfeited_by == p).sum()) for p in ("A", "B")}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (per-debate arrays summarized)."""
        return {
            "protocol": self.protocol,
            "machine": self.machine,
            "claim": self.claim,
            "debates": self.debates,
            "accepted": int(self.verdicts.sum()),
            "acceptance": self.acceptance,
            "forfeited": self.forfeit_counts(),
            "forfeits": [f.to_dict() for f in self.forfeits],
            "aborted": int((self.abort_rounds >= 0).sum()),
            "rounds_played": self.rounds_played,
            "mean_samples": {
                p: float(s.mean()) if s.size else 0.0 for p, s in self.samples.items()
            },
            "oracle_calls": dict(self.oracle_calls),
            "prover_a": self.prover_a.to_dict(),
            "prover_b": self.prover_b.to_dict(),
            "seed": self.seed,
            "params": self.params.to_dict() if hasattr(self.params, "to_dict") else None,
            "details": dict(self.details),
            "seconds": self.seconds,
        }


BatchResult = Batch  # the name earlier releases used
