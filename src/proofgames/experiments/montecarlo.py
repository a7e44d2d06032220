"""Monte Carlo estimation of acceptance probabilities, with exact confidence intervals.

Debates run in lockstep chunks, each one :func:`proofgames.harness.play_batch` call; each
chunk has its own seed from ``SeedSequence(seed).spawn``, so the result depends on the
seed and the number of debates only -- not on the executor
(:mod:`proofgames.sweeps.executors`) nor on how many workers share the chunks.
:func:`estimate_cells` fans the chunks of many estimates out at once (:func:`sweep` builds
grids of them).

Example:
    >>> from proofgames.stochastic import StochasticBuilder, lean_params
    >>> from proofgames.experiments.montecarlo import estimate_acceptance
    >>> b = StochasticBuilder([0.8]); _ = b.query(0)
    >>> m = b.build("single-query:p=0.8", lipschitz=1.0, p_accept=0.8)
    >>> est = estimate_acceptance(m, lean_params(1.0, 1), 1, "honest", "honest", debates=4000)
    >>> est.ci_low < 0.8 < est.ci_high
    True
"""

from __future__ import annotations

import csv
import hashlib
import io
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._seeds import check_seed
from ..analysis.intervals import clopper_pearson_interval, wilson_interval
from ..errors import ProofgamesError, ProtocolError
from ..reporting import write_atomic, write_json
from ..stochastic.hypothesis import ORACLE, STEP, guarantee, machine_params
from ..stochastic.model import StochasticMachine
from ..stochastic.params import StochasticParams
from ..sweeps._store import ResultStore
from ..sweeps.executors import InlineExecutor, make_executor, map_items
from ._chunks import Tally, run_chunk
from ._stored_chunks import chunk_check

Z95 = 1.959963984540054


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


def _label(player: str | Callable[[], object], role: str) -> str:
    """The spec of a registered strategy, or ``custom:<class>`` for a factory's player."""
    if isinstance(player, str):
        return player
    from ..protocols._common import player_spec

    return player_spec(player(), "stochastic", role).name


@dataclass(frozen=True)
class Cell:
    """One estimate of a sweep: a machine, parameters, a claim and the two strategies.

    ``machine`` and the strategies are as :func:`estimate_acceptance` takes them; a
    parallel executor needs the machine as a registered spec string and the strategies as
    specs or picklable factories.
    """

    machine: StochasticMachine | str
    params: StochasticParams | str
    claim: int
    prover_a: str | Callable[[], object]
    prover_b: str | Callable[[], object]


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
    executor: Executor | None = None,
    store: Path | None = None,
) -> Estimate:
    """Estimate P[V accepts A's claim] over ``debates`` independent debates.

    Args:
        machine: a machine, or its registered spec (needed with a parallel executor).
        params: parameters, or ``"paper"``/``"lean"``/a JSON file, derived for the machine
            with the K that ``k_definition`` names.
        claim: the output A asserts.
        prover_a: A's registered stochastic strategy spec (``"shift:delta=0.1"``), or a
            zero-argument factory of players (a fresh player per chunk; picklable with a
            parallel executor).
        prover_b: B's, as ``prover_a``.
        debates: number of debates.
        seed: root seed.
        workers: local processes to spread the chunks over (when no ``executor`` is given).
        chunk: debates per lockstep chunk (default: sized to the machine's length).
        interval: ``"clopper-pearson"`` (exact) or ``"wilson"``.
        progress: called with the number of debates finished after each chunk.
        k_definition: ``"step"`` (default: the every-step K, which meets the theorem's
            hypothesis) or ``"oracle"`` (the paper's Definition 6.1, for comparison; its
            bounds are reported in ``formula_bound`` but not as ``proven``).
        max_steps: limit on the steps of a machine given as a spec (default
            :data:`~proofgames.stochastic.machines.MAX_STEPS`; the machine is refused, with
            its size, before it is built).
        executor: where the chunks run (:mod:`proofgames.sweeps.executors`: local processes, a
            Dask client's executor...); the result does not depend on it.
        store: a JSON-lines file keeping each finished chunk; an interrupted estimate
            with the same arguments continues from it.

    Example:
        Honest A's true claim against honest B, 400 debates: the acceptance, its exact 95%
        interval, and the theorem's proven lower bound for these parameters:

        >>> from proofgames import estimate_acceptance
        >>> est = estimate_acceptance("majority:n=3,p=0.8", "lean", 1, "honest", "honest",
        ...                           debates=400, seed=0)
        >>> est.accepted, est.acceptance, round(est.ci_low, 3), round(est.ci_high, 3)
        (354, 0.885, 0.85, 0.915)
        >>> round(est.proven, 3), est.hypothesis
        (0.867, 'holds')
    """
    start = time.perf_counter()
    (est,) = estimate_cells(
        [Cell(machine, params, claim, prover_a, prover_b)],
        debates=debates, seed=seed, workers=workers, chunk=chunk, interval=interval,
        progress=progress, k_definition=k_definition, max_steps=max_steps,
        executor=executor, store=store,
    )  # fmt: skip
    return replace(est, seconds=time.perf_counter() - start)


def estimate_cells(
    cells: Sequence[Cell],
    *,
    debates: int = 10_000,
    seed: int = 0,
    workers: int = 1,
    chunk: int | None = None,
    interval: str = "clopper-pearson",
    progress: Callable[[int], None] | None = None,
    k_definition: str = STEP,
    max_steps: int | None = None,
    executor: Executor | None = None,
    store: Path | None = None,
) -> list[Estimate]:
    """:func:`estimate_acceptance` for every cell, all chunks fanned out at once.

    Each cell's chunks have the seeds ``SeedSequence(seed).spawn(chunks)``: a cell gives
    the numbers it gives alone, whatever else the sweep holds and wherever it runs.  An
    estimate's ``seconds`` is the time its chunks took on their workers.

    Example:
        >>> cells = [Cell("single-query:p=0.8", "lean", 1, "honest", b)
        ...          for b in ("honest", "abort-at")]
        >>> accepted = [e.accepted for e in estimate_cells(cells, debates=500, chunk=100)]
        >>> accepted
        [387, 500]
    """
    _check(debates, seed, interval)
    plans = [
        _plan(c, debates, seed, chunk, k_definition, max_steps) for c in _built(cells, max_steps)
    ]
    parallel = executor is not None and not isinstance(executor, InlineExecutor)
    items, weights = [], []
    for i, (cell, (built, params, counts, seeds)) in enumerate(zip(cells, plans, strict=True)):
        if (parallel or workers > 1) and not isinstance(cell.machine, str):
            raise ProtocolError("parallel workers need the machine as a registered spec string")
        target = cell.machine if parallel or workers > 1 else built
        for j, (n, s) in enumerate(zip(counts, seeds, strict=True)):
            job = (target, params, cell.claim, cell.prover_a, cell.prover_b, n, s, max_steps)
            items.append((f"{i}/{j}", job))
            weights.append(n)
    book = None
    if store is not None:  # bound to the sweep; a stored chunk is checked before it counts
        sizes = {key: job[5] for key, job in items}
        book = ResultStore(
            store, _fingerprint(cells, plans, debates, seed, max_steps), chunk_check(sizes)
        )
    with nullcontext(executor) if executor is not None else make_executor("local", workers) as pool:
        done = map_items(run_chunk, items, pool, store=book, progress=progress, weights=weights)
    out = []
    for i, (cell, (built, params, counts, _)) in enumerate(zip(cells, plans, strict=True)):
        tally = Tally()
        for j in range(len(counts)):
            tally.add(done[f"{i}/{j}"])
        out.append(_estimate(cell, built, params, tally, debates, seed, interval))
    return out


def check_cells(
    cells: Sequence[Cell],
    *,
    debates: int,
    seed: int = 0,
    chunk: int | None = None,
    interval: str = "clopper-pearson",
    k_definition: str = STEP,
    max_steps: int | None = None,
) -> None:
    """Refuse what :func:`estimate_cells` would refuse, without playing a debate.

    Example:
        >>> check_cells([Cell("single-query:p=0.8", "lean", 1, "honest", "nobody")], debates=9)
        Traceback (most recent call last):
        ...
        proofgames.errors.RegistryError: ...
    """
    _check(debates, seed, interval)
    for c in _built(cells, max_steps):
        _plan(c, debates, seed, chunk, k_definition, max_steps)


def _built(cells: Sequence[Cell], max_steps: int | None) -> list[Cell]:
    """The cells with each machine spec built once (a sweep repeats its machines)."""
    from ..stochastic.machines import make_stochastic_machine

    specs = dict.fromkeys(c.machine for c in cells if isinstance(c.machine, str))
    machines = {spec: make_stochastic_machine(spec, max_steps=max_steps) for spec in specs}
    return [
        replace(c, machine=machines[c.machine]) if isinstance(c.machine, str) else c for c in cells
    ]


#: The most debates one estimate plays (about 10 hours of the fastest machines' lockstep).
MAX_DEBATES = 10**12
#: The most work items (chunks) one estimate is split into.
MAX_CHUNKS = 100_000


def _check(debates: int, seed: int, interval: str) -> None:
    if type(debates) is not int or debates <= 0:
        raise ProtocolError(f"debates must be a positive integer, got {debates!r}")
    if debates > MAX_DEBATES:
        raise ProtocolError(
            f"debates = {debates:,} is over the limit of {MAX_DEBATES:,} for one estimate"
        )
    check_seed(seed, optional=False)
    if interval not in ("clopper-pearson", "wilson"):
        raise ProtocolError(f"interval must be 'clopper-pearson' or 'wilson', got {interval!r}")


def _plan(
    cell: Cell,
    debates: int,
    seed: int,
    chunk: int | None,
    k_definition: str,
    max_steps: int | None,
) -> tuple[StochasticMachine, StochasticParams, list[int], list[int]]:
    """A cell's machine and parameters, checked, and its chunks' sizes and seeds."""
    built, params = _resolve(cell.machine, cell.params, k_definition, max_steps)
    from ..strategies import check_instance, make_strategy

    for role, spec in (("A", cell.prover_a), ("B", cell.prover_b)):  # refused before play
        if isinstance(spec, str):
            check_instance(make_strategy("stochastic", role, spec), built)
    size = chunk or max(
        1, min(debates, (1 << 22) // max(1, built.length)), -(-debates // MAX_CHUNKS)
    )
    if -(-debates // size) > MAX_CHUNKS:
        raise ProtocolError(
            f"{debates:,} debates in chunks of {size:,} make {-(-debates // size):,} work "
            f"items, over the limit of {MAX_CHUNKS:,}: give a larger --chunk"
        )
    counts = [size] * (debates // size) + ([debates % size] if debates % size else [])
    seeds = np.random.SeedSequence(seed).spawn(len(counts))
    return built, params, counts, [int(s.generate_state(1)[0]) for s in seeds]


def _fingerprint(
    cells: Sequence[Cell], plans: Sequence[tuple[Any, ...]], debates: int, seed: int,
    max_steps: int | None,
) -> dict[str, Any]:  # fmt: skip
    """What names a sweep in its store: every argument that changes its chunks' results.

    Every cell's machine (its name, and a digest of its oracle: a machine object named as
    another is told apart), parameters, claim, strategies and chunk sizes, the number of
    debates, the root seed and the step limit.  Not the interval, the workers nor the
    executor, which change no chunk.  (A strategy given as a factory is named by its
    class only.)
    """
    return {
        "kind": "estimate",
        "debates": debates,
        "seed": seed,
        "max_steps": max_steps,
        "cells": [
            {
                "machine": built.name,
                "oracle": _oracle_digest(built),
                "params": params.to_dict(),
                "claim": c.claim,
                "A": _label(c.prover_a, "A"),
                "B": _label(c.prover_b, "B"),
                "chunks": counts,
            }
            for c, (built, params, counts, _) in zip(cells, plans, strict=True)
        ],
    }


def _oracle_digest(machine: StochasticMachine) -> str:
    """SHA-256 of a machine's length, oracle probabilities and query texts."""
    digest = hashlib.sha256(f"{machine.length}:{machine.probabilities.size}:".encode())
    digest.update(np.ascontiguousarray(machine.probabilities, dtype="<f8").tobytes())
    for query in machine.queries:
        digest.update(len(query).to_bytes(8, "little") + query)
    return digest.hexdigest()


def _estimate(
    cell: Cell, built: StochasticMachine, params: StochasticParams, tally: Tally,
    debates: int, seed: int, interval: str,
) -> Estimate:  # fmt: skip
    """A cell's estimate from its chunks' tally."""
    lo, hi = (clopper_pearson_interval if interval == "clopper-pearson" else wilson_interval)(
        tally.accepted, debates
    )
    theorem = guarantee(built, params, cell.claim)
    return Estimate(
        machine=built.name,
        claim=cell.claim,
        prover_a=_label(cell.prover_a, "A"),
        prover_b=_label(cell.prover_b, "B"),
        params=params.to_dict(),
        debates=debates,
        accepted=tally.accepted,
        acceptance=tally.accepted / debates,
        ci_low=lo,
        ci_high=hi,
        interval=interval,
        queries=tally.queries(debates),
        abort_rate=tally.aborted / debates,
        p_accept=built.p_accept,
        proven=theorem.proven,
        seed=seed,
        seconds=tally.seconds,
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
        from ..stochastic.machines import make_stochastic_machine

        built = make_stochastic_machine(machine, max_steps=max_steps)
    assert isinstance(built, StochasticMachine)
    if isinstance(params, str):
        if k_definition == ORACLE and built.lipschitz is None:
            raise ProtocolError(
                f"{built.name} has no known Lipschitz constant; give parameters explicitly"
            )
        params = machine_params(params, built, k_definition)
    return built, params


def sweep(
    machines: Sequence[str],
    params: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    claims: Sequence[int] = (1,),
    **kwargs: Any,
) -> list[Estimate]:
    """Every combination of machine spec x parameter set x (A, B) pair x claim.

    ``kwargs`` go to :func:`~proofgames.experiments.montecarlo.estimate_cells`
    (``debates``, ``seed``, ``executor``, ``store``, ``progress``...).
    """
    cells = [
        Cell(m, p, c, a, b) for m in machines for p in params for a, b in pairs for c in claims
    ]
    return estimate_cells(cells, **kwargs)


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
        write_json(json_path, [e.to_dict() for e in estimates], indent=1)
    except ProofgamesError as exc:
        raise ProtocolError(str(exc)) from None
    return csv_path, json_path
