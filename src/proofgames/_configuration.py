"""Machines given as configurations (state, head, tape) with a single-step function.

This is the form the bisection protocol (Figure 3) needs.  A configuration has a fixed
size: ``S`` tape cells, plus the state and the head position.  One step maps a
configuration to the next, making at most one oracle query.
"""

from __future__ import annotations

import abc
import bisect
import hashlib
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ._oracle import OracleView


@dataclass(frozen=True)
class Configuration:
    """An immutable machine configuration.

    Attributes:
        state: control state (machine-specific numbering).
        head: head position, an index into ``tape``.
        tape: the tape cells, one symbol per byte.

    Example:
        >>> from proofgames import Configuration, TuringMachine
        >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
        >>> start = tm.initial()
        >>> start.state, start.head, list(start.tape)
        (0, 2, [0, 0, 0, 0])
        >>> after = tm.step(start)
        >>> after.state, after.head, after.tape_array().tolist(), after.size
        (1, 3, [0, 0, 1, 0], 4)
        >>> after == Configuration(state=1, head=3, tape=bytes([0, 0, 1, 0]))
        True

    """

    state: int
    head: int
    tape: bytes

    @property
    def size(self) -> int:
        """Number of tape cells."""
        return len(self.tape)

    def digest(self) -> str:
        """Short stable fingerprint, used in message logs."""
        h = hashlib.sha256()
        h.update(self.state.to_bytes(8, "little", signed=True))
        h.update(self.head.to_bytes(8, "little", signed=True))
        h.update(self.tape)
        return h.hexdigest()[:16]

    def tape_array(self) -> np.ndarray:
        """A writable copy of the tape as a ``uint8`` array."""
        return np.frombuffer(self.tape, dtype=np.uint8).copy()


class ConfigurationMachine(abc.ABC):
    """A machine given by configurations of fixed size ``size`` and a step function.

    Example:
        A machine that counts its steps up to 3 and accepts once it gets there, debated by
        bisection like any other configuration machine:

        >>> from proofgames import Configuration, ConfigurationMachine, ConfigurationError
        >>> from proofgames import make_strategy, play_bisection
        >>> class Counter(ConfigurationMachine):
        ...     name, size = "counter", 1
        ...     def initial(self):
        ...         return Configuration(0, 0, bytes(1))
        ...     def validate(self, config):
        ...         if not 0 <= config.state <= 3 or config.head != 0 or config.tape != bytes(1):
        ...             raise ConfigurationError(f"{config} is not a counter configuration")
        ...         return config
        ...     def step(self, config, oracle=None, rng=None):
        ...         return Configuration(min(config.state + 1, 3), 0, config.tape)
        ...     def accepts(self, config):
        ...         return int(config.state == 3)
        ...     def config_bits(self):
        ...         return 2
        >>> m = Counter()
        >>> m.accepts(m.advance(m.initial(), 2)), m.accepts(m.advance(m.initial(), 5))
        (0, 1)
        >>> out = play_bisection(m, 5, claim=1, prover_a=make_strategy("bisection", "A", "honest"),
        ...                      prover_b=make_strategy("bisection", "B", "random"), seed=0)
        >>> out.winner, out.reason
        ('A', 'the step at time 2 is valid')
    """

    name: str = "configuration-machine"
    size: int

    @abc.abstractmethod
    def initial(self) -> Configuration:
        """The configuration at time 0 (built from the input)."""

    @abc.abstractmethod
    def validate(self, config: object) -> Configuration:
        """Return ``config`` if it is a well-formed configuration of this machine.

        Raises:
            ConfigurationError: naming what is wrong (size, symbol, state, head).

        """

    @abc.abstractmethod
    def step(
        self,
        config: Configuration,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> Configuration:
        """Apply one step (at most one oracle query)."""

    @abc.abstractmethod
    def accepts(self, config: Configuration) -> int:
        """The output bit read off a configuration (1 = accepting)."""

    @abc.abstractmethod
    def config_bits(self) -> int:
        """Bits needed to write one configuration."""

    def run_steps(
        self,
        config: Configuration,
        steps: int,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> tuple[Configuration, int]:
        """Apply ``steps`` steps; return the result and the steps actually simulated.

        Subclasses override this with a fast engine; steps in absorbing states may be free.
        """
        for _ in range(steps):
            config = self.step(config, oracle, rng)
        return config, steps

    def run_chunks(
        self,
        config: Configuration,
        steps: int,
        chunk: int | Sequence[int],
        oracle: OracleView | None = None,
    ) -> Iterator[tuple[Configuration, int, int]]:
        """Run ``steps`` steps, yielding ``(configuration, steps done, work)`` every ``chunk``.

        ``chunk`` is one length, or each chunk's length in turn (see :func:`chunk_lengths`).
        Subclasses override this to keep the machine's working state between chunks.
        """
        for n in chunk_lengths(steps, chunk):
            config, work = self.run_steps(config, n, oracle)
            yield config, n, work

    def advance(
        self,
        config: Configuration,
        steps: int,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> Configuration:
        """Apply ``steps`` steps and return the resulting configuration."""
        return self.run_steps(config, steps, oracle, rng)[0]


ProgressFn = Callable[[int], None]


def chunk_lengths(steps: int, chunk: int | Sequence[int]) -> Iterator[int]:
    """The lengths of the chunks of a run of ``steps``: every ``chunk``, or those given.

    Example:
        >>> list(chunk_lengths(10, 4)), list(chunk_lengths(10, [3, 7]))
        ([4, 4, 2], [3, 7])
    """
    if isinstance(chunk, int):
        every = max(1, chunk)
        for done in range(0, steps, every):
            yield min(every, steps - done)
    else:
        yield from chunk


class CheckpointedRun:
    """One run of a machine that keeps evenly spaced checkpoints.

    Any configuration of the run can then be recomputed by simulating at most
    ``interval`` steps from the nearest earlier checkpoint, or from a recently
    reconstructed configuration if one is nearer (the last few are cached: in bisection
    the next midpoint always lies just after one of them).  ``work`` counts every step
    simulated -- the first run plus all re-simulation -- so it is the prover's true cost.

    The interval balances memory (``memory_bytes`` of checkpoints), the per-chunk cost of
    copying a checkpoint and coming back to Python (at most one per ``MIN_INTERVAL``
    steps on long runs: about 0.2 ms of the compiled engine, so that two provers running
    in threads of one process seldom wait for each other's turn with the GIL) and the
    re-simulation a bisection prover does (about ``interval`` per round; the interval is
    kept below ``T / (4 log2 T)`` so that re-simulation stays a small fraction of T).

    Args:
        machine: the machine to run.
        steps: length T of the run.
        oracle: the party's counted oracle access.
        memory_bytes: budget for the stored checkpoints (default :attr:`MEMORY_BYTES`).
        progress: called with the number of steps just simulated during the first run.
        start: the configuration at time 0 (default: the machine's initial one).
        times: where to keep the checkpoints instead of evenly: called with T and the
            even spacing the budget allows, it gives the times (say, a protocol's
            :func:`~proofgames.protocols.bisection.midpoint_times`); at most about T
            divided by that spacing of them keeps to the budget.

    Example:
        The 4-state busy beaver halts after 107 steps; with room for a dozen checkpoints,
        the configuration at time 55 costs 5 steps of re-simulation from the one at 50:

        >>> from proofgames import CheckpointedRun, TuringMachine
        >>> tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", steps=107)
        >>> run = CheckpointedRun(tm, 107, memory_bytes=1000)
        >>> run.interval, run.work, tm.accepts(run.final)
        (10, 107, 1)
        >>> run.config_at(55) == tm.advance(tm.initial(), 55)
        True
        >>> run.work
        112

    """

    MIN_INTERVAL = 1 << 16
    CACHE = 16
    MEMORY_BYTES = 4 << 20
    """The default checkpoint budget: 4 MiB.  Each checkpoint's fresh memory costs page
    faults, each interval re-simulation; on bb5 (47 M steps on a 12,289-cell window) a
    checkpointed run costs about the same as a plain one at 4 MiB, and 1.2x at 16 MiB, for
    about 2% of T re-simulated by a bisection prover instead of 0.5%
    (``benchmarks/bench_checkpoints.py``)."""

    def __init__(
        self,
        machine: ConfigurationMachine,
        steps: int,
        oracle: OracleView | None = None,
        memory_bytes: int | None = None,
        progress: ProgressFn | None = None,
        start: Configuration | None = None,
        times: Callable[[int, int], Iterable[int]] | None = None,
    ) -> None:
        self.machine = machine
        self.steps = steps
        self._oracle = oracle
        budget = self.MEMORY_BYTES if memory_bytes is None else memory_bytes
        count = max(2, budget // max(1, machine.size + 64))
        by_memory = -(-steps // (count - 1))
        by_overhead = min(self.MIN_INTERVAL, -(-steps // (4 * max(1, steps.bit_length()))))
        self.interval = max(1, by_memory, by_overhead)
        self.work = 0
        first = machine.initial() if start is None else start
        self._times, self._checkpoints = [0], [first]
        if times is None:
            chunks = machine.run_chunks(first, steps, self.interval, oracle)
        else:
            inside = {t for t in map(int, times(steps, self.interval)) if 0 < t < steps}
            stops = [0, *sorted(inside), steps] if steps else []
            gaps = [b - a for a, b in itertools.pairwise(stops)]
            chunks = machine.run_chunks(first, steps, gaps, oracle)
        for config, done, work in chunks:
            self.work += work
            self._times.append(self._times[-1] + done)
            self._checkpoints.append(config)
            if progress is not None:
                progress(done)
        self._cache: OrderedDict[int, Configuration] = OrderedDict()

    @property
    def final(self) -> Configuration:
        """The configuration after ``steps`` steps."""
        return self._checkpoints[-1]

    def config_at(self, t: int) -> Configuration:
        """The configuration after ``t`` steps (0 <= t <= steps)."""
        if not 0 <= t <= self.steps:
            raise IndexError(f"time {t} is outside the run [0, {self.steps}]")
        if t == self.steps:  # the last checkpoint, however short its chunk
            return self.final
        k = bisect.bisect_right(self._times, t) - 1
        base_t, base = self._times[k], self._checkpoints[k]
        for ct, cached in self._cache.items():
            if base_t < ct <= t:
                base_t, base = ct, cached
        if base_t == t:
            return base
        config, w = self.machine.run_steps(base, t - base_t, self._oracle)
        self.work += w
        self._cache[t] = config
        if len(self._cache) > self.CACHE:
            self._cache.popitem(last=False)
        return config
