"""Monte Carlo estimation of acceptance probabilities, with exact confidence intervals.

Debates run in lockstep chunks (:func:`~proofgames.protocols.stochastic.play_stochastic_batch`);
each chunk has its own seed from ``SeedSequence(seed).spawn``, so the result depends on the
seed and the number of debates only -- not on how many worker processes share the chunks.

Example:
    >>> from proofgames.stochastic import StochasticBuilder, lean_params
    >>> from proofgames.stochastic.montecarlo import estimate_acceptance
    >>> b = StochasticBuilder([0.8]); _ = b.query(0)
    >>> m = b.build("single-query:p=0.8", lipschitz=1.0, p_accept=0.8)
    >>> est = estimate_acceptance(m, lean_params(1.0, 1), 1, "honest", "honest", debates=4000)
    >>> est.ci_low < 0.8 < est.ci_high
    True
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from .._errors import ProofgamesError, ProtocolError
from .._jsonout import dumps
from .._readme import write_atomic
from .hypothesis import ORACLE, STEP, guarantee, machine_params
from .machine import StochasticMachine
from .params import StochasticParams

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n <= 0:
        raise ProtocolError("an interval needs at least one trial")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Exact (Clopper--Pearson) interval for a binomial proportion."""
    if n <= 0:
        raise ProtocolError("an interval needs at least one trial")
    alpha = 1 - confidence
    lo = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = (
        1.0
        if successes == n
        else float(stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    )
    return lo, hi


@dataclass(frozen=True)
class Estimate:
    """The estimated probability that V accepts A's claim, with its costs.

    Attributes:
        machine: machine name (its spec).
        claim: the output A asserts.
        prover_a, prover_b: the strategies (with arguments).
        params: the constants used.
        debates: number of debates.
        accepted: debates V accepted.
        acceptance: accepted / debates.
        ci_low, ci_high: the 95% interval (``interval`` names the method).
        interval: ``"clopper-pearson"`` or ``"wilson"``.
        queries: per party, mean and max oracle samples per debate.
        abort_rate: fraction of debates B aborted.
        p_accept: the machine's exact P[M = 1], if known.
        proven: the theorem's bound on acceptance for this claim (lower bound if the claim
            is true, upper bound if false) -- only where P[M = 1] is known and the
            parameters' K meets the theorem's hypothesis (``hypothesis == "holds"``).
        k_definition: which K the parameters use (``"step (Lean hypothesis)"``,
            ``"oracle-only (paper Def. 6.1; not the Lean hypothesis)"`` or ``"given"``).
        hypothesis: whether that K is at least the machine's every-step K (``"holds"``,
            ``"fails"`` or ``"unverified"``; :func:`~.hypothesis.hypothesis_status`).
        formula_bound: the theorem's bound formula at that K, proven or not.
        forfeited: debates each party lost by misbehaving (they count in ``accepted`` as V
            decided them: a forfeit by A is a rejection, by B an acceptance).
        forfeits: the forfeits by party and reason, ``[{"party", "reason", "debates"}]``.
        seed: the root seed.
        seconds: wall time.
    """

    machine: str
    claim: int
    prover_a: str
    prover_b: str
    params: dict[str, Any]
    debates: int
    accepted: int
    acceptance: float
    ci_low: float
    ci_high: float
    interval: str
    queries: dict[str, dict[str, float]]
    abort_rate: float
    p_accept: float | None
    proven: float | None
    seed: int
    seconds: float
    k_definition: str = "given"
    hypothesis: str = "unverified"
    formula_bound: float | None = None
    forfeited: dict[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    forfeits: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return asdict(self)


def _chunk(
    args: tuple[Any, ...],
) -> tuple[int, np.ndarray, dict[str, np.ndarray], list[tuple[str, str, int]]]:
    """Run one chunk (also in a worker process: the machine is rebuilt from its spec)."""
    from ..protocols.stochastic import play_stochastic_batch
    from ..strategies import make_strategy

    machine, params, claim, a, b, n, seed, max_steps = args
    if isinstance(machine, str):
        from .machines import make_stochastic_machine

        machine = make_stochastic_machine(machine, max_steps=max_steps)
    res = play_stochastic_batch(
        machine,
        params,
        claim,
        make_strategy("stochastic", "A", a) if isinstance(a, str) else a(),
        make_strategy("stochastic", "B", b) if isinstance(b, str) else b(),
        debates=n,
        seed=seed,
    )
    lost = [(f.party, f.reason, f.debates) for f in res.forfeits]
    return int(res.verdicts.sum()), res.abort_rounds, res.samples, lost


def _label(player: str | Callable[[], object], role: str) -> str:
    """The spec of a registered strategy, or ``custom:<class>`` for a factory's player."""
    if isinstance(player, str):
        return player
    from ..protocols._common import player_spec

    return player_spec(player(), "stochastic", role).name


def estimate_acceptance(
    machine: StochasticMachine | str,
    params: StochasticParams | str,
    claim: int,
    prover_a: str | Callable[[], object],
    prover_b: str | Callable[[], object],
    *,
    debates: int = 10_000,
    seed: int = 0,
    workers: int = 1,
    chunk: int | None = None,
    interval: str = "clopper-pearson",
    progress: Callable[[int], None] | None = None,
    k_definition: str = STEP,
    max_steps: int | None = None,
) -> Estimate:
    """Estimate P[V accepts A's claim] over ``debates`` independent debates.

    Args:
        machine: a machine, or its registered spec (needed when ``workers > 1``).
        params: parameters, or ``"paper"``/``"lean"``/a JSON file, derived for the machine
            with the K that ``k_definition`` names.
        claim: the output A asserts.
        prover_a, prover_b: registered stochastic strategy specs (``"shift:delta=0.1"``),
            or zero-argument factories of players (a fresh player per chunk; picklable
            when ``workers > 1``).
        debates: number of debates.
        seed: root seed.
        workers: processes to spread the chunks over.
        chunk: debates per lockstep chunk (default: sized to the machine's length).
        interval: ``"clopper-pearson"`` (exact) or ``"wilson"``.
        progress: called with the number of debates finished after each chunk.
        k_definition: ``"step"`` (default: the every-step K, which meets the theorem's
            hypothesis) or ``"oracle"`` (the paper's Definition 6.1, for comparison; its
            bounds are reported in ``formula_bound`` but not as ``proven``).
        max_steps: limit on the steps of a machine given as a spec (default
            :data:`~proofgames.stochastic.machines.MAX_STEPS`; the machine is refused, with
            its size, before it is built).
    """
    if type(debates) is not int or debates <= 0:
        raise ProtocolError(f"debates must be a positive integer, got {debates!r}")
    if type(seed) is not int or seed < 0:
        raise ProtocolError(f"seed must be a non-negative integer, got {seed!r}")
    if interval not in ("clopper-pearson", "wilson"):
        raise ProtocolError(f"interval must be 'clopper-pearson' or 'wilson', got {interval!r}")
    start = time.perf_counter()
    built, params = _resolve(machine, params, k_definition, max_steps)
    if workers > 1 and not isinstance(machine, str):
        raise ProtocolError("workers > 1 need the machine as a registered spec string")
    from ..strategies import check_instance, make_strategy

    for role, spec in (("A", prover_a), ("B", prover_b)):  # limits refused before any play
        if isinstance(spec, str):
            check_instance(make_strategy("stochastic", role, spec), built)
    size = chunk or max(1, min(debates, (1 << 22) // max(1, built.length)))
    counts = [size] * (debates // size) + ([debates % size] if debates % size else [])
    seeds = np.random.SeedSequence(seed).spawn(len(counts))
    target = machine if workers > 1 else built
    jobs = [
        (target, params, claim, prover_a, prover_b, n, int(s.generate_state(1)[0]), max_steps)
        for n, s in zip(counts, seeds, strict=True)
    ]
    tally = _Tally(progress)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result, n in zip(pool.map(_chunk, jobs), counts, strict=True):
                tally.add(result, n)
    else:
        for job, n in zip(jobs, counts, strict=True):
            tally.add(_chunk(job), n)
    lo, hi = (clopper_pearson_interval if interval == "clopper-pearson" else wilson_interval)(
        tally.accepted, debates
    )
    theorem = guarantee(built, params, claim)
    return Estimate(
        machine=built.name,
        claim=claim,
        prover_a=_label(prover_a, "A"),
        prover_b=_label(prover_b, "B"),
        params=params.to_dict(),
        debates=debates,
        accepted=tally.accepted,
        acceptance=tally.accepted / debates,
        ci_low=lo,
        ci_high=hi,
        interval=interval,
        queries=tally.queries(),
        abort_rate=float((np.concatenate(tally.aborts) >= 0).mean()),
        p_accept=built.p_accept,
        proven=theorem.proven,
        seed=seed,
        seconds=time.perf_counter() - start,
        k_definition=theorem.k_definition,
        hypothesis=theorem.hypothesis,
        formula_bound=theorem.formula,
        forfeited=tally.forfeited(),
        forfeits=tally.forfeits(),
    )


def _resolve(
    machine: StochasticMachine | str,
    params: StochasticParams | str,
    k_definition: str,
    max_steps: int | None,
) -> tuple[StochasticMachine, StochasticParams]:
    """The machine built from its spec, and named parameters derived for it.

    A bad parameter file is refused before the machine's K is computed (by
    :func:`~proofgames.stochastic.hypothesis.machine_params`).
    """
    built = machine
    if isinstance(machine, str):
        from .machines import make_stochastic_machine

        built = make_stochastic_machine(machine, max_steps=max_steps)
    assert isinstance(built, StochasticMachine)
    if isinstance(params, str):
        if k_definition == ORACLE and built.lipschitz is None:
            raise ProtocolError(
                f"{built.name} has no known Lipschitz constant; give parameters explicitly"
            )
        params = machine_params(params, built, k_definition)
    return built, params


class _Tally:
    """What the chunks add up to: acceptances, aborts, samples per party, forfeits."""

    def __init__(self, progress: Callable[[int], None] | None) -> None:
        self.progress, self.accepted = progress, 0
        self.aborts: list[np.ndarray] = []
        self.samples: dict[str, list[np.ndarray]] = {p: [] for p in ("A", "B", "V")}
        self.lost: Counter[tuple[str, str]] = Counter()

    def add(self, result: Any, n: int) -> None:
        """One chunk's result (of ``n`` debates)."""
        k, aborts, samples, lost = result
        self.accepted += k
        self.aborts.append(aborts)
        for p in self.samples:
            self.samples[p].append(samples[p])
        for party, reason, debates in lost:
            self.lost[(party, reason)] += debates
        if self.progress is not None:
            self.progress(n)

    def queries(self) -> dict[str, dict[str, float]]:
        """Mean and max oracle samples per debate, per party."""
        joined = {p: np.concatenate(v) for p, v in self.samples.items()}
        return {p: {"mean": float(v.mean()), "max": float(v.max())} for p, v in joined.items()}

    def forfeited(self) -> dict[str, int]:
        """Debates each party forfeited."""
        return {p: sum(n for (q, _), n in self.lost.items() if q == p) for p in ("A", "B")}

    def forfeits(self) -> list[dict[str, Any]]:
        """Forfeits by party and reason, most frequent first."""
        return [{"party": p, "reason": r, "debates": n} for (p, r), n in self.lost.most_common()]


def sweep(
    machines: Sequence[str],
    params: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    claims: Sequence[int] = (1,),
    **kwargs: Any,
) -> list[Estimate]:
    """Every combination of machine spec x parameter set x (A, B) pair x claim."""
    return [
        estimate_acceptance(m, p, c, a, b, **kwargs)
        for m in machines
        for p in params
        for a, b in pairs
        for c in claims
    ]


def write_results(estimates: Sequence[Estimate], stem: Path) -> tuple[Path, Path]:
    """Write ``stem.csv`` (one row per estimate, flattened) and ``stem.json``."""
    rows = []
    for e in estimates:
        d = e.to_dict()
        skip = ("params", "queries", "forfeited", "forfeits")
        flat = {k: v for k, v in d.items() if k not in skip}
        flat.update({f"forfeited_{p}": n for p, n in d["forfeited"].items()})
        flat.update({f"params_{k}": v for k, v in d["params"].items() if k != "lean"})
        flat.update({f"queries_{p}_{s}": v for p, q in d["queries"].items() for s, v in q.items()})
        rows.append(flat)
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProtocolError(f"cannot create {stem.parent}: {exc.strerror or exc}") from None
    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=list(rows[0]) if rows else [])
    writer.writeheader()
    writer.writerows(rows)
    try:
        write_atomic(csv_path, table.getvalue())
        write_atomic(json_path, dumps([e.to_dict() for e in estimates], indent=1))
    except ProofgamesError as exc:
        raise ProtocolError(str(exc)) from None
    return csv_path, json_path
