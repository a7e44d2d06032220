"""Stochastic oracle machines whose oracle probabilities the simulator knows.

A :class:`StochasticMachine` is a transcript machine (relevant sets, deterministic steps)
whose query steps ask one of finitely many *queries*, numbered ``0 .. m-1``; the oracle
answers query ``i`` with 1 independently with probability ``probabilities[i]``.  Because the
probabilities are known, a simulator may replace R oracle calls by one Binomial(R, p) draw
(exactly the same distribution); when they are not (a human or model oracle), each sample
is a real, counted call to an :class:`~proofgames.Oracle` on ``queries[i]``.

Some query ids may be marked ``internal``: they are the machine's own coins (a randomized
algorithm's random bits), with known probabilities that are not the oracle's.  Internal
coins are always drawn from the random generator -- never sent to a real oracle, never
counted as oracle calls -- and a Lipschitz constant does not perturb them
(:mod:`proofgames.stochastic.lipschitz`).  :meth:`StochasticBuilder.coin` adds one.

Every step evaluates on a batch of transcripts at once: :meth:`probability_batch` gives
``P[y_t = 1 | y_I(t)]`` for each transcript -- 0 or 1 for a deterministic step.

Example:
    >>> import numpy as np
    >>> from proofgames.stochastic import StochasticBuilder
    >>> b = StochasticBuilder(probabilities=[0.7])
    >>> votes = [b.query(0) for _ in range(3)]
    >>> out = b.gate(lambda v: (v.sum(axis=1) >= 2).astype(np.int64), relevant=votes)
    >>> m = b.build("majority-of-3")
    >>> m.probability_batch(3, np.array([[1, 1, 0], [1, 0, 0]])).tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._oracle import OracleView
from .._transcript import ExplicitTranscriptMachine, IntArray, StepFn, TranscriptMachine
from ..errors import MachineFormatError, OracleError

FloatArray = NDArray[np.float64]
QueryIdFn = Callable[[IntArray], IntArray]


@dataclass(frozen=True, slots=True)
class StochasticStep:
    """One step: deterministic (``fn``) or a query (``query`` maps values to query ids).

    Attributes:
        relevant: earlier positions read.
        fn: vectorized deterministic function ``(n, k) -> (n,)`` of the relevant entries.
        query: vectorized ``(n, k) -> (n,)`` query ids (``None`` for deterministic steps).
        label: description.
    """

    relevant: tuple[int, ...]
    fn: StepFn | None = None
    query: QueryIdFn | None = None
    label: str = ""


class StochasticMachine(TranscriptMachine):
    """A binary transcript machine with a known stochastic oracle (see module docstring).

    Args:
        steps: the steps, in order.
        probabilities: ``P[O(query i) = 1]`` for each query id.
        name: name used in records.
        queries: the text of each query, sent to a real oracle (default: the id's bytes).
        lipschitz: a known Lipschitz constant K, if any (see :mod:`.lipschitz`).
        p_accept: the exact ``P[M = 1]``, if known in closed form.
        internal: per query id, whether it is an internal coin (default: none are).
        lipschitz_exact: whether ``lipschitz`` is the exact (least) constant; ``False``
            means it is a sound upper bound, possibly loose.
    """

    alphabet = 2

    def __init__(
        self,
        steps: Sequence[StochasticStep],
        probabilities: Sequence[float],
        name: str,
        queries: Sequence[bytes] | None = None,
        lipschitz: float | None = None,
        p_accept: float | None = None,
        internal: Sequence[bool] | NDArray[np.bool_] | None = None,
        lipschitz_exact: bool = False,
    ) -> None:
        if not steps:
            raise MachineFormatError(f"{name}: a machine needs at least one step")
        p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
        if p.size and (np.isnan(p).any() or p.min() < 0.0 or p.max() > 1.0):
            raise OracleError(f"{name}: oracle probabilities must lie in [0, 1], got {p.tolist()}")
        self._steps = tuple(steps)
        self.length = len(self._steps)
        self.name = name
        self.probabilities = p
        self.probabilities.setflags(write=False)
        self.queries = (
            tuple(queries) if queries is not None else tuple(str(i).encode() for i in range(p.size))
        )
        if len(self.queries) != p.size:
            raise MachineFormatError(
                f"{name}: {len(self.queries)} query texts for {p.size} queries"
            )
        self.lipschitz = lipschitz
        self.lipschitz_exact = lipschitz_exact
        self.p_accept = p_accept
        coins = np.zeros(p.size, dtype=bool) if internal is None else np.asarray(internal, bool)
        if coins.shape != (p.size,):
            raise MachineFormatError(
                f"{name}: {coins.size} internal-coin flags for {p.size} queries"
            )
        self.internal = coins.reshape(-1)
        self.internal.setflags(write=False)
        for t, s in enumerate(self._steps):
            if (s.fn is None) == (s.query is None):
                raise MachineFormatError(f"{name}: step {t} must have exactly one of fn or query")
        self.validate()

    def relevant(self, t: int) -> tuple[int, ...]:
        """Step ``t``'s relevant set."""
        return self._steps[t].relevant

    def is_query(self, t: int) -> bool:
        """Whether step ``t`` queries the oracle."""
        return self._steps[t].query is not None

    def label(self, t: int) -> str:
        """Step ``t``'s description."""
        return self._steps[t].label

    def query_ids(self, t: int, values: IntArray) -> IntArray:
        """The query ids a query step asks, for a batch of relevant-entry vectors."""
        fn = self._steps[t].query
        if fn is None:
            raise MachineFormatError(f"{self.name}: step {t} is not a query step")
        ids = np.asarray(fn(np.asarray(values, dtype=np.int64)), dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.probabilities.size):
            raise MachineFormatError(f"{self.name}: step {t} asked an unknown query id")
        return ids

    def internal_batch(self, t: int, values: IntArray) -> NDArray[np.bool_]:
        """Whether step ``t`` tosses an internal coin (not the oracle), per row of ``values``."""
        values = np.asarray(values, dtype=np.int64)
        if self._steps[t].query is None:
            return np.zeros(values.shape[0], dtype=bool)
        return np.asarray(self.internal[self.query_ids(t, values)], dtype=bool)

    def probability_batch(self, t: int, values: IntArray) -> FloatArray:
        """``P[y_t = 1 | y_I(t) = values]`` for each row of ``values``."""
        s = self._steps[t]
        values = np.asarray(values, dtype=np.int64)
        if s.fn is not None:
            return np.asarray(s.fn(values), dtype=np.float64).reshape(values.shape[0])
        return self.probabilities[self.query_ids(t, values)]

    def step_batch(
        self,
        t: int,
        values: IntArray,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> IntArray:
        """Sample ``y_t``: through ``oracle`` (real, counted calls) if given, else exactly."""
        values = np.asarray(values, dtype=np.int64)
        s = self._steps[t]
        if s.fn is not None:
            return np.asarray(s.fn(values), dtype=np.int64).reshape(values.shape[0])
        ids = self.query_ids(t, values)
        coin = self.internal[ids]
        if coin.any():  # internal coins: drawn here, never asked of nor counted as the oracle
            if rng is None:
                raise OracleError(f"{self.name}: step {t} tosses a coin and needs a generator")
            out = np.empty(ids.size, dtype=np.int64)
            out[coin] = rng.random(int(coin.sum())) < self.probabilities[ids[coin]]
            if not coin.all():
                rest = ~coin
                out[rest] = self.step_batch(t, values[rest], oracle, rng)
            return out
        if oracle is not None and oracle.ledger.oracle is not None:
            return oracle.ask_batch([self.queries[i] for i in ids.tolist()], rng)
        if rng is None:
            raise OracleError(f"{self.name}: sampling step {t} needs a random generator")
        if oracle is not None:  # count the samples even when drawn from known probabilities
            oracle.ledger._counts[oracle.party] += int(ids.size)
        return (rng.random(ids.size) < self.probabilities[ids]).astype(np.int64)

    def with_probabilities(self, probabilities: Sequence[float]) -> StochasticMachine:
        """The same machine with another oracle (K and P[M=1] are then unknown)."""
        return StochasticMachine(
            self._steps, probabilities, self.name, self.queries, internal=self.internal
        )


class StochasticBuilder:
    """Builds a :class:`StochasticMachine` step by step.

    Args:
        probabilities: ``P[O(query i) = 1]`` for each query id.
        queries: optional query texts for real oracles.
    """

    def __init__(self, probabilities: Sequence[float], queries: Sequence[bytes] | None = None):
        self.probabilities = list(probabilities)
        self.queries = None if queries is None else list(queries)
        self.internal = [False] * len(self.probabilities)
        self._steps: list[StochasticStep] = []

    def add_query(
        self, probability: float, text: bytes | None = None, internal: bool = False
    ) -> int:
        """Declare a new query id (an internal coin if ``internal``); return the id."""
        qid = len(self.probabilities)
        self.probabilities.append(probability)
        self.internal.append(internal)
        if self.queries is not None:
            self.queries.append(text if text is not None else str(qid).encode())
        elif text is not None:
            self.queries = [str(i).encode() for i in range(qid)] + [text]
        return qid

    def coin(self, probability: float = 0.5, label: str = "") -> int:
        """Append a step tossing a new internal coin of the given bias; return its position."""
        qid = self.add_query(probability, b"coin:%d" % len(self.probabilities), internal=True)
        return self.query(qid, label=label or "coin")

    def __len__(self) -> int:
        """Number of steps so far."""
        return len(self._steps)

    def gate(self, fn: StepFn, relevant: Sequence[int] = (), label: str = "") -> int:
        """Append a deterministic step; return its position."""
        self._steps.append(StochasticStep(tuple(relevant), fn=fn, label=label))
        return len(self._steps) - 1

    def query(self, query: int | QueryIdFn, relevant: Sequence[int] = (), label: str = "") -> int:
        """Append a query step asking a fixed query id, or ids computed from ``relevant``."""
        if isinstance(query, int):
            qid = query

            def fixed(v: IntArray) -> IntArray:
                return np.full(v.shape[0], qid, dtype=np.int64)

            fn: QueryIdFn = fixed
        else:
            fn = query
        self._steps.append(StochasticStep(tuple(relevant), query=fn, label=label))
        return len(self._steps) - 1

    def build(
        self,
        name: str,
        lipschitz: float | None = None,
        p_accept: float | None = None,
        lipschitz_exact: bool = False,
    ) -> StochasticMachine:
        """Return the machine."""
        return StochasticMachine(
            self._steps,
            self.probabilities,
            name,
            self.queries,
            lipschitz,
            p_accept,
            internal=self.internal,
            lipschitz_exact=lipschitz_exact,
        )


def from_transcript_machine(
    machine: ExplicitTranscriptMachine,
    probabilities: Mapping[bytes, float],
    name: str | None = None,
) -> StochasticMachine:
    """An oracle machine of the deterministic model, its oracle made stochastic.

    Every query the machine can ask must be listed in ``probabilities`` (query bytes to
    P[answer 1]); the machine's input symbols are folded into its steps.

    Raises:
        MachineFormatError: if the machine is not binary or asks an unlisted query.
    """
    if machine.alphabet != 2:
        raise MachineFormatError(
            f"{machine.name}: the stochastic protocol debates binary transcripts; "
            f"this one has alphabet {machine.alphabet}"
        )
    queries = list(probabilities)
    index = {q: i for i, q in enumerate(queries)}
    x = np.frombuffer(machine.inputs, dtype=np.uint8).astype(np.int64)
    steps = []
    for t, st in enumerate(machine.step_specs):
        fixed = x[list(st.inputs)]

        def full(v: IntArray, fixed: IntArray = fixed) -> IntArray:
            return np.concatenate([np.broadcast_to(fixed, (v.shape[0], fixed.size)), v], axis=1)

        if st.fn is not None:

            def det(v: IntArray, fn: StepFn = st.fn, full: Any = full) -> IntArray:
                return fn(full(v))

            steps.append(StochasticStep(st.relevant, fn=det, label=st.label))
            continue
        qf = st.query
        assert qf is not None

        def ids(
            v: IntArray, qf: Callable[[IntArray], bytes] = qf, full: Any = full, t: int = t
        ) -> IntArray:
            out = []
            for row in full(v):
                q = bytes(qf(row))
                if q not in index:
                    raise MachineFormatError(f"{machine.name}: step {t} asked unlisted query {q!r}")
                out.append(index[q])
            return np.asarray(out, dtype=np.int64)

        steps.append(StochasticStep(st.relevant, query=ids, label=st.label))
    return StochasticMachine(
        steps, [probabilities[q] for q in queries], name or machine.name, queries
    )
