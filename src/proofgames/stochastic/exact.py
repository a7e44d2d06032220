"""Exact acceptance probabilities by dynamic programming over reachable states.

A :class:`StochasticMachine` step reads a few earlier entries, so at any time only the
entries that some later step still reads (and the output) are *live*.  Compiling the
machine walks its steps once, keeping every distinct vector of live values that can occur
under *some* oracle (both answers of every query step are kept, whatever the
probabilities), and records for each step how states map to their successors.  The result,
a :class:`TransitionGraph`, evaluates ``P[M = 1]`` for a whole batch of probability vectors
in one vectorized pass, and also the quantities the Lipschitz bounds need:

* :meth:`TransitionGraph.difference` -- ``(P_q[M=1] - P_p[M=1]) / eps`` for ``q = p + eps*d``,
  computed by telescoping over query steps (steps before ``s`` use ``q``, steps after use
  ``p``), so tiny perturbations lose no precision to cancellation;
* :meth:`TransitionGraph.influence` -- for each step, the largest change of ``P[M=1 | state]``
  (under ``p``) that flipping that step's answer can cause.

Exponential blow-up is refused: more than ``max_states`` live states raises
:class:`~proofgames.ProtocolError`.

Example:
    >>> import numpy as np
    >>> from proofgames.stochastic import StochasticBuilder
    >>> from proofgames.stochastic.exact import acceptance_probability
    >>> b = StochasticBuilder([0.5])
    >>> votes = [b.query(0) for _ in range(3)]
    >>> _ = b.gate(lambda v: (v.sum(axis=1) >= 2).astype(np.int64), relevant=votes)
    >>> acceptance_probability(b.build("majority-of-3"))
    0.5
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import MachineFormatError, OracleError, ProtocolError
from .model import StochasticMachine

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

MAX_STATES = 1 << 16
"""Default limit on the number of distinct live-value states at any step."""

_CELLS = 1 << 23  # states x batch columns evaluated at once


@dataclass(frozen=True)
class _Layer:
    """How one step maps the states before it to the states after it."""

    step: int
    ids: IntArray | None  # query id asked in each state; None for a deterministic step
    child0: IntArray  # successor when y_t = 0 (deterministic: the only successor)
    child1: IntArray | None  # successor when y_t = 1 (query steps)
    n_after: int
    order: IntArray  # sorts concat(child0, child1) ...
    starts: IntArray  # ... into runs per successor (for np.add.reduceat)
    identity: bool  # deterministic step that merges nothing

    def scatter(self, contrib: FloatArray) -> FloatArray:
        """Sum the contributions (rows: child0 block, then child1 block) per successor."""
        if self.identity:
            return contrib
        return np.add.reduceat(contrib[self.order], self.starts, axis=0)


class TransitionGraph:
    """The reachable live-value states of a machine, step by step (see module docstring).

    Args:
        machine: the machine (binary entries).
        max_states: refuse machines with more live states than this at some step.
    """

    def __init__(self, machine: StochasticMachine, max_states: int = MAX_STATES) -> None:
        self.machine = machine
        steps = machine.length
        last_read = np.full(steps, -1, dtype=np.int64)
        for t in range(steps):
            for j in machine.relevant(t):
                last_read[j] = t
        live: list[int] = []
        vals = np.zeros((1, 0), dtype=np.int8)
        layers: list[_Layer] = []
        uses = np.zeros(machine.probabilities.size, dtype=np.int64)
        self.work = 0
        self.max_width = 1
        for t in range(steps):
            col = {j: i for i, j in enumerate(live)}
            v = vals[:, [col[j] for j in machine.relevant(t)]].astype(np.int64)
            n = vals.shape[0]
            ids: IntArray | None = None
            if machine.is_query(t):
                ids = machine.query_ids(t, v)
                uses[np.unique(ids)] += 1
                bits = np.repeat(np.array([0, 1], dtype=np.int8), n)
                new = np.concatenate([np.tile(vals, (2, 1)), bits[:, None]], axis=1)
            else:
                y = machine.probability_batch(t, v)
                if not np.isin(y, (0.0, 1.0)).all():
                    raise MachineFormatError(f"{machine.name}: step {t} computed a non-bit value")
                new = np.concatenate([vals, y.astype(np.int8)[:, None]], axis=1)
            live = [*live, t]
            keep = [i for i, j in enumerate(live) if last_read[j] > t or j == steps - 1]
            if ids is None and len(keep) == len(live):
                vals = new
                ident = np.arange(n, dtype=np.int64)
                layers.append(_Layer(t, None, ident, None, n, ident, ident, True))
                self.work += n
                continue
            live = [live[i] for i in keep]
            vals, inverse = _unique_rows(new[:, keep])
            if vals.shape[0] > max_states:
                raise ProtocolError(
                    f"{machine.name}: {vals.shape[0]} reachable states after step {t} exceed "
                    f"max_states = {max_states}; the machine is too large for exact computation"
                )
            order = np.argsort(inverse, kind="stable")
            starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
            child0, child1 = (inverse, None) if ids is None else (inverse[:n], inverse[n:])
            layers.append(_Layer(t, ids, child0, child1, vals.shape[0], order, starts, False))
            self.work += new.shape[0]
            self.max_width = max(self.max_width, new.shape[0])
        self.layers = tuple(layers)
        self.output = vals[:, 0].astype(np.float64)
        self.uses = uses
        """Number of query steps that may ask each query id (an upper bound on its degree)."""
        self.oracle_ids = np.flatnonzero((uses > 0) & ~machine.internal)
        """The oracle (non-internal) query ids that some reachable state asks."""

    # ------------------------------------------------------------------ evaluation
    def _batch(self, probabilities: ArrayLike | None) -> FloatArray:
        m = self.machine
        if probabilities is None:
            return m.probabilities.reshape(1, -1).astype(np.float64)
        q = np.array(probabilities, dtype=np.float64, ndmin=2)
        if q.ndim != 2 or q.shape[1] != m.probabilities.size:
            raise OracleError(
                f"{m.name}: expected probability vectors of length {m.probabilities.size}, "
                f"got shape {np.shape(probabilities)}"
            )
        if np.isnan(q).any() or q.min(initial=0.0) < 0.0 or q.max(initial=0.0) > 1.0:
            raise OracleError(f"{m.name}: oracle probabilities must lie in [0, 1]")
        return q

    def _chunks(self, size: int) -> list[slice]:
        step = max(1, _CELLS // self.max_width)
        return [slice(i, min(size, i + step)) for i in range(0, size, step)]

    def evaluate(self, probabilities: ArrayLike | None = None) -> FloatArray:
        """``P[M = 1]`` for each row of a ``(B, m)`` batch (default: the machine's own)."""
        q = self._batch(probabilities)
        out = np.empty(q.shape[0])
        for part in self._chunks(q.shape[0]):
            qs = q[part]
            prob = np.ones((1, qs.shape[0]))
            for layer in self.layers:
                if layer.ids is not None:
                    p1 = qs[:, layer.ids].T
                    prob = np.concatenate([prob * (1.0 - p1), prob * p1])
                prob = layer.scatter(prob)
            out[part] = self.output @ prob
        return out

    def difference(self, probabilities: ArrayLike, direction: ArrayLike) -> FloatArray:
        """``sum_s d[id(s)] * dP[M=1]/dp_s``, mixed: steps before ``s`` at ``q``, after at ``p``.

        For ``q = p + eps * d`` this equals ``(P_q[M=1] - P_p[M=1]) / eps`` exactly (telescoping
        over query steps); for ``q = p`` it is the directional derivative of ``P[M=1]`` along
        ``d``; for a single query id and ``d = 1`` it is the secant slope between ``p`` and
        ``q``.  ``p`` is the machine's own probability vector.
        """
        q = self._batch(probabilities)
        d = np.array(direction, dtype=np.float64, ndmin=2)
        if d.shape != q.shape:
            raise OracleError(f"direction shape {d.shape} differs from probabilities {q.shape}")
        d = np.where(self.machine.internal, 0.0, d)
        base = self.machine.probabilities
        out = np.empty(q.shape[0])
        for part in self._chunks(q.shape[0]):
            qs, ds = q[part], d[part]
            prob = np.ones((1, qs.shape[0]))
            grad = np.zeros_like(prob)
            for layer in self.layers:
                if layer.ids is not None:
                    p1, w, b1 = qs[:, layer.ids].T, ds[:, layer.ids].T, base[layer.ids][:, None]
                    grad = np.concatenate([grad * (1.0 - b1) - prob * w, grad * b1 + prob * w])
                    prob = np.concatenate([prob * (1.0 - p1), prob * p1])
                    grad = layer.scatter(grad)
                elif not layer.identity:
                    grad = layer.scatter(grad)
                prob = layer.scatter(prob)
            out[part] = self.output @ grad
        return out

    def influence(self) -> FloatArray:
        """Each step's largest influence on the output, under the machine's own oracle.

        Step ``t``'s entry is ``max |P[M=1 | state, y_t=1] - P[M=1 | state, y_t=0]|`` over the
        reachable states in which it asks the oracle (0 for deterministic steps and coins).
        """
        m = self.machine
        value = self.output.copy()
        result = np.zeros(m.length)
        for layer in reversed(self.layers):
            if layer.ids is None:
                value = value[layer.child0]
                continue
            assert layer.child1 is not None
            v0, v1 = value[layer.child0], value[layer.child1]
            oracle = ~m.internal[layer.ids]
            if oracle.any():
                result[layer.step] = float(np.abs(v1 - v0)[oracle].max())
            b1 = m.probabilities[layer.ids]
            value = (1.0 - b1) * v0 + b1 * v1
        return result


def _unique_rows(rows: NDArray[np.int8]) -> tuple[NDArray[np.int8], IntArray]:
    """Distinct rows (sorted) and, for every row, the index of its distinct row."""
    if rows.shape[1] <= 62:
        keys = rows.astype(np.int64) @ (np.int64(1) << np.arange(rows.shape[1], dtype=np.int64))
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return rows[first], inverse.reshape(-1).astype(np.int64)
    # Wider rows: 64 columns per uint64 word, the first column most significant, sorted by
    # word (the first word first): the order of np.unique(rows, axis=0) on 0/1 rows, which
    # is ~10x slower (it sorts structured rows field by field).
    n, width = rows.shape
    words = -(-width // 64)
    padded = np.zeros((n, words * 64), dtype=np.uint64)
    padded[:, :width] = rows
    weights = np.left_shift(np.uint64(1), np.arange(63, -1, -1, dtype=np.uint64))
    keys = padded.reshape(n, words, 64) @ weights
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    new = np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)]
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return rows[order[new]], inverse


_CACHE: weakref.WeakKeyDictionary[StochasticMachine, TransitionGraph] = weakref.WeakKeyDictionary()


def transition_graph(machine: StochasticMachine, max_states: int = MAX_STATES) -> TransitionGraph:
    """The machine's :class:`TransitionGraph` (cached per machine object)."""
    graph = _CACHE.get(machine)
    if graph is None:
        graph = TransitionGraph(machine, max_states)
        _CACHE[machine] = graph
    return graph


def acceptance_probability(
    machine: StochasticMachine,
    probabilities: ArrayLike | None = None,
    max_states: int = MAX_STATES,
) -> float:
    """Exact ``P[M = 1]`` under the machine's oracle, or under ``probabilities`` (length m).

    Raises:
        ProtocolError: if the machine has more than ``max_states`` reachable live states.
        OracleError: if ``probabilities`` is malformed or outside ``[0, 1]``.
    """
    if probabilities is not None and np.ndim(probabilities) != 1:
        raise OracleError("probabilities must be one vector; use acceptance_probabilities")
    return float(transition_graph(machine, max_states).evaluate(probabilities)[0])


def acceptance_probabilities(
    machine: StochasticMachine, probabilities: ArrayLike, max_states: int = MAX_STATES
) -> FloatArray:
    """Exact ``P[M = 1]`` for each row of a ``(B, m)`` batch of probability vectors."""
    return transition_graph(machine, max_states).evaluate(probabilities)
