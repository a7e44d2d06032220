"""The work item of a Monte Carlo estimate: one lockstep chunk of debates, and its tally.

Private to :mod:`proofgames.experiments.montecarlo`.  Every chunk is one
:func:`proofgames.harness.play_batch` call, the one batch path.  A chunk's result is JSON-able, so a
sweep's store (:mod:`proofgames.sweeps._store`) can keep it, and it adds up exactly: counts and
integer sums, whatever order the chunks finish in.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any


def run_chunk(args: tuple[Any, ...]) -> dict[str, Any]:
    """Run one chunk (also on a worker: the machine is rebuilt from its spec).

    Returns what the chunk adds up to, JSON-able (a sweep's store keeps it): debates
    accepted and aborted, per party the sum and max of oracle samples per debate, the
    forfeits ``[party, reason, debates]`` and the seconds it took.
    """
    from ..harness import play_batch
    from ..instances import machine_instance

    start = time.perf_counter()
    machine, params, claim, a, b, n, seed, max_steps = args
    inst = machine_instance("stochastic", machine, max_steps=max_steps)
    res = play_batch(
        "stochastic", inst, claim, a if isinstance(a, str) else a(),
        b if isinstance(b, str) else b(), debates=n, seed=seed, params=params,
    )  # fmt: skip
    return {
        "accepted": int(res.verdicts.sum()),
        "aborted": int((res.abort_rounds >= 0).sum()),
        "samples": {p: [int(v.sum()), int(v.max())] for p, v in res.samples.items()},
        "lost": [[f.party, f.reason, int(f.debates)] for f in res.forfeits],
        "seconds": time.perf_counter() - start,
    }


class Tally:
    """What a cell's chunks add up to: acceptances, aborts, samples per party, forfeits."""

    def __init__(self) -> None:
        self.accepted = self.aborted = 0
        self.seconds = 0.0
        self.sums: dict[str, int] = {p: 0 for p in ("A", "B", "V")}
        self.maxima: dict[str, int] = {p: 0 for p in ("A", "B", "V")}
        self.lost: Counter[tuple[str, str]] = Counter()

    def add(self, result: dict[str, Any]) -> None:
        """One chunk's result (from :func:`_chunk`, or as its store kept it)."""
        self.accepted += result["accepted"]
        self.aborted += result["aborted"]
        self.seconds += result["seconds"]
        for p, (total, most) in result["samples"].items():
            self.sums[p] += total
            self.maxima[p] = max(self.maxima[p], most)
        for party, reason, debates in result["lost"]:
            self.lost[(party, reason)] += debates

    def queries(self, debates: int) -> dict[str, dict[str, float]]:
        """Mean and max oracle samples per debate, per party."""
        return {
            p: {"mean": self.sums[p] / debates, "max": float(self.maxima[p])} for p in self.sums
        }

    def forfeited(self) -> dict[str, int]:
        """Debates each party forfeited."""
        return {p: sum(n for (q, _), n in self.lost.items() if q == p) for p in ("A", "B")}

    def forfeits(self) -> list[dict[str, Any]]:
        """Forfeits by party and reason, most frequent first."""
        return [{"party": p, "reason": r, "debates": n} for (p, r), n in self.lost.most_common()]
