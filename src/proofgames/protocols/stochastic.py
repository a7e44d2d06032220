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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._errors import ProtocolError
from .._oracle import PARTIES, Oracle, OracleLedger
from .._registry import Player
from .._transcript import IntArray
from ..stochastic.machine import FloatArray, StochasticMachine
from ..stochastic.params import EXTERNAL, StochasticParams
from ._catalog import ProtocolInfo, register_protocol
from ._common import Debate, Outcome, spawn_rngs

NAME = "stochastic"
SAMPLING = ("binomial", "per-sample", "oracle")
BoolArray = NDArray[np.bool_]


@dataclass
class Round:
    """What the strategies see in round ``t`` (for the debates still running).

    Attributes:
        t: the round (= step of M).
        rows: indices of the running debates.
        values: A's relevant bits ``a_I(t)`` for each, shape ``(n, |I(t)|)``.
        is_query: whether step t queries the oracle.
        p: the true conditional probability P[y_t = 1 | a_I(t)] (what samples are drawn from).
        params: the protocol's parameters.
        claim: the output A asserts.
        machine: the machine.
    """

    t: int
    rows: IntArray
    values: IntArray
    is_query: bool
    p: FloatArray
    params: StochasticParams
    claim: int
    machine: StochasticMachine
    _sample: Callable[[str, int], FloatArray] = field(repr=False)
    _bits: NDArray[np.int8] = field(repr=False, default_factory=lambda: np.zeros((0, 0), np.int8))

    @property
    def prefix(self) -> IntArray:
        """All of A's bits so far for the running debates, shape ``(n, t)`` (a copy)."""
        return np.asarray(self._bits[self.rows, : self.t], dtype=np.int64)

    @property
    def n(self) -> int:
        """Number of running debates."""
        return int(self.rows.size)

    def estimate(self, party: str, samples: int) -> FloatArray:
        """``party``'s estimate of p from ``samples`` samples (exact, free, if deterministic)."""
        return self._sample(party, samples)


class StochasticA(Player):
    """Prover A's interface: a probability per round and a coin share."""

    def announce(self, r: Round, rng: np.random.Generator) -> FloatArray:
        """A's claimed p_t for each running debate."""
        raise NotImplementedError

    def coin(self, r: Round, rng: np.random.Generator) -> FloatArray:
        """A's share z_A in [0, 1) of the shared coin (honest: uniform)."""
        return rng.random(r.n)


class StochasticB(Player):
    """Prover B's interface: a coin share and the decision to abort."""

    def coin(self, r: Round, rng: np.random.Generator) -> FloatArray:
        """B's share z_B in [0, 1) of the shared coin (honest: uniform)."""
        return rng.random(r.n)

    def abort(
        self, r: Round, rng: np.random.Generator, announced: FloatArray, bits: IntArray | None
    ) -> BoolArray:
        """Whether B aborts each debate (``bits`` is None when B moves before the coin)."""
        raise NotImplementedError


@dataclass(frozen=True)
class BatchResult:
    """The outcome of many debates run together.

    Attributes:
        verdicts: 1 where V accepted A's claim.
        abort_rounds: the round B aborted in, or -1.
        samples: per party, the oracle samples each debate called for.
        oracle_calls: per party, real oracle calls made (0 when sampling from known p).
        forfeits: reasons a party lost debates by misbehaving.
        params: the parameters used.
        seconds: wall time.
    """

    verdicts: IntArray
    abort_rounds: IntArray
    samples: dict[str, IntArray]
    oracle_calls: dict[str, int]
    forfeits: tuple[str, ...]
    params: StochasticParams
    rounds_played: int
    seconds: float = field(default=0.0, compare=False)

    @property
    def debates(self) -> int:
        """Number of debates."""
        return int(self.verdicts.size)

    @property
    def acceptance(self) -> float:
        """Fraction of debates in which V accepted A's claim."""
        return float(self.verdicts.mean()) if self.verdicts.size else 0.0


def _estimator(
    machine: StochasticMachine,
    sampling: str,
    ledger: OracleLedger,
    budget: int | None,
) -> Callable[..., FloatArray]:
    def estimate(
        party: str, t: int, values: IntArray, p: FloatArray, samples: int, rng: np.random.Generator
    ) -> FloatArray:
        if sampling == "binomial":
            return rng.binomial(samples, p) / samples
        if sampling == "per-sample":
            if samples * p.size > 50_000_000:
                raise ProtocolError(
                    f"per-sample drawing of {samples} x {p.size} samples is too big"
                )
            return np.asarray((rng.random((p.size, samples)) < p[:, None]).mean(axis=1), np.float64)
        view = ledger.view(party)
        if budget is not None and view.queries + samples * p.size > budget:
            raise ProtocolError(
                f"{party} would exceed the oracle budget of {budget} calls "
                f"({view.queries} made, {samples * p.size} more needed)"
            )
        total = np.zeros(p.size)
        for _ in range(samples):
            total += machine.step_batch(t, values, view, rng)
        return total / samples

    return estimate


def _probabilities(x: object, n: int) -> FloatArray | None:
    try:
        arr = np.asarray(x, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return None
    return arr if arr.shape == (n,) else None


def play_stochastic_batch(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    prover_a: Player,
    prover_b: Player,
    *,
    debates: int = 1,
    seed: int | None = 0,
    sampling: str = "binomial",
    oracle: Oracle | None = None,
    budget: int | None = None,
    record: list[dict[str, Any]] | None = None,
) -> BatchResult:
    """Run ``debates`` independent debates in lockstep.

    Args:
        machine: the stochastic machine.
        params: protocol constants (:func:`~proofgames.stochastic.paper_params`, ...).
        claim: the output A asserts has probability >= 2/3.
        prover_a, prover_b: registered stochastic strategies.
        debates: how many debates.
        seed: root seed; A, B, V and the sampler get independent streams.
        sampling: ``"binomial"``, ``"per-sample"`` or ``"oracle"`` (real calls to ``oracle``).
        oracle: the oracle for ``sampling="oracle"``.
        budget: the most oracle calls each party may make in ``"oracle"`` mode.
        record: if a list, per-round messages of debate 0 are appended to it.
    """
    if claim not in (0, 1):
        raise ProtocolError(f"claim must be 0 or 1, got {claim!r}")
    if sampling not in SAMPLING:
        raise ProtocolError(f"sampling must be one of {SAMPLING}, got {sampling!r}")
    if sampling == "oracle" and oracle is None:
        raise ProtocolError("sampling='oracle' needs an oracle")
    if params.steps != machine.length:
        raise ProtocolError(f"params are for T = {params.steps}; the machine has {machine.length}")
    if debates <= 0:
        raise ProtocolError(f"debates must be positive, got {debates}")
    start = time.perf_counter()
    ledger = OracleLedger(oracle)
    rng = dict(zip((*PARTIES, "S"), spawn_rngs(seed, 4), strict=True))
    sample = _estimator(machine, sampling, ledger, budget)
    n, steps = debates, machine.length
    bits = np.zeros((n, steps), dtype=np.int8)
    verdicts = np.zeros(n, dtype=np.int64)
    aborts = np.full(n, -1, dtype=np.int64)
    counts = {party: np.zeros(n, dtype=np.int64) for party in PARTIES}
    forfeits: list[str] = []
    active = np.arange(n)
    t = 0
    for t in range(steps):
        if active.size == 0:
            break
        rel = np.asarray(machine.relevant(t), dtype=np.int64)
        values = (
            bits[np.ix_(active, rel)].astype(np.int64)
            if rel.size
            else np.zeros((active.size, 0), np.int64)
        )
        p = machine.probability_batch(t, values)
        query = machine.is_query(t)

        def draw(
            party: str,
            k: int,
            rows: IntArray = active,
            vals: IntArray = values,
            probs: FloatArray = p,
            tt: int = t,
            q: bool = query,
        ) -> FloatArray:
            if not q:
                return probs.copy()
            coin = machine.internal_batch(tt, vals)  # internal coins: known to everyone
            if coin.all():
                return probs.copy()
            if not coin.any():
                counts[party][rows] += k
                return sample(party, tt, vals, probs, k, rng["S"])
            out = probs.copy()
            counts[party][rows[~coin]] += k
            out[~coin] = sample(party, tt, vals[~coin], probs[~coin], k, rng["S"])
            return out

        r = Round(t, active, values, query, p, params, claim, machine, draw, bits)
        announced = _call_vector(
            "A", getattr(prover_a, "announce", None), (r, rng["A"]), r.n, forfeits, check_unit=True
        )
        bad_a = np.isnan(announced)
        if params.coin == EXTERNAL:
            stop, bad_b = _abort(prover_b, r, rng["B"], np.nan_to_num(announced), None, forfeits)
            coin = rng["V"].random(r.n)
            a_t = (coin < np.clip(np.nan_to_num(announced), 0, 1)).astype(np.int64)
        else:
            z_a = _call_vector(
                "A",
                getattr(prover_a, "coin", None),
                (r, rng["A"]),
                r.n,
                forfeits,
                True,
                unit_open=True,
            )
            z_b = _call_vector(
                "B",
                getattr(prover_b, "coin", None),
                (r, rng["B"]),
                r.n,
                forfeits,
                True,
                unit_open=True,
            )
            bad_a |= np.isnan(z_a)
            z = np.mod(np.nan_to_num(z_a) + np.nan_to_num(z_b), 1.0)
            a_t = (z < np.nan_to_num(announced)).astype(np.int64)
            stop, bad_b = _abort(prover_b, r, rng["B"], np.nan_to_num(announced), a_t, forfeits)
            bad_b |= np.isnan(z_b)
        bits[active, t] = a_t
        bad_b &= ~bad_a  # a party that misbehaves loses; A's fault is examined first
        verdicts[active[bad_a]] = 0
        verdicts[active[bad_b]] = 1
        checked = stop & ~bad_a & ~bad_b
        if checked.any():
            rows = active[checked]
            v_est = draw("V", params.v_samples, rows, values[checked], p[checked])
            gap = np.abs(v_est - announced[checked])
            close = gap < params.v_threshold
            strict = params.exact_step_tolerance()
            if strict is not None:  # known-probability rows must match exactly
                known = (not query) | machine.internal_batch(t, values[checked])
                close = np.where(known, gap <= strict, close)
            verdicts[rows] = close.astype(np.int64)
            aborts[rows] = t
        done = bad_a | bad_b | checked
        if record is not None and active.size and active[0] == 0:
            record.append(
                {
                    "round": t,
                    "announced": float(announced[0]),
                    "bit": int(a_t[0]),
                    "abort": bool(stop[0]),
                    "true_p": float(p[0]),
                }
            )
        active = active[~done]
    verdicts[active] = (bits[active, steps - 1] == claim).astype(np.int64)
    return BatchResult(
        verdicts,
        aborts,
        counts,
        ledger.counts(),
        tuple(forfeits),
        params,
        t + 1,
        time.perf_counter() - start,
    )


def _call_vector(
    party: str,
    fn: Callable[..., object] | None,
    args: tuple[Any, ...],
    n: int,
    forfeits: list[str],
    check_unit: bool,
    unit_open: bool = False,
) -> FloatArray:
    """A strategy's vector output; NaN marks debates where it was missing or malformed."""
    try:
        if fn is None:
            raise TypeError("the strategy lacks this move")
        out = _probabilities(fn(*args), n)
    except Exception as exc:  # a strategy's bug loses its debates, never crashes the run
        forfeits.append(f"{party} raised {type(exc).__name__}: {exc}")
        return np.full(n, np.nan)
    if out is None:
        forfeits.append(f"{party} sent a malformed vector (expected {n} numbers)")
        return np.full(n, np.nan)
    hi_ok = out < 1 if unit_open else out <= 1
    bad = ~((out >= 0) & hi_ok) if check_unit else np.zeros(n, dtype=bool)
    if bad.any():
        forfeits.append(f"{party} sent {int(bad.sum())} value(s) outside [0, 1]")
        out = np.where(bad, np.nan, out)
    return out


def _abort(
    prover_b: Player,
    r: Round,
    rng: np.random.Generator,
    announced: FloatArray,
    bits: IntArray | None,
    forfeits: list[str],
) -> tuple[BoolArray, BoolArray]:
    """B's abort decisions, and where B failed to decide (B then loses those debates)."""
    try:
        out = np.asarray(getattr(prover_b, "abort")(r, rng, announced, bits))
        if out.shape != (r.n,) or out.dtype != np.bool_:
            raise TypeError(f"expected {r.n} booleans, got {out.dtype} of shape {out.shape}")
        return out, np.zeros(r.n, dtype=bool)
    except Exception as exc:
        forfeits.append(f"B's abort decision failed ({type(exc).__name__}: {exc})")
        return np.zeros(r.n, dtype=bool), np.ones(r.n, dtype=bool)


def play_stochastic(
    machine: StochasticMachine,
    params: StochasticParams,
    claim: int,
    prover_a: Player,
    prover_b: Player,
    *,
    seed: int | None = 0,
    sampling: str = "binomial",
    oracle: Oracle | None = None,
    budget: int | None = None,
) -> Outcome:
    """Play one debate and return its full record (messages, samples per party).

    Costs: ``rounds`` played; V reads A's relevant bits and announcement on an abort (else
    only the last bit); ``verifier_queries`` and ``prover_queries`` are the oracle samples
    each party called for (with known probabilities they are drawn as binomials; with
    ``sampling="oracle"`` each is a real call).
    """
    rounds: list[dict[str, Any]] = []
    res = play_stochastic_batch(
        machine,
        params,
        claim,
        prover_a,
        prover_b,
        debates=1,
        seed=seed,
        sampling=sampling,
        oracle=oracle,
        budget=budget,
        record=rounds,
    )
    d = Debate(NAME, prover_a, prover_b, oracle, seed)
    for item in rounds:
        d.say(item["round"], "A", "announce", item["announced"])
        d.say(item["round"], "coin", "bit", item["bit"])
        d.say(item["round"], "B", "abort" if item["abort"] else "continue", item["true_p"])
    abort = int(res.abort_rounds[0])
    verdict = int(res.verdicts[0])
    if res.forfeits:
        reason = "; ".join(res.forfeits)
    elif abort >= 0:
        reason = (
            f"B aborted in round {abort}; V's own estimate "
            f"{'agrees' if verdict else 'disagrees'} with A's announcement"
        )
    else:
        reason = f"no abort: the last bit is {'the claim' if verdict else 'not the claim'}"
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
    return replace(out, costs=costs)


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
    )
)
