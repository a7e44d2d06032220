"""Oracle machines laid out as transcripts with declared relevant sets.

A :class:`TranscriptMachine` writes entries ``y[0] ... y[T-1]`` (0-based; the paper counts
from 1).  Step ``t`` declares its *relevant set* ``I(t)`` -- earlier transcript positions --
and the positions of the input ``x`` it reads, and is either a deterministic function of
those values or an oracle query whose answer becomes ``y[t]``.  The output is ``y[T-1]``.

Steps are evaluated on a *batch* of value vectors at once (numpy arrays of shape
``(n, k)``), so that many transcripts -- thousands of debates run in lockstep, or every
transcript of a small machine -- are processed without a Python loop per transcript.

Example:
    >>> import numpy as np
    >>> from proofgames import TranscriptBuilder, gates
    >>> b = TranscriptBuilder(inputs=bytes([1, 0, 1]))
    >>> a = b.gate(gates.XOR, inputs=[0, 1])
    >>> out = b.gate(gates.XOR, inputs=[2], relevant=[a])
    >>> m = b.build(name="parity3")
    >>> m.run().tolist()
    [1, 0]

"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._oracle import OracleView
from .errors import MachineFormatError, OracleError

IntArray = NDArray[np.int64]
StepFn = Callable[[IntArray], IntArray]
QueryFn = Callable[[IntArray], bytes]


class TranscriptMachine(abc.ABC):
    """An oracle machine as a transcript of ``length`` entries in ``range(alphabet)``.

    Example:
        A transcript ``1, 0, 1, 0``: each step negates the one before it.  A false claim
        about its output loses a cross-examination debate:

        >>> import numpy as np
        >>> from proofgames import TranscriptMachine, make_strategy, play_cross_examination
        >>> class Alternating(TranscriptMachine):
        ...     name, length = "alternating", 4
        ...     def relevant(self, t):
        ...         return (t - 1,) if t else ()
        ...     def is_query(self, t):
        ...         return False
        ...     def step_batch(self, t, values, oracle=None, rng=None):
        ...         return 1 - values[:, 0] if t else np.ones(len(values), dtype=np.int64)
        >>> m = Alternating()
        >>> m.run().tolist(), m.output_position
        ([1, 0, 1, 0], 3)
        >>> out = play_cross_examination(
        ...     m, claim=1, prover_a=make_strategy("cross-examination", "A", "flip-step"),
        ...     prover_b=make_strategy("cross-examination", "B", "honest"), seed=0)
        >>> out.winner, out.reason
        ('B', 'step 1 is wrong: A wrote 1, it should be 0')
    """

    name: str = "transcript-machine"
    length: int
    alphabet: int = 2
    inputs: bytes = b""

    @abc.abstractmethod
    def relevant(self, t: int) -> tuple[int, ...]:
        """Return the earlier transcript positions that step ``t`` reads (unchecked)."""

    def input_positions(self, t: int) -> tuple[int, ...]:
        """Return the positions of the input that step ``t`` reads."""
        return ()

    @abc.abstractmethod
    def is_query(self, t: int) -> bool:
        """Whether step ``t`` is an oracle query."""

    @abc.abstractmethod
    def step_batch(
        self,
        t: int,
        values: IntArray,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> IntArray:
        """Evaluate step ``t`` for a batch of relevant-entry vectors.

        Args:
            t: the step (0-based).
            values: shape ``(n, len(relevant(t)))``: the relevant entries, in the order
                :meth:`relevant` lists them, for ``n`` transcripts.
            oracle: counted oracle access, used by query steps.
            rng: randomness for stochastic oracles.

        Returns:
            Shape ``(n,)``: the value of ``y[t]`` for each transcript.

        """

    # ------------------------------------------------------------------ derived
    @property
    def output_position(self) -> int:
        """Position of the output entry ``y[T-1]``."""
        return self.length - 1

    def checked_relevant(self, t: int) -> tuple[int, ...]:
        """Return ``relevant(t)`` after checking it points only backwards.

        Raises:
            MachineFormatError: if ``t`` is out of range or a position is not in ``[0, t)``.

        """
        if not 0 <= t < self.length:
            raise MachineFormatError(f"{self.name}: step {t} is outside [0, {self.length})")
        rel = self.relevant(t)
        for i in rel:
            if not 0 <= i < t:
                direction = "forward" if i >= t else "outside the transcript"
                raise MachineFormatError(
                    f"{self.name}: step {t}'s relevant set points {direction} to position {i}; "
                    f"relevant positions must lie in [0, {t})"
                )
        return rel

    def step(
        self,
        t: int,
        values: Sequence[int],
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> int:
        """Evaluate step ``t`` on one vector of relevant entries."""
        arr = np.asarray(values, dtype=np.int64).reshape(1, -1)
        return int(self.step_batch(t, arr, oracle, rng)[0])

    def entry_bits(self) -> int:
        """Bits needed to write one entry."""
        return max(1, int(self.alphabet - 1).bit_length())

    def run(
        self, oracle: OracleView | None = None, rng: np.random.Generator | None = None
    ) -> IntArray:
        """Materialize the true transcript (for machines small enough to hold in memory)."""
        y = np.zeros(self.length, dtype=np.int64)
        for t in range(self.length):
            rel = self.checked_relevant(t)
            y[t] = self.step(t, [int(y[i]) for i in rel], oracle, rng)
        return y

    def validate(self) -> None:
        """Check every relevant set (only sensible for machines of modest length)."""
        for t in range(self.length):
            self.checked_relevant(t)


@dataclass(frozen=True)
class Step:
    """One step of an explicit transcript machine.

    Attributes:
        relevant: earlier transcript positions read.
        inputs: input positions read (their values come first in the vector ``fn`` sees).
        fn: vectorized deterministic function ``(n, k) -> (n,)``; ``None`` for a query.
        query: for a query step, maps one value vector to the query bytes.
        label: human-readable description.

    Example:
        >>> import numpy as np
        >>> from proofgames import Step, gates
        >>> either = Step(relevant=(0, 1), fn=gates.OR, label="y[0] OR y[1]")
        >>> either.fn(np.array([[0, 1], [0, 0]])).tolist()
        [1, 0]
        >>> ask = Step(relevant=(0, 1), query=lambda v: bytes(v.tolist()), label="ask about both")
        >>> ask.fn is None, list(ask.query(np.array([1, 0])))
        (True, [1, 0])

    """

    relevant: tuple[int, ...]
    inputs: tuple[int, ...] = ()
    fn: StepFn | None = None
    query: QueryFn | None = None
    label: str = ""


class ExplicitTranscriptMachine(TranscriptMachine):
    """A transcript machine given step by step (see :class:`TranscriptBuilder`).

    Example:
        NAND of the two input symbols, as an AND step and a NOT step:

        >>> from proofgames import ExplicitTranscriptMachine, Step, gates
        >>> m = ExplicitTranscriptMachine(
        ...     [Step(relevant=(), inputs=(0, 1), fn=gates.AND, label="x[0] AND x[1]"),
        ...      Step(relevant=(0,), fn=gates.NOT, label="NOT y[0]")],
        ...     inputs=bytes([1, 1]), name="nand")
        >>> m.run().tolist(), m.relevant(1), m.label(1)
        ([1, 0], (0,), 'NOT y[0]')
        >>> reads_ahead = [Step(relevant=(1,), fn=gates.NOT)]
        >>> ExplicitTranscriptMachine(reads_ahead, name="ahead")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.MachineFormatError: ahead: step 0's relevant set points forward ...
    """

    def __init__(
        self, steps: Sequence[Step], inputs: bytes = b"", alphabet: int = 2, name: str = "explicit"
    ) -> None:
        if not steps:
            raise MachineFormatError(f"{name}: a transcript machine needs at least one step")
        self._steps = tuple(steps)
        self.length = len(self._steps)
        self.inputs = bytes(inputs)
        self.alphabet = alphabet
        self.name = name
        for t, s in enumerate(self._steps):
            if (s.fn is None) == (s.query is None):
                raise MachineFormatError(f"{name}: step {t} must have exactly one of fn or query")
            for i in s.inputs:
                if not 0 <= i < len(self.inputs):
                    raise MachineFormatError(
                        f"{name}: step {t} reads input position {i}; the input has "
                        f"{len(self.inputs)} symbols"
                    )
        self.validate()

    def relevant(self, t: int) -> tuple[int, ...]:
        """Return step ``t``'s relevant set."""
        return self._steps[t].relevant

    def input_positions(self, t: int) -> tuple[int, ...]:
        """Return the input positions step ``t`` reads."""
        return self._steps[t].inputs

    def is_query(self, t: int) -> bool:
        """Whether step ``t`` queries the oracle."""
        return self._steps[t].query is not None

    def label(self, t: int) -> str:
        """Return step ``t``'s label."""
        return self._steps[t].label

    @property
    def step_specs(self) -> tuple[Step, ...]:
        """The steps, in order."""
        return self._steps

    def step_batch(
        self,
        t: int,
        values: IntArray,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> IntArray:
        """Evaluate step ``t`` on a batch of relevant-entry vectors."""
        s = self._steps[t]
        values = np.asarray(values, dtype=np.int64)
        if s.inputs:
            x = np.array([self.inputs[i] for i in s.inputs], dtype=np.int64)
            full = np.concatenate([np.broadcast_to(x, (values.shape[0], x.size)), values], axis=1)
        else:
            full = values
        if s.fn is not None:
            out = np.asarray(s.fn(full), dtype=np.int64).reshape(values.shape[0])
            return out
        if oracle is None:
            raise OracleError(f"{self.name}: step {t} is an oracle query but no oracle was given")
        assert s.query is not None
        return oracle.ask_batch([s.query(row) for row in full], rng)


class TranscriptBuilder:
    """Builds an :class:`ExplicitTranscriptMachine` one step at a time.

    Args:
        inputs: the input ``x`` (symbols).
        alphabet: entries lie in ``range(alphabet)``.

    Example:
        Ask the oracle whether the two input symbols differ, then negate its answer:

        >>> from proofgames import FunctionOracle, OracleLedger, TranscriptBuilder, gates
        >>> b = TranscriptBuilder(inputs=bytes([1, 0]))
        >>> ask = b.query(lambda v: bytes(v.tolist()), inputs=[0, 1], label="differ?")
        >>> same = b.gate(gates.NOT, relevant=[ask], label="same")
        >>> m = b.build(name="same")
        >>> ledger = OracleLedger(FunctionOracle(lambda z: int(z[0] != z[1])))
        >>> m.run(ledger.view("V")).tolist(), m.is_query(ask), ledger.counts()["V"]
        ([1, 0], True, 1)

    """

    def __init__(self, inputs: bytes = b"", alphabet: int = 2) -> None:
        self.inputs = bytes(inputs)
        self.alphabet = alphabet
        self._steps: list[Step] = []

    def gate(
        self,
        fn: StepFn,
        relevant: Sequence[int] = (),
        inputs: Sequence[int] = (),
        label: str = "",
    ) -> int:
        """Append a deterministic step; return its position."""
        self._steps.append(Step(tuple(relevant), tuple(inputs), fn=fn, label=label))
        return len(self._steps) - 1

    def query(
        self,
        query: QueryFn,
        relevant: Sequence[int] = (),
        inputs: Sequence[int] = (),
        label: str = "",
    ) -> int:
        """Append an oracle-query step whose query is ``query(values)``; return its position."""
        self._steps.append(Step(tuple(relevant), tuple(inputs), query=query, label=label))
        return len(self._steps) - 1

    def build(self, name: str = "explicit") -> ExplicitTranscriptMachine:
        """Return the machine built so far."""
        return ExplicitTranscriptMachine(self._steps, self.inputs, self.alphabet, name)


class gates:
    """Vectorized gate functions for :meth:`TranscriptBuilder.gate`.

    Each maps a batch of value vectors, shape ``(n, k)``, to one bit per vector.

    Example:
        >>> import numpy as np
        >>> from proofgames import gates
        >>> v = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1]])
        >>> gates.XOR(v).tolist(), gates.majority(v).tolist(), gates.AND(v).tolist()
        ([0, 1, 1], [1, 0, 1], [0, 0, 1])
        >>> gates.at_least(2)(v).tolist()
        [1, 0, 1]
    """

    @staticmethod
    def AND(v: IntArray) -> IntArray:
        """1 iff every value is 1."""
        return np.asarray(np.all(v == 1, axis=1), dtype=np.int64)

    @staticmethod
    def OR(v: IntArray) -> IntArray:
        """1 iff some value is 1."""
        return np.asarray(np.any(v == 1, axis=1), dtype=np.int64)

    @staticmethod
    def XOR(v: IntArray) -> IntArray:
        """Parity of the values."""
        return np.asarray(np.sum(v, axis=1) % 2, dtype=np.int64)

    @staticmethod
    def NOT(v: IntArray) -> IntArray:
        """Negation of the single value."""
        return np.asarray(1 - v[:, 0], dtype=np.int64)

    @staticmethod
    def COPY(v: IntArray) -> IntArray:
        """The single value."""
        return np.asarray(v[:, 0], dtype=np.int64)

    @staticmethod
    def majority(v: IntArray) -> IntArray:
        """1 iff more than half the values are 1."""
        return np.asarray(2 * np.sum(v, axis=1) > v.shape[1], dtype=np.int64)

    @staticmethod
    def at_least(k: int) -> StepFn:
        """Return a gate that is 1 iff at least ``k`` values are 1."""

        def fn(v: IntArray) -> IntArray:
            return np.asarray(np.sum(v, axis=1) >= k, dtype=np.int64)

        return fn
