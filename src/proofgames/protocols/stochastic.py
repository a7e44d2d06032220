"""Stochastic-oracle debate (Figure 1, Theorem 6.2; Lean formalization), run in lockstep.

Rules, for a K-Lipschitz machine M of T binary steps with a stochastic oracle.  A claims
``P[M = claim] >= 2/3``.  In round t = 0 .. T-1, with ``a_I(t)`` A's earlier bits:

(a) A announces p_t, claimed to equal P[y_t = 1 | y_I(t) = a_I(t)].
(b)-(d) a coin sets the bit a_t = 1 w.p. p_t: with the ``paper`` parameters the coin is
    z_A + z_B mod 1 (each prover contributes z in [0, 1); a_t = 1 iff z < p_t) and B
    decides (e) after seeing it; with ``lean`` parameters B decides first and the coin is
    an external Bernoulli(clamp(p_t)).
(e) B may abort.  Then V estimates p_t itself -- exactly for a deterministic step, from
    ``v_samples`` oracle samples for a query -- and accepts A's claim iff its estimate is
    within ``v_threshold`` of p_t.  The debate ends.
If nobody aborts, V accepts iff a_{T-1} = claim.

Guarantees (see :mod:`proofgames.stochastic.params`): with the paper's constants, if
P[M = claim] >= 2/3 honest A is accepted w.p. >= 3/5 against any B; if P[M = claim] <= 1/3,
honest B keeps acceptance <= 2/5 against any A.  The Lean defaults prove the formulas
returned by :meth:`StochasticParams.proven_completeness` and ``proven_soundness``.

Many debates run at once: every round is a handful of numpy operations over all debates
still running.  When the oracle's probabilities are known, R samples are one
Binomial(R, p) draw -- exactly the distribution of their sum; ``sampling="per-sample"``
draws them one by one (for checking), and ``sampling="oracle"`` makes real, counted calls
to an :class:`~proofgames.Oracle` within a budget.

Example:
    >>> from proofgames.stochastic import StochasticBuilder, lean_params
    >>> from proofgames.protocols.stochastic import play_stochastic_batch
    >>> from proofgames.strategies import make_strategy
    >>> b = StochasticBuilder([0.9]); _ = b.query(0)
    >>> m = b.build("single-query:p=0.9", lipschitz=1.0, p_accept=0.9)
    >>> res = play_stochastic_batch(m, lean_params(1.0, 1), 1,
    ...     make_strategy("stochastic", "A", "honest"), make_strategy("stochastic", "B", "honest"),
    ...     debates=2000, seed=0)
    >>> bool(res.acceptance > 0.8)
    True
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .. import interrupts
from .._oracle import PARTIES, Oracle, OracleLedger
from .._seeds import check_timeout
from .._transcript import IntArray
from ..errors import ProtocolError, require_type
from ..stochastic.model import FloatArray, StochasticMachine
from ..stochastic.params import EXTERNAL, StochasticParams
from ..wire import as_bool_array, as_float_array
from ._batch import Batch, BatchResult
from ._catalog import Defaults, Instance, Options, ProtocolInfo, register_protocol
from ._common import Debate, Outcome, player_spec, spawn_rngs
from ._lockstep import (
    COUNTER_LIMIT,
    PER_SAMPLE_LIMIT,
    ForfeitLog,
    LockstepParty,
    Round,
    Sampler,
    own_copy,
    party_round,
    round_dict,
)
from .roles import RNG, Method, Role, sent

NAME = "stochastic"
SAMPLING = ("binomial", "per-sample", "oracle")
BoolArray = NDArray[np.bool_]
__all__ = ["Batch", "BatchResult", "Round", "StochasticA", "StochasticB", "play_stochastic",
           "play_stochastic_batch"]  # fmt: skip


class StochasticA(Protocol):
    """Prover A's role: a probability per running debate, and a share of the shared coin.

    Both moves are vectors over the running debates (``r.n`` numbers), copied by V before
    use; a value outside [0, 1] (a coin share outside [0, 1)) loses that debate.
    """

    def announce(self, r: Round, rng: np.random.Generator) -> object:
        """A's claimed p_t for each running debate."""
        ...

    def coin(self, r: Round, rng: np.random.Generator) -> object:
        """A's share z_A in [0, 1) of the shared coin (paper coin only; honest: uniform)."""
        return rng.random(r.n)


class StochasticB(Protocol):
    """Prover B's role: a share of the shared coin, and whether to abort each debate."""

    def coin(self, r: Round, rng: np.random.Generator) -> object:
        """B's share z_B in [0, 1) of the shared coin (paper coin only; honest: uniform)."""
        return rng.random(r.n)

    def abort(
        self, r: Round, rng: np.random.Generator, announced: FloatArray, bits: IntArray | None
    ) -> object:
        """Whether B aborts each debate, as booleans (``bits`` is None before the coin)."""
        ...


ROUND = sent(
    "r",
    '{"t": int, "n": int, "rows": int64[n], "values": int64[n, |I(t)|], "is_query": bool, '
    '"p": float64[n], "prefix": int64[n, t], "claim": int, "params": object}',
    decode=party_round,
    encode=round_dict,
)
ANNOUNCED = sent("announced", "float64[n]", decode=lambda x, side: np.asarray(x, dtype=np.float64))
BITS = sent(
    "bits",
    "int64[n] or null (null: B decides before the coin)",
    decode=lambda x, side: None if x is None else np.asarray(x, dtype=np.int64),
)
ANNOUNCE = Method("announce", (ROUND, RNG), "float64[n] in [0, 1]: A's claimed p_t")
COIN = Method("coin", (ROUND, RNG), "float64[n] in [0, 1): a share of the coin (paper coin)")
ABORT = Method("abort", (ROUND, RNG, ANNOUNCED, BITS), "bool[n]: whether B aborts each debate")


def _check(
    machine: StochasticMachine, params: StochasticParams, claim: int, debates: int, how: str
) -> None:
    """Refuse bad arguments and runs over the simulator's limits, before any play."""
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    if how not in SAMPLING:
        raise ProtocolError(f"sampling must be one of {SAMPLING}, got {how!r}")
    if params.steps != machine.length:
        raise ProtocolError(f"params are for T = {params.steps}; the machine has {machine.length}")
    if type(debates) is not int or debates <= 0:
        raise ProtocolError(f"debates must be a positive integer, got {debates!r}")
    _check_counters(machine, params)
    most = max(params.a_samples, params.b_samples, params.v_samples) * debates
    if how == "per-sample" and most > PER_SAMPLE_LIMIT:
        raise ProtocolError(
            f"per-sample drawing needs up to {most:,} samples in one round, over the limit of "
            f"{PER_SAMPLE_LIMIT:,}; use sampling='binomial' (the same distribution) or fewer "
            "debates"
        )


def _check_counters(machine: StochasticMachine, params: StochasticParams) -> None:
    """Refuse, before play, a debate whose prescribed samples overflow the exact counters.

    Each debate's samples are counted per party in 64-bit integers; an honest prover
    samples at every oracle step, so ``samples x oracle steps`` must fit.
    """
    queries = sum(machine.is_query(t) for t in range(machine.length))
    for party, per_step in (("A", params.a_samples), ("B", params.b_samples)):
        if per_step * queries > COUNTER_LIMIT:
            raise ProtocolError(
                f"{party}'s prescribed samples per debate ({per_step:,} at each of "
                f"{queries:,} oracle steps = {per_step * queries:.3g}) exceed the "
                f"{COUNTER_LIMIT:.3g} that the simulator counts exactly; use a machine "
                "with fewer oracle steps or parameters with fewer prover samples"
            )


def _check_budget(
    machine: StochasticMachine, params: StochasticParams, debates: int, budget: int
) -> None:
    """Refuse, before play, a budget below what the protocol prescribes to an honest party.

    An honest prover samples at every oracle step, V at most once per debate; a budget that
    cannot cover that would turn a simulator limit into an honest party's forfeit.  A party
    that asks for more than its prescribed samples still pays with its own budget.
    """
    queries = sum(machine.is_query(t) for t in range(machine.length))
    need = {
        "A": params.a_samples * queries * debates,
        "B": params.b_samples * queries * debates,
        "V": params.v_samples * debates,
    }
    short = {p: n for p, n in need.items() if n > budget}
    if short:
        raise ProtocolError(
            f"an oracle budget of {budget:,} calls per party is below what the protocol "
            f"prescribes to honest parties ({', '.join(f'{p}: {n:,}' for p, n in short.items())}"
            f" for {debates} debates); raise the budget or play fewer debates"
        )


def play_stochastic_batch(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    debates: int = 1,
    seed: int | None = 0,
    sampling: str = "binomial",
    oracle: Oracle | None = None,
    budget: int | None = None,
    record: list[dict[str, Any]] | None = None,
    timeout: float | None = None,
) -> Batch:
    """Run ``debates`` independent debates in lockstep.

    Args:
        machine: the stochastic machine.
        params: protocol constants (:func:`~proofgames.stochastic.paper_params`, ...).
        claim: the output A asserts has probability >= 2/3.
        prover_a: A's stochastic player (registered, or any object with the role).
        prover_b: B's, as ``prover_a``.
        debates: how many debates.
        seed: root seed; A, B and V get independent move and sampling streams.
        sampling: ``"binomial"``, ``"per-sample"`` or ``"oracle"`` (real calls to ``oracle``).
        oracle: the oracle for ``sampling="oracle"``.
        budget: the most oracle calls each party may make in ``"oracle"`` mode.
        record: if a list, per-round messages of debate 0 are appended to it.
        timeout: seconds allowed per party call (checked when it returns).
    """
    require_type("machine", machine, StochasticMachine, "make_stochastic_machine('chain:T=100')")
    _check(machine, params, claim, debates, sampling)
    if sampling == "oracle" and oracle is None:
        raise ProtocolError("sampling='oracle' needs an oracle")
    if sampling == "oracle" and budget is not None:
        _check_budget(machine, params, debates, budget)
    start = time.perf_counter()
    timeout = check_timeout(timeout)
    run = _Lockstep(machine, params, claim, debates, seed, sampling, oracle, budget, timeout)
    pa, pb = run.party("A", prover_a), run.party("B", prover_b)
    active, played = np.arange(debates), 0
    with interrupts.guard():  # once for the run: each party call's own guard nests in it
        for t in range(machine.length):  # (installing handlers 4 times a round cost ~10%)
            if active.size == 0:
                break
            active = run.round(t, active, pa, pb, record)
            played = t + 1  # rounds 0..t were played
    run.verdicts[active] = (run.bits[machine.length - 1, active] == claim).astype(np.int64)
    if debates == 1:  # a prover in its own process samples there: its own report counts
        for name, party in (("A", pa), ("B", pb)):
            run.counts[name][0] += party.reported_queries
    return Batch(
        NAME, machine.name, claim, run.verdicts, run.log.by, run.log.counts(), run.counts,
        {p: ledger.counts()[p] for p, ledger in run.ledgers.items()}, run.aborts, played,
        player_spec(prover_a, NAME, "A"), player_spec(prover_b, NAME, "B"), seed, params,
        seconds=time.perf_counter() - start,
    )  # fmt: skip


class _Lockstep:
    """The state of one lockstep run: V's transcript, verdicts, ledgers, streams, forfeits."""

    def __init__(
        self,
        machine: StochasticMachine,
        params: StochasticParams,
        claim: int,
        n: int,
        seed: int | None,
        sampling: str,
        oracle: Oracle | None,
        budget: int | None,
        timeout: float | None,
    ) -> None:
        self.machine, self.params, self.claim = machine, params, claim
        self.sampling, self.budget, self.timeout = sampling, budget, timeout
        self.rng = dict(zip(("A", "B", "V", "SA", "SB", "SV"), spawn_rngs(seed, 6), strict=True))
        self.counts = {party: np.zeros(n, dtype=np.int64) for party in PARTIES}
        self.ledgers = {"V": OracleLedger(oracle)} | {
            p: OracleLedger(own_copy(oracle)) for p in ("A", "B")
        }
        self.v_sampler = Sampler(
            machine, sampling, self.rng["SV"], self.counts["V"], self.ledgers["V"].view("V"), budget
        )
        self.bits = np.zeros((machine.length, n), dtype=np.int8)  # time-major: a round, a row
        self.verdicts = np.zeros(n, dtype=np.int64)
        self.aborts = np.full(n, -1, dtype=np.int64)
        self.log = ForfeitLog(n)

    def party(self, name: str, player: object) -> LockstepParty:
        """V's handle on a party, with its own copies, streams, counts and ledger."""
        m = own_copy(self.machine)
        view = self.ledgers[name].view(name)
        sampler = Sampler(
            m, self.sampling, self.rng["S" + name], self.counts[name], view, self.budget
        )
        out = LockstepParty(name, player, m, own_copy(self.params), sampler, self.timeout)
        out.start(self.verdicts.size)
        return out

    def round(
        self,
        t: int,
        active: IntArray,
        pa: LockstepParty,
        pb: LockstepParty,
        record: list[dict[str, Any]] | None,
    ) -> IntArray:
        """Play round ``t`` of the running debates; return those still running."""
        m = self.machine
        rel = np.asarray(m.relevant(t), dtype=np.int64)
        values = np.ascontiguousarray(self.bits[np.ix_(rel, active)].T, dtype=np.int64)
        p = m.probability_batch(t, values)
        a_t, ann, stop = _moves(pa, pb, self.log, active, t, values, p, self.claim, self.params,
                                self.rng)  # fmt: skip
        self.bits[t, active] = a_t
        pa.reveal(active, t, a_t)
        pb.reveal(active, t, a_t)
        lost = self.log.lost[active]
        if lost.any():
            self.verdicts[active[lost]] = (self.log.by[active[lost]] == "B").astype(np.int64)
        checked = stop & ~lost
        if checked.any():
            self.verdicts[active[checked]] = self._check_abort(t, active, values, p, ann, checked)
            self.aborts[active[checked]] = t
        if record is not None and active.size and active[0] == 0:
            record.append({"round": t, "announced": float(ann[0]), "bit": int(a_t[0]),
                           "abort": bool(stop[0]), "true_p": float(p[0])})  # fmt: skip
        still: IntArray = active[~(lost | checked)]
        return still

    def _check_abort(
        self,
        t: int,
        active: IntArray,
        values: IntArray,
        p: FloatArray,
        ann: FloatArray,
        checked: BoolArray,
    ) -> IntArray:
        """V's verdicts where B aborted: its own estimate against A's announcement."""
        self.v_sampler.bind(t, active, values, p)
        gap = np.abs(self.v_sampler(self.params.v_samples, subset=checked) - ann[checked])
        close = gap < self.params.v_threshold
        strict = self.params.exact_step_tolerance()
        if strict is not None:  # known-probability rows must match exactly
            m = self.machine
            known = (not m.is_query(t)) | m.internal_batch(t, values[checked])
            close = np.where(known, gap <= strict, close)
        return np.asarray(close, dtype=np.int64)


def _moves(
    pa: LockstepParty,
    pb: LockstepParty,
    log: ForfeitLog,
    active: IntArray,
    t: int,
    values: IntArray,
    p: FloatArray,
    claim: int,
    params: StochasticParams,
    rng: dict[str, np.random.Generator],
) -> tuple[IntArray, FloatArray, BoolArray]:
    """One round's moves: A's bits, its announcements and B's aborts (forfeits logged)."""
    n = active.size
    ra, rb = pa.round(t, active, values, p, claim), pb.round(t, active, values, p, claim)

    def unit(raw: object) -> FloatArray:
        return as_float_array(raw, n, "vector")

    def flags(raw: object) -> BoolArray:
        return as_bool_array(raw, n, "abort decision")

    ann = pa.call(log, active, "announcement", "announce", (ra, rng["A"]), unit)
    ann = np.full(n, np.nan) if ann is None else ann
    bad = ~((ann >= 0) & (ann <= 1))
    if bad.any():
        log.record("A", "announced a probability outside [0, 1]", active[bad])
        ann = np.where(bad, 0.0, ann)
    shown = ann.copy()
    shown.setflags(write=False)
    if params.coin == EXTERNAL:
        stop = pb.call(log, active, "abort decision", "abort", (rb, rng["B"], shown, None), flags)
        a_t = (rng["V"].random(n) < ann).astype(np.int64)
    else:
        z = np.zeros(n)
        for pl, r in ((pa, ra), (pb, rb)):  # each share is committed blind to the other's
            share = pl.call(log, active, "coin share", "coin", (r, rng[pl.name]), unit)
            share = np.full(n, np.nan) if share is None else share
            bad = ~((share >= 0) & (share < 1))
            if bad.any():
                log.record(pl.name, "sent a coin share outside [0, 1)", active[bad])
                share = np.where(bad, 0.0, share)
            z += share
        a_t = (np.mod(z, 1.0) < ann).astype(np.int64)
        seen = a_t.copy()
        seen.setflags(write=False)
        stop = pb.call(log, active, "abort decision", "abort", (rb, rng["B"], shown, seen), flags)
    stop = np.zeros(n, dtype=np.bool_) if stop is None else np.asarray(stop)
    return a_t, ann, stop


def single_reason(d: Debate, res: Batch) -> str:
    """Why V decided the one debate of ``res`` (a forfeit is also blamed in ``d``)."""
    abort, verdict, loser = int(res.abort_rounds[0]), int(res.verdicts[0]), str(res.forfeited_by[0])
    if loser:
        d.blame(loser, res.forfeits[0].reason)
        return f"{loser} loses: {res.forfeits[0].reason}"
    if abort >= 0:
        agree = "agrees" if verdict else "disagrees"
        return f"B aborted in round {abort}; V's own estimate {agree} with A's announcement"
    return f"no abort: the last bit is {'the claim' if verdict else 'not the claim'}"


def play_stochastic(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    seed: int | None = 0,
    sampling: str = "binomial",
    oracle: Oracle | None = None,
    budget: int | None = None,
    timeout: float | None = None,
) -> Outcome:
    """Play one debate and return its full record (messages, samples per party).

    Costs: ``rounds`` played; V reads A's relevant bits and announcement on an abort (else
    only the last bit); ``verifier_queries`` and ``prover_queries`` are the oracle samples
    each party called for (with known probabilities they are drawn as binomials; with
    ``sampling="oracle"`` each is a real call).

    Example:
        Three votes, each 1 with probability 0.8: their majority is 1 with probability
        0.896.  A claims it is 0, shading every announcement toward 0 by 90% of B's abort
        threshold; honest B aborts in round 1 and V's own estimate sides with B:

        >>> from proofgames import machine_params, make_stochastic_machine, make_strategy
        >>> from proofgames import play_stochastic
        >>> m = make_stochastic_machine("majority:n=3,p=0.8")
        >>> out = play_stochastic(m, machine_params("lean", m), 0,
        ...     make_strategy("stochastic", "A", "evade:margin=0.9"),
        ...     make_strategy("stochastic", "B", "honest"), seed=0)
        >>> out.winner, out.reason
        ('B', "B aborted in round 1; V's own estimate disagrees with A's announcement")
        >>> out.costs.rounds, out.costs.verifier_queries, out.details["abort_round"]
        (2, 716101, 1)
    """
    require_type("machine", machine, StochasticMachine, "make_stochastic_machine('chain:T=100')")
    rounds: list[dict[str, Any]] = []
    res = play_stochastic_batch(
        machine, params, claim, prover_a, prover_b, debates=1, seed=seed, sampling=sampling,
        oracle=oracle, budget=budget, record=rounds, timeout=timeout,
    )  # fmt: skip
    d = Debate(NAME, prover_a, prover_b, oracle, seed)
    for item in rounds:
        d.say(item["round"], "A", "announce", item["announced"])
        d.say(item["round"], "coin", "bit", item["bit"])
        d.say(item["round"], "B", "abort" if item["abort"] else "continue", item["true_p"])
    abort, verdict = int(res.abort_rounds[0]), int(res.verdicts[0])
    reason = single_reason(d, res)
    reads = len(machine.relevant(abort)) + 1 if abort >= 0 else 1
    samples = {party: int(res.samples[party][0]) for party in PARTIES}
    out = d.outcome(
        machine.name,
        machine.length,
        claim,
        verdict,
        reason,
        rounds=res.rounds_played,
        reads=reads,
        unit="entries",
        bits=reads,
        verifier_steps=int(abort >= 0),
        b_reads=res.rounds_played,
    )
    costs = replace(
        out.costs,
        verifier_queries=samples["V"],
        prover_queries={"A": samples["A"], "B": samples["B"]},
        prover_steps={"A": res.rounds_played, "B": res.rounds_played},
    )
    details = {"params": params.to_dict(), "abort_round": abort, "sampling": sampling}
    return replace(out, costs=costs, details=details)


def resolve_options_params(opts: Options, machine: StochasticMachine) -> StochasticParams:
    """The parameters a harness run asked for (default: the paper's), for ``machine``.

    Named sets are derived with the every-step K, which meets the theorem's hypothesis
    (:func:`~proofgames.stochastic.hypothesis.machine_params`).
    """
    from ..stochastic.hypothesis import machine_params

    spec = "paper" if opts.params is None else opts.params
    if isinstance(spec, StochasticParams):
        return spec
    return machine_params(str(spec), machine)


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    m = inst.target
    params = resolve_options_params(opts, m)
    out = play_stochastic(
        m, params, claim, a, b, seed=opts.seed, sampling=opts.sampling, timeout=opts.timeout
    )
    return replace(out, details=out.details | {"p_accept": inst.p_accept})


def _run_batch(
    inst: Instance, claim: int, a: object, b: object, opts: Options, debates: int
) -> Batch:
    m = inst.target
    params = resolve_options_params(opts, m)
    return play_stochastic_batch(
        m, params, claim, a, b, debates=debates, seed=opts.seed, sampling=opts.sampling,
        timeout=opts.timeout,
    )  # fmt: skip


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 1 (and the Lean formalization's variant)",
        theorem="Theorem 6.2",
        instance="stochastic",
        completeness=3 / 5,
        soundness=2 / 5,
        verifier_cost="reads |I(t)| + 1 entries; O(K^2) oracle samples (only on an abort)",
        play=play_stochastic,
        defaults=Defaults(
            "majority:n=5,p=0.8", liar_a="evade", disputer_b="abort-against", params="paper"
        ),
        run=_run,
        run_batch=_run_batch,
        roles={
            "A": Role(StochasticA, (ANNOUNCE, COIN)),
            "B": Role(StochasticB, (COIN, ABORT)),
        },
    )
)
