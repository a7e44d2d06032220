"""Stochastic debate with a witness (Figure 2, Theorem 7.2).

Rules: A sends a witness w for instance x; V checks its format (a malformed witness loses);
then the stochastic protocol (Figure 1, :mod:`proofgames.protocols.stochastic`) runs on the
machine M(x, w) with A claiming P[M(x, w) = 1] >= 2/3.  The parameters are fixed before the
witness is seen, from the problem's T and a Lipschitz constant valid for every witness.

Guarantee (Theorem 7.2, via Theorem 6.2): if some witness has P[M(x, w) = 1] >= 2/3, honest
A (sending the best witness) is accepted w.p. >= 3/5 against any B; if every witness has
P[M(x, w) = 1] <= 1/3, honest B keeps acceptance <= 2/5 whatever witness A sends.

Example:
    >>> from proofgames.protocols.stochastic_witness import play_stochastic_witness
    >>> from proofgames.stochastic.problems import PanelChoice
    >>> from proofgames.stochastic import lean_params
    >>> from proofgames.strategies import make_strategy
    >>> problem = PanelChoice((0.2, 0.9, 0.4))
    >>> res = play_stochastic_witness(problem, lean_params(problem.lipschitz, problem.steps),
    ...     make_strategy("stochastic-witness", "A", "honest"),
    ...     make_strategy("stochastic-witness", "B", "honest"), debates=2000, seed=0)
    >>> bool(res.acceptance > 0.6), res.details["witnesses"]
    (True, {'01': 2000})
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from typing import Protocol, runtime_checkable

import numpy as np

from .. import interrupts
from .._oracle import PARTIES
from .._registry import make_strategy
from ..errors import ProtocolError, require_type
from ..stochastic.model import StochasticMachine
from ..stochastic.params import StochasticParams, check_params_spec, resolve_params
from ..stochastic.problems import PanelChoice
from ..wire import Malformed, as_bytes
from ._batch import Batch
from ._catalog import Defaults, Instance, Options, ProtocolInfo, register_protocol
from ._common import Debate, Outcome, describe_exception, player_spec, spawn_rngs
from ._lockstep import ForfeitLog
from .roles import COUNT, PROBLEM, RNG, Method, Role
from .stochastic import (
    ABORT,
    ANNOUNCE,
    COIN,
    StochasticA,
    StochasticB,
    play_stochastic_batch,
    single_reason,
)

__all__ = ["PanelChoice", "StochasticWitnessProblem", "fresh_player", "play_stochastic_witness"]

NAME = "stochastic-witness"


@runtime_checkable
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


class StochasticWitnessA(StochasticA, Protocol):
    """Prover A's role: a witness per debate, then Figure 1's moves on M(x, w)."""

    def witnesses(
        self, problem: StochasticWitnessProblem, n: int, rng: np.random.Generator
    ) -> object:
        """A list of ``n`` witnesses, one per debate (A's own copy of the problem)."""
        ...


WITNESSES = Method(
    "witnesses", (PROBLEM, COUNT, RNG), "a list of n witnesses (bytes each), one per debate"
)


def fresh_player(player: object, protocol: str, role: str, witness: bytes | None = None) -> object:
    """A new player like ``player``: rebuilt from its registered spec, else a deep copy.

    Each witness's debate gets its own, so nothing a player cached for one machine (say,
    an optimal policy) is played on another.  A player in its own process gets a new
    process that plays on M(x, ``witness``).
    """
    fresh = getattr(type(player), "fresh", None)
    if getattr(type(player), "isolated", False) and fresh is not None:
        return fresh(player, witness)
    spec = player_spec(player, protocol, role)
    if not spec.name.startswith("custom:"):
        return make_strategy(spec.protocol, spec.role, spec.name, **dict(spec.args))
    return copy.deepcopy(player)


def play_stochastic_witness(
    problem: StochasticWitnessProblem,
    params: StochasticParams,
    prover_a: object,
    prover_b: object,
    *,
    debates: int = 1,
    seed: int | None = 0,
    timeout: float | None = None,
) -> Batch:
    """Run ``debates`` debates: A's witnesses first, then Figure 1 on each M(x, w).

    Debates sharing a witness run in lockstep together, each group with fresh players.
    A strategy whose ``witnesses`` raises loses every debate; a malformed witness loses its
    debate (reasons recorded in :attr:`Batch.forfeits`).
    """
    require_type("problem", problem, StochasticWitnessProblem, "PanelChoice(...)")
    if params.steps != problem.steps:
        raise ProtocolError(f"params are for T = {params.steps}; M(x, w) has {problem.steps}")
    if type(debates) is not int or debates <= 0:
        raise ProtocolError(f"debates must be a positive integer, got {debates!r}")
    start = time.perf_counter()
    rng_w, rng_debate = spawn_rngs(seed, 2)
    log = ForfeitLog(debates)
    verdicts = np.zeros(debates, dtype=np.int64)
    aborts = np.full(debates, -1, dtype=np.int64)
    samples = {p: np.zeros(debates, dtype=np.int64) for p in PARTIES}
    calls = dict.fromkeys(PARTIES, 0)
    groups = _witness_groups(problem, prover_a, debates, rng_w, log, timeout)
    seeds = np.random.SeedSequence(int(rng_debate.integers(2**63))).spawn(max(1, len(groups)))
    played = 0
    for (w, rows), s in zip(sorted(groups.items()), seeds, strict=False):
        res = play_stochastic_batch(
            problem.machine(w), params, 1,
            fresh_player(prover_a, NAME, "A", w), fresh_player(prover_b, NAME, "B", w),
            debates=len(rows), seed=int(s.generate_state(1)[0]), timeout=timeout,
        )  # fmt: skip
        idx = np.asarray(rows, dtype=np.int64)
        verdicts[idx], aborts[idx] = res.verdicts, res.abort_rounds
        for f in res.forfeits:
            lost = idx[res.forfeited_by == f.party]
            log.record(f.party, f.reason, lost)
        for p in PARTIES:
            samples[p][idx] = res.samples[p]
            calls[p] += res.oracle_calls[p]
        played = max(played, res.rounds_played)
    lost_a = log.by == "A"
    verdicts[lost_a] = 0
    names = {"".join(map(str, w)): len(rows) for w, rows in groups.items()}
    return Batch(
        NAME, problem.name, 1, verdicts, log.by, log.counts(), samples, calls, aborts, played,
        player_spec(prover_a, NAME, "A"), player_spec(prover_b, NAME, "B"), seed, params,
        details={"witnesses": names}, seconds=time.perf_counter() - start,
    )  # fmt: skip


def _witness_groups(
    problem: StochasticWitnessProblem,
    prover_a: object,
    debates: int,
    rng: np.random.Generator,
    log: ForfeitLog,
    timeout: float | None,
) -> dict[bytes, list[int]]:
    """A's witnesses (one call, on A's own copy of the problem), grouped by witness."""
    everything = np.arange(debates)
    start = time.perf_counter()
    with interrupts.guard():
        try:
            sent = prover_a.witnesses(copy.deepcopy(problem), debates, rng)  # type: ignore[attr-defined]
            if type(sent) not in (list, tuple):
                raise Malformed(f"witnesses must be a list, got {type(sent).__name__}")
            sent = list(sent)
        except BaseException as exc:
            if interrupts.by_user(exc):
                raise
            log.record("A", f"witnesses raised {describe_exception(exc)}", everything)
            return {}
        interrupts.check()
    if timeout is not None and time.perf_counter() - start > timeout:
        log.record("A", "witnesses timed out", everything)
        return {}
    if len(sent) != debates:
        log.record("A", f"sent {len(sent)} witnesses for {debates} debates", everything)
        return {}
    groups: dict[bytes, list[int]] = {}
    for i, w in enumerate(sent):
        try:
            checked = problem.validate_witness(as_bytes(w, "witness"))
        except (Malformed, ValueError) as exc:
            log.record("A", f"malformed witness ({exc})", np.array([i]))
            continue
        groups.setdefault(checked, []).append(i)
    return groups


def _params(opts: Options, problem: StochasticWitnessProblem) -> StochasticParams:
    """Named sets derived with the largest every-step K over the witnesses' machines."""
    from ..stochastic.hypothesis import K_DEFINITIONS, STEP, witness_hypothesis_lipschitz

    if isinstance(opts.params, StochasticParams):
        return opts.params
    spec = "paper" if opts.params is None else str(opts.params)
    check_params_spec(spec)  # before the K of every witness's machine
    k = witness_hypothesis_lipschitz(problem)
    return replace(resolve_params(spec, k, problem.steps), k_definition=K_DEFINITIONS[STEP])


def _run_batch(
    inst: Instance, claim: int, a: object, b: object, opts: Options, debates: int
) -> Batch:
    if claim != 1:
        raise ProtocolError("the stochastic witness protocol proves membership: the claim is 1")
    problem = inst.target
    return play_stochastic_witness(
        problem, _params(opts, problem), a, b, debates=debates, seed=opts.seed,
        timeout=opts.timeout,
    )  # fmt: skip


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    res = _run_batch(inst, claim, a, b, opts, 1)
    d = Debate(NAME, a, b, None, opts.seed)
    witness = next(iter(res.details["witnesses"]), None)
    if witness is not None:
        d.say(0, "A", "witness", witness)
    verdict, abort = int(res.verdicts[0]), int(res.abort_rounds[0])
    reason = single_reason(d, res)
    out = d.outcome(
        inst.name, inst.steps, 1, verdict, reason, rounds=res.rounds_played,
        reads=1 if abort < 0 else 2, unit="entries", bits=1, verifier_steps=int(abort >= 0),
        b_reads=res.rounds_played,
    )  # fmt: skip
    costs = replace(
        out.costs,
        verifier_queries=int(res.samples["V"][0]),
        prover_queries={p: int(res.samples[p][0]) for p in ("A", "B")},
    )
    details = {"witness": witness, "params": res.params.to_dict(), "abort_round": abort,
               "best_item_p_accept": inst.p_accept}  # fmt: skip
    return replace(out, costs=costs, details=details)


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 2 (stochastic oracle: Figure 1 on M(x, w))",
        theorem="Theorem 7.2",
        instance="stochastic-witness",
        completeness=3 / 5,
        soundness=2 / 5,
        verifier_cost="the witness's format, then as Figure 1 on M(x, w)",
        play=play_stochastic_witness,
        defaults=Defaults(
            "panel-choice:p=0.2;0.9;0.4", liar_a="random", disputer_b="honest", params="paper"
        ),
        run=_run,
        run_batch=_run_batch,
        roles={
            "A": Role(StochasticWitnessA, (WITNESSES, ANNOUNCE, COIN)),
            "B": Role(StochasticB, (COIN, ABORT)),
        },
        claims=(1,),
    )
)
