"""The trust boundary of debates run in lockstep: per-party rounds, samplers and forfeits.

Many stochastic debates run as one vector computation.  Each party sees a :class:`Round`
built for it alone: read-only copies of the round's data, its own copy of the machine
and of the parameters, its own transcript of the bits so far, and its own
:class:`Sampler` (its own random stream, its own sample counts, its own oracle view).
Nothing reachable from a round leads to another party's generator, counts or state, and
no party can charge another's samples.  A party's vector move is copied by
:mod:`proofgames.wire` before use; a call that raises or sends a malformed vector loses
the debates it was asked about (:class:`ForfeitLog`).
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import interrupts
from .._oracle import OracleView
from .._transcript import IntArray
from ..errors import ProtocolError
from ..stochastic.model import FloatArray, StochasticMachine
from ..stochastic.params import StochasticParams
from ..wire import Malformed, as_int
from ._common import describe_exception, reported_queries
from .roles import PartySide

PER_SAMPLE_LIMIT = 50_000_000  # samples x debates drawn one by one in one call
COUNTER_LIMIT = 2**62  # the most samples one party's per-debate counter may reach


class Sampler:
    """One party's access to samples of the current step: its stream, its counts, its oracle.

    Args:
        machine: this party's copy of the machine.
        sampling: ``"binomial"``, ``"per-sample"`` or ``"oracle"``.
        rng: this party's own sampling stream.
        counts: this party's per-debate sample counts (added to in place).
        oracle: this party's counted oracle view (``"oracle"`` mode).
        budget: the most oracle calls this party may make (``"oracle"`` mode).
    """

    def __init__(
        self,
        machine: StochasticMachine,
        sampling: str,
        rng: np.random.Generator,
        counts: IntArray,
        oracle: OracleView | None = None,
        budget: int | None = None,
    ) -> None:
        self._machine, self._sampling, self._rng = machine, sampling, rng
        self._counts, self._oracle, self._budget = counts, oracle, budget
        self._round: tuple[int, IntArray, IntArray, FloatArray] | None = None

    def bind(self, t: int, rows: IntArray, values: IntArray, p: FloatArray) -> None:
        """Point the sampler at round ``t`` (arrays the sampler's owner alone holds)."""
        self._round = (t, rows, values, p)

    def __call__(self, samples: object, subset: NDArray[np.bool_] | None = None) -> FloatArray:
        """Estimates of p for the running debates from ``samples`` samples each.

        Deterministic steps and internal coins are known exactly and cost nothing.
        """
        k = as_int(samples, "samples")
        if k <= 0:
            raise ValueError(f"samples must be positive, got {k}")
        if self._round is None:
            raise ProtocolError("no round to sample")
        t, rows, vals, p = self._round
        if subset is not None:
            rows, vals, p = rows[subset], vals[subset], p[subset]
        m = self._machine
        if not m.is_query(t):
            return p.copy()
        known = m.internal_batch(t, vals)
        out = p.copy()
        todo = ~known
        if todo.any():
            if k > COUNTER_LIMIT or int(self._counts[rows[todo]].max()) > COUNTER_LIMIT - k:
                raise ValueError(
                    f"{k:,} more samples would take a debate's count past {COUNTER_LIMIT:.3g}, "
                    "the most the simulator counts exactly"
                )
            np.add.at(self._counts, rows[todo], k)
            out[todo] = self._draw(t, vals[todo], p[todo], k)
        return out

    def _draw(self, t: int, vals: IntArray, p: FloatArray, k: int) -> FloatArray:
        if self._sampling == "binomial":
            return np.asarray(self._rng.binomial(k, p) / k, dtype=np.float64)
        if self._sampling == "per-sample":
            if k * p.size > PER_SAMPLE_LIMIT:
                raise ValueError(f"per-sample drawing of {k} x {p.size} samples is too big")
            draws = self._rng.random((p.size, k)) < p[:, None]
            return np.asarray(draws.mean(axis=1), dtype=np.float64)
        view = self._oracle
        assert view is not None
        if self._budget is not None and view.queries + k * p.size > self._budget:
            raise ValueError(
                f"the oracle budget of {self._budget} calls would be exceeded "
                f"({view.queries} made, {k * p.size} more needed)"
            )
        total = np.zeros(p.size)
        for _ in range(k):
            total += self._machine.step_batch(t, vals, view, self._rng)
        return total / k


@dataclass(frozen=True)
class Round:
    """What one party sees in round ``t`` (for the debates still running); all its own.

    Attributes:
        t: the round (= step of M).
        rows: indices of the running debates (read-only).
        values: A's relevant bits ``a_I(t)`` for each, shape ``(n, |I(t)|)`` (read-only).
        is_query: whether step t queries the oracle.
        p: the true conditional probability P[y_t = 1 | a_I(t)] (read-only; what samples
            are drawn from, known to a computationally unbounded prover).
        params: this party's copy of the protocol's parameters.
        claim: the output A asserts.
        machine: this party's copy of the machine.
    """

    t: int
    rows: IntArray
    values: IntArray
    is_query: bool
    p: FloatArray
    params: StochasticParams
    claim: int
    machine: StochasticMachine
    _sampler: Sampler = field(repr=False)
    _bits: NDArray[np.int8] = field(repr=False)

    @property
    def prefix(self) -> IntArray:
        """A's bits so far for the running debates, shape ``(n, t)`` (a copy)."""
        return np.asarray(self._bits[: self.t, self.rows].T, dtype=np.int64)

    @property
    def n(self) -> int:
        """Number of running debates."""
        return int(self.rows.size)

    def estimate(self, samples: int) -> FloatArray:
        """The party's estimate of p from ``samples`` samples per debate (its own cost).

        Exact (and free) for deterministic steps and internal coins.
        """
        return self._sampler(samples)


@dataclass(frozen=True)
class ForfeitCount:
    """How many debates a party lost by misbehaving, for one reason."""

    party: str
    reason: str
    debates: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"party": self.party, "reason": self.reason, "debates": self.debates}


class ForfeitLog:
    """Per-debate forfeits of a lockstep run: who lost which debates, and why."""

    def __init__(self, n: int) -> None:
        self.by = np.full(n, "", dtype="<U1")
        self.lost = np.zeros(n, dtype=np.bool_)  # by != "": cheaper to read every round
        self._counts: Counter[tuple[str, str]] = Counter()

    def record(self, party: str, reason: str, rows: IntArray) -> None:
        """``party`` loses ``rows`` (debates already lost are not counted twice)."""
        if not rows.size:
            return
        rows = rows[~self.lost[rows]]
        if rows.size:
            self.by[rows] = party
            self.lost[rows] = True
            self._counts[(party, reason)] += int(rows.size)

    def counts(self) -> tuple[ForfeitCount, ...]:
        """Counts by party and reason, most frequent first."""
        return tuple(ForfeitCount(p, r, n) for (p, r), n in self._counts.most_common())


class LockstepParty:
    """V's handle on one party of a lockstep run; a failed call loses the debates it covers.

    Args:
        name: ``"A"`` or ``"B"``.
        player: the party's object.
        machine: the party's copy of the machine (built once).
        params: the party's copy of the parameters.
        sampler: the party's sampler.
        timeout: seconds allowed per call (checked when it returns).
    """

    def __init__(
        self,
        name: str,
        player: object,
        machine: StochasticMachine,
        params: StochasticParams,
        sampler: Sampler,
        timeout: float | None = None,
    ) -> None:
        self.name, self._player, self.machine = name, player, machine
        self.params, self.sampler, self._timeout = params, sampler, timeout
        self._bits = np.zeros((machine.length, 0), dtype=np.int8)  # time-major

    @property
    def reported_queries(self) -> int:
        """Samples a party in its own process reports (V cannot count them itself)."""
        return reported_queries(self._player)

    def start(self, debates: int) -> None:
        """A fresh transcript of A's bits (this party's own copy)."""
        self._bits = np.zeros((self.machine.length, debates), dtype=np.int8)

    def reveal(self, rows: IntArray, t: int, bits: IntArray) -> None:
        """Tell the party round ``t``'s bits (written into its own transcript)."""
        n = self._bits.shape[1]
        if rows.size == n and n and rows[0] == 0 and rows[-1] == n - 1:
            self._bits[t] = bits  # every debate still runs (rows: sorted, distinct)
        else:
            self._bits[t, rows] = bits

    def round(self, t: int, rows: IntArray, values: IntArray, p: FloatArray, claim: int) -> Round:
        """The party's view of round ``t`` (fresh read-only copies, shared with its sampler)."""
        r, v, q = (_frozen(x) for x in (rows, values, p))
        self.sampler.bind(t, r, v, q)
        return Round(
            t, r, v, self.machine.is_query(t), q, self.params, claim, self.machine,
            self.sampler, self._bits,
        )  # fmt: skip

    def call(
        self,
        log: ForfeitLog,
        rows: IntArray,
        what: str,
        method: str,
        args: tuple[Any, ...],
        parse: Callable[[Any], Any],
    ) -> Any:
        """The parsed move, or ``None`` after recording the forfeit of every debate in ``rows``."""
        start = time.perf_counter()
        with interrupts.guard():
            try:
                raw = getattr(self._player, method)(*args)
            except BaseException as exc:
                if interrupts.by_user(exc):
                    raise
                log.record(self.name, f"{what} raised {describe_exception(exc)}", rows)
                return None
            interrupts.check()
        elapsed = time.perf_counter() - start
        if self._timeout is not None and elapsed > self._timeout:
            log.record(self.name, f"{what} timed out ({elapsed:.3g}s)", rows)
            return None
        try:
            return parse(raw)
        except Malformed as exc:
            log.record(self.name, f"sent a malformed {what}: {exc.reason}", rows)
            return None


def own_copy(x: Any) -> Any:
    """A party's private copy of an instance or parameter object."""
    return copy.deepcopy(x)


def _frozen(x: NDArray[Any]) -> NDArray[Any]:
    out = np.array(x, copy=True)
    out.setflags(write=False)
    return out


def round_dict(r: Round) -> dict[str, Any]:
    """A round as plain data (the party's view; no generator, no sampler)."""
    return {
        "t": r.t, "n": r.n, "rows": r.rows, "values": r.values, "is_query": r.is_query,
        "p": r.p, "prefix": r.prefix, "claim": r.claim, "params": r.params.to_dict(),
    }  # fmt: skip


class _PartyLockstep:
    """A party process's own lockstep state: its party, its counts, the bits it has seen."""

    def __init__(self, side: PartySide, d: dict[str, Any], rows: IntArray) -> None:
        size = int(rows.max()) + 1 if rows.size else 1
        side.samples = np.zeros(size, dtype=np.int64)
        sampler = Sampler(side.target, side.sampling, side.sample_rng, side.samples, side.view)
        params = StochasticParams(**d["params"])
        self.party = LockstepParty(side.role, side.player, side.target, params, sampler)
        self.party.start(size)
        self.size = size
        self.revealed = 0


def party_round(d: Any, side: PartySide) -> Round:
    """The party's :class:`Round` from its plain form, sampled by the party's own process.

    The first round sets up the process's own lockstep party (machine, parameters,
    sampler, transcript); every round then reveals the bits of the prefix not yet seen.
    """
    if type(d) is not dict:
        raise ProtocolError("a round must be an object")
    t = as_int(d.get("t"), "t")
    rows = np.asarray(d.get("rows"), dtype=np.int64)
    own = side.state.get("lockstep")
    if own is None:
        own = side.state["lockstep"] = _PartyLockstep(side, d, rows)
    if rows.size and int(rows.max()) >= own.size:
        raise ProtocolError("a round names a debate that was not running at the start")
    prefix = np.asarray(d.get("prefix"), dtype=np.int64).reshape(rows.size, t)
    for done in range(own.revealed, t):
        own.party.reveal(rows, done, prefix[:, done])
    own.revealed = max(own.revealed, t)
    values = np.asarray(d.get("values"), dtype=np.int64)
    p = np.asarray(d.get("p"), dtype=np.float64)
    return own.party.round(t, rows, values, p, side.ctx.claim)
