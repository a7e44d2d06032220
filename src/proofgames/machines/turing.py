"""Turing machines in the Busy Beaver community's standard text format, with oracles.

Text format: one group per state (``A``, ``B``, ...), separated by ``_``; in each group one
3-character transition per symbol read (``0``, ``1``, ...): symbol written, move ``L``/``R``,
next state.  ``Z`` (and ``H`` for machines with fewer than 8 states) is the halt state;
``---`` is an undefined transition, which halts without writing or moving when executed.
Transitions into the halt state count as steps, so the 2-state champion
``1RB1LB_1LA1RZ`` halts after 6 steps with 4 ones on the tape.

A machine is run on a tape *window* of ``space`` cells (the configuration size S), head
starting at ``origin``.  A step that would move the head off the window writes its symbol
and enters the absorbing, non-accepting OVERFLOW state, so the step function is total.
HALT and OVERFLOW are absorbing: stepping them changes nothing.  The output of a
configuration is 1 iff it is halted, so "M accepts within T steps" is "M halts within T
steps" (in the given space).

Oracle Turing machines designate *query states*.  In a query state the machine asks the
oracle about the ``query_width`` cells starting at the head, and the transition row of that
state is indexed by the oracle's answer bit instead of the symbol under the head.

Example:
    >>> from proofgames.machines import TuringMachine
    >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=10)
    >>> final = tm.advance(tm.initial(), 10)
    >>> tm.accepts(final), sum(final.tape)
    (1, 4)

"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._configuration import Configuration, ConfigurationMachine, chunk_lengths
from .._oracle import OracleView
from ..errors import ConfigurationError, MachineFormatError, ProtocolError
from ._engine import MAX_STEPS, STATUS_DONE, STATUS_EDGE, STATUS_STOP, Kernel, bind

_LETTERS = string.ascii_uppercase


def check_steps(steps: object, what: str = "steps T") -> int:
    """``steps`` as an int in ``1 .. MAX_STEPS`` (2^63 - 1), else a ProtocolError naming it.

    Example:
        >>> check_steps(2**64)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: steps T = 18446744073709551616 is beyond ... 2^63 - 1 ...
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise ProtocolError(f"{what} must be an integer, got {type(steps).__name__} {steps!r}")
    if steps <= 0:
        raise ProtocolError(f"{what} must be positive, got {steps}")
    if steps > MAX_STEPS:
        raise ProtocolError(
            f"{what} = {steps} is beyond the Turing-machine engine's limit of 2^63 - 1 = "
            f"{MAX_STEPS} steps (it counts steps in a signed 64-bit integer)"
        )
    return int(steps)


@dataclass(frozen=True)
class TMProgram:
    """A parsed transition table.

    Attributes:
        text: the standard text it was parsed from.
        states: number of ordinary states (HALT is ``states``, OVERFLOW ``states + 1``).
        symbols: number of tape symbols.
        write, move, nxt: flat tables indexed by ``state * symbols + symbol``.

    """

    text: str
    states: int
    symbols: int
    write: np.ndarray = field(repr=False)
    move: np.ndarray = field(repr=False)
    nxt: np.ndarray = field(repr=False)

    @property
    def halt(self) -> int:
        """Index of the HALT state."""
        return self.states

    @property
    def overflow(self) -> int:
        """Index of the OVERFLOW state."""
        return self.states + 1

    def state_name(self, q: int) -> str:
        """Human-readable state name."""
        if q == self.halt:
            return "HALT"
        if q == self.overflow:
            return "OVERFLOW"
        return _LETTERS[q]


def parse_tm(text: str) -> TMProgram:
    """Parse a machine in the standard text format.

    Raises:
        MachineFormatError: naming the state, symbol and transition at fault.

    """
    if not isinstance(text, str) or not text.strip():
        raise MachineFormatError("empty Turing machine text; expected e.g. '1RB1LB_1LA1RZ'")
    groups = text.strip().split("_")
    n = len(groups)
    if n > len(_LETTERS) - 1:
        raise MachineFormatError(f"{n} states: at most 25 are supported")
    if len(groups[0]) % 3 != 0 or not groups[0]:
        raise MachineFormatError(
            f"state A's group {groups[0]!r} has {len(groups[0])} characters; "
            "each transition has exactly 3 (symbol, move, state)"
        )
    m = len(groups[0]) // 3
    if not 2 <= m <= 10:
        raise MachineFormatError(
            f"state A's group {groups[0]!r} gives {m} symbol(s) (3 characters per symbol); "
            "between 2 and 10 symbols are supported, e.g. '1RB1LB_1LA1RZ'"
        )
    halt_letters = {"Z"} | ({"H"} if n < 8 else set())
    write = np.zeros(n * m, dtype=np.uint8)
    move = np.zeros(n * m, dtype=np.int64)
    nxt = np.zeros(n * m, dtype=np.int64)
    for q, g in enumerate(groups):
        if len(g) != 3 * m:
            raise MachineFormatError(
                f"state {_LETTERS[q]}'s group {g!r} has {len(g)} characters; expected {3 * m} "
                f"({m} symbols x 3)"
            )
        for s in range(m):
            tr = g[3 * s : 3 * s + 3]
            i = q * m + s
            where = f"state {_LETTERS[q]}, symbol {s}: transition {tr!r}"
            if tr == "---":
                write[i], move[i], nxt[i] = s, 0, n
                continue
            w, d, nq = tr[0], tr[1], tr[2]
            if not w.isdigit() or int(w) >= m:
                raise MachineFormatError(f"{where} writes {w!r}; symbols are 0..{m - 1}")
            if d not in "LR":
                raise MachineFormatError(f"{where} moves {d!r}; moves are L or R")
            if nq in halt_letters:
                target = n
            elif nq in _LETTERS[:n]:
                target = _LETTERS.index(nq)
            else:
                raise MachineFormatError(
                    f"{where} goes to undefined state {nq!r}; the machine has {n} states "
                    f"{_LETTERS[0]}..{_LETTERS[n - 1]} and halts with Z"
                )
            write[i], move[i], nxt[i] = int(w), (1 if d == "R" else -1), target
    for arr in (write, move, nxt):
        arr.setflags(write=False)
    return TMProgram(text.strip(), n, m, write, move, nxt)


class TuringMachine(ConfigurationMachine):
    """A (possibly oracle) Turing machine on a tape window of ``space`` cells.

    Args:
        program: standard text or a parsed :class:`TMProgram`.
        space: the configuration size S (tape cells).
        origin: the head's starting cell (default: the middle of the window).
        tape_input: symbols written on the tape from ``origin`` on at time 0.
        query_states: names of oracle-query states (e.g. ``"C"``).
        query_width: number of cells, from the head rightwards, that form a query.
        name: name used in outcome records.

    Example:
        The 2-state busy beaver halts at step 6 in a window of 4 cells; in 2 cells it runs
        off the edge into the absorbing OVERFLOW state instead:

        >>> from proofgames import FunctionOracle, OracleLedger, TuringMachine
        >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
        >>> tm.size, tm.known_output, tm.accepts(tm.advance(tm.initial(), 5))
        (4, 1, 0)
        >>> cramped = TuringMachine("1RB1LB_1LA1RZ", space=2)
        >>> cramped.program.state_name(cramped.advance(cramped.initial(), 6).state)
        'OVERFLOW'

        An oracle machine: in query state B the oracle's answer about the cell under the
        head picks B's transition (0: write 0 and go on in A, 1: halt):

        >>> q = TuringMachine("1RB1RB_0RA1RZ", space=8, origin=0, query_states=["B"])
        >>> ledger = OracleLedger(FunctionOracle(lambda z: 1))
        >>> q.accepts(q.advance(q.initial(), 6, ledger.view("V"))), ledger.counts()["V"]
        (1, 1)

    """

    def __init__(
        self,
        program: str | TMProgram,
        space: int,
        origin: int | None = None,
        tape_input: bytes = b"",
        query_states: Sequence[str] = (),
        query_width: int = 1,
        name: str | None = None,
    ) -> None:
        self.program = parse_tm(program) if isinstance(program, str) else program
        p = self.program
        if not isinstance(space, int) or space < 1:
            raise ConfigurationError(f"space must be a positive number of cells, got {space!r}")
        self.size = space
        self.origin = space // 2 if origin is None else origin
        if not 0 <= self.origin < space:
            raise ConfigurationError(f"origin {self.origin} is outside the window [0, {space})")
        if self.origin + len(tape_input) > space:
            raise ConfigurationError(
                f"the input ({len(tape_input)} cells from cell {self.origin}) does not fit in "
                f"space {space}"
            )
        if any(s >= p.symbols for s in tape_input):
            raise ConfigurationError(f"the input uses a symbol outside 0..{p.symbols - 1}")
        self.tape_input = bytes(tape_input)
        self.query_width = int(query_width)
        qmask = np.zeros(p.states + 2, dtype=np.bool_)
        for qname in query_states:
            if qname not in _LETTERS[: p.states]:
                raise MachineFormatError(f"query state {qname!r} is not a state of the machine")
            qmask[_LETTERS.index(qname)] = True
        self.query_mask = qmask
        self._stop = qmask.copy()
        self._stop[p.halt] = self._stop[p.overflow] = True
        self._kernel: Kernel | None = None  # bound on first use (loads the C library)
        self.name = name or f"tm:{p.text}"
        self.known_output: int | None = None  # set by ``sized``: the true output at T

    # ------------------------------------------------------------ construction
    @classmethod
    def sized(
        cls,
        program: str | TMProgram,
        steps: int,
        tape_input: bytes = b"",
        oracle: OracleView | None = None,
        query_states: Sequence[str] = (),
        query_width: int = 1,
        name: str | None = None,
        span: Span | None = None,
    ) -> TuringMachine:
        """Build a machine whose window is exactly the cells used in its first ``steps`` steps.

        This runs the machine once (instance set-up, not prover work), unless ``span``,
        the run's :func:`measure_span` known beforehand (a recorded one), is given.
        """
        prog = parse_tm(program) if isinstance(program, str) else program
        if span is None:
            span = measure_span(prog, steps, tape_input, oracle, query_states, query_width)
        machine = cls(
            prog, span.hi - span.lo + 1, -span.lo, tape_input, query_states, query_width, name
        )
        machine.known_output = int(span.halted)
        return machine

    # ----------------------------------------------------- ConfigurationMachine
    def initial(self) -> Configuration:
        """Blank tape (plus input), head at ``origin``, state A."""
        tape = bytearray(self.size)
        tape[self.origin : self.origin + len(self.tape_input)] = self.tape_input
        return Configuration(0, self.origin, bytes(tape))

    def validate(self, config: object) -> Configuration:
        """Check size, head, state and symbols of a claimed configuration."""
        if not isinstance(config, Configuration):
            raise ConfigurationError(f"expected a Configuration, got {type(config).__name__}")
        if len(config.tape) != self.size:
            raise ConfigurationError(
                f"configuration has {len(config.tape)} tape cells; {self.name} uses S = {self.size}"
            )
        if not 0 <= config.head < self.size:
            raise ConfigurationError(f"head {config.head} is outside the window [0, {self.size})")
        if not 0 <= config.state <= self.program.overflow:
            raise ConfigurationError(
                f"state {config.state} is not a state of the machine (0..{self.program.overflow})"
            )
        foreign = config.tape.translate(None, bytes(range(self.program.symbols)))  # C speed
        if foreign:
            raise ConfigurationError(
                f"tape holds symbol {max(foreign)}; symbols are 0..{self.program.symbols - 1}"
            )
        return config

    def accepts(self, config: Configuration) -> int:
        """1 iff the configuration is halted."""
        return int(config.state == self.program.halt)

    def config_bits(self) -> int:
        """Bits of one configuration: tape, state and head."""
        p = self.program
        sym_bits = max(1, (p.symbols - 1).bit_length())
        return (
            self.size * sym_bits
            + (p.states + 1).bit_length()
            + max(1, (self.size - 1).bit_length())
        )

    def step(
        self,
        config: Configuration,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> Configuration:
        """One step (the reference semantics; :meth:`advance` is the fast path)."""
        tape = config.tape_array()
        head, state, _ = self._advance_inplace(tape, config.head, config.state, 1, oracle, rng)
        return Configuration(state, head, tape.tobytes())

    def run_steps(
        self,
        config: Configuration,
        steps: int,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> tuple[Configuration, int]:
        """Apply ``steps`` steps with the compiled engine; return the result and the work."""
        tape = config.tape_array()
        head, state, work = self._advance_inplace(
            tape, config.head, config.state, steps, oracle, rng
        )
        return Configuration(state, head, tape.tobytes()), work

    def run_chunks(
        self,
        config: Configuration,
        steps: int,
        chunk: int | Sequence[int],
        oracle: OracleView | None = None,
    ) -> Iterator[tuple[Configuration, int, int]]:
        """Run on one working tape, copying it out only at each checkpoint."""
        tape = config.tape_array()
        head, state = config.head, config.state
        for n in chunk_lengths(steps, chunk):
            if state >= self.program.halt:  # absorbing: every later checkpoint is this one
                yield config, n, 0
                continue
            head, state, work = self._advance_inplace(tape, head, state, n, oracle, None)
            config = Configuration(state, head, tape.tobytes())
            yield config, n, work

    def predecessors(self, config: Configuration) -> list[Configuration]:
        """Every configuration (in an ordinary, non-query state) one step before ``config``."""
        p, out = self.program, []
        for q in range(p.states):
            if self.query_mask[q]:
                continue
            for s in range(p.symbols):
                i = q * p.symbols + s
                h = config.head - int(p.move[i])
                if int(p.nxt[i]) != config.state or not 0 <= h < self.size:
                    continue
                if config.tape[h] != p.write[i]:
                    continue
                tape = bytearray(config.tape)
                tape[h] = s
                out.append(Configuration(q, h, bytes(tape)))
        return out

    # ------------------------------------------------------------------ engine
    def _advance_inplace(
        self,
        tape: np.ndarray,
        head: int,
        state: int,
        steps: int,
        oracle: OracleView | None,
        rng: np.random.Generator | None,
    ) -> tuple[int, int, int]:
        """Advance in place; return ``(head, state, steps_simulated)``.

        Steps taken in an absorbing state are free: they change nothing.
        """
        p = self.program
        if steps > MAX_STEPS:
            check_steps(steps)
        remaining = int(steps)
        work = 0
        if self._kernel is None:
            self._kernel = bind(p.write, p.move, p.nxt, p.symbols, self._stop)
        while remaining > 0:
            done, head, state, status = self._kernel.run(tape, head, state, remaining)
            remaining -= done
            work += done
            if status == STATUS_DONE or remaining == 0:
                break
            if status == STATUS_STOP and state >= p.halt:
                break  # absorbing
            if status == STATUS_STOP:  # oracle query step
                if oracle is None:
                    raise ProtocolError(f"{self.name} reached query state but has no oracle")
                query = tape[head : head + self.query_width].tobytes()
                symbol = oracle.ask(query, rng)
            else:
                symbol = int(tape[head])
            assert status in (STATUS_STOP, STATUS_EDGE)
            i = state * p.symbols + symbol
            h = head + int(p.move[i])
            tape[head] = p.write[i]
            if 0 <= h < self.size:
                head, state = h, int(p.nxt[i])
            else:
                state = p.overflow
            remaining -= 1
            work += 1
        return head, state, work


class Span(NamedTuple):
    """Result of :func:`measure_span`."""

    lo: int
    hi: int
    halted: bool


def measure_span(
    program: TMProgram,
    steps: int,
    tape_input: bytes = b"",
    oracle: OracleView | None = None,
    query_states: Sequence[str] = (),
    query_width: int = 1,
) -> Span:
    """Lowest and highest cells (relative to the start) visited in ``steps`` steps.

    The tape grows as needed, so the answer does not depend on any window.  Also reports
    whether the machine halted (set-up knowledge for choosing a scenario, never shown to V).
    """
    steps = check_steps(steps)
    size = max(1 << 12, 2 * len(tape_input) + 2)
    tape = np.zeros(size, dtype=np.uint8)
    origin = size // 2
    tape[origin : origin + len(tape_input)] = np.frombuffer(tape_input, dtype=np.uint8)
    stop = np.zeros(program.states + 2, dtype=np.bool_)
    stop[program.halt] = stop[program.overflow] = True
    for qname in query_states:
        stop[_LETTERS.index(qname)] = True
    head, state, lo, hi = origin, 0, origin, origin + max(0, len(tape_input) - 1)
    remaining = steps
    kernel = bind(program.write, program.move, program.nxt, program.symbols, stop)
    while remaining > 0:
        done, head, state, status, lo, hi = kernel.span(tape, head, state, remaining, lo, hi)
        remaining -= done
        if status == STATUS_DONE or remaining == 0 or state >= program.halt:
            break
        if status == STATUS_EDGE or not 0 < head < size - 1:
            # grow the tape by its own size on both sides
            tape = np.concatenate([np.zeros(size, np.uint8), tape, np.zeros(size, np.uint8)])
            head, lo, hi, origin = head + size, lo + size, hi + size, origin + size
            size = tape.shape[0]
            if status == STATUS_EDGE:
                continue
        if oracle is None:
            raise ProtocolError("the machine reached a query state but no oracle was given")
        symbol = oracle.ask(tape[head : head + query_width].tobytes())
        i = state * program.symbols + symbol
        tape[head] = program.write[i]
        head += int(program.move[i])
        state = int(program.nxt[i])
        lo, hi = min(lo, head), max(hi, head)
        remaining -= 1
    return Span(lo - origin, hi - origin, state == program.halt)
