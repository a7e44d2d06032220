"""The Turing-machine engine's inner loops: a C kernel, or numba where no compiler works.

The state numbering is: ``0 .. n-1`` ordinary states, ``n`` = HALT, ``n + 1`` = OVERFLOW.
``stop[q]`` is true for states at which the compiled loop must hand control back to
Python: HALT, OVERFLOW and oracle-query states.

:func:`bind` fixes a program's tables once and returns a :class:`Kernel` whose ``run`` and
``span`` advance a tape in place.  They call :data:`SOURCE`, compiled on first use by
:func:`proofgames._native.load`; without a library they call the numba loops of
:mod:`._engine_numba`.  Both are the same integer loop, so they give identical results
(a test compares them on random machines and on the 5-state champion); the C call releases
the GIL, so two provers can simulate on two threads at once.

Example:
    >>> import numpy as np
    >>> from proofgames.machines import TuringMachine
    >>> p = TuringMachine.sized("1RB1LB_1LA1RZ", steps=10).program
    >>> stop = np.zeros(p.states + 2, dtype=np.bool_)
    >>> stop[p.halt] = stop[p.overflow] = True
    >>> tape = np.zeros(16, dtype=np.uint8)
    >>> steps, head, state, status = bind(p.write, p.move, p.nxt, p.symbols, stop).run(
    ...     tape, 8, 0, 100)
    >>> steps, state == p.halt, status == STATUS_STOP, int(tape.sum())
    (6, True, True, 4)
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _native

STATUS_DONE = 0  # ran the requested number of steps
STATUS_STOP = 1  # sitting in a state flagged in ``stop`` (halt, overflow or query)
STATUS_EDGE = 2  # the next step would move the head off the tape window

MAX_STEPS = 2**63 - 1
"""Most steps one run may ask for: the compiled loops count steps in a signed 64-bit int."""

SOURCE = r"""
#include <stdint.h>
/* io: in {head, state, lo, hi}; out {steps, head, state, lo, hi}; returns the status */
#define TM_LOOP(SPAN)                                                          \
    int64_t head = io[0], state = io[1], lo = io[2], hi = io[3], steps = 0;   \
    int64_t status = 0;                                                        \
    while (steps < max_steps) {                                                \
        if (stop[state]) { status = 1; break; }                                \
        int64_t i = state * nsym + tape[head];                                 \
        int64_t h = head + move[i];                                            \
        if (h < 0 || h >= size) { status = 2; break; }                         \
        tape[head] = write[i];                                                 \
        head = h;                                                              \
        state = nxt[i];                                                        \
        if (SPAN) { if (h < lo) lo = h; if (h > hi) hi = h; }                  \
        steps += 1;                                                            \
    }                                                                          \
    io[0] = steps; io[1] = head; io[2] = state; io[3] = lo; io[4] = hi;        \
    return status;

int64_t tm_run(const uint8_t *write, const int64_t *move, const int64_t *nxt, int64_t nsym,
               const uint8_t *stop, uint8_t *tape, int64_t size, int64_t max_steps,
               int64_t *io) { TM_LOOP(0) }

int64_t tm_span(const uint8_t *write, const int64_t *move, const int64_t *nxt, int64_t nsym,
                const uint8_t *stop, uint8_t *tape, int64_t size, int64_t max_steps,
                int64_t *io) { TM_LOOP(1) }
"""

_P, _I = ctypes.c_void_p, ctypes.c_int64
_IO = ctypes.c_int64 * 5


def _library() -> ctypes.CDLL | None:
    lib = _native.load("tm-engine", SOURCE)
    if lib is not None and lib.tm_run.argtypes is None:
        # tm_run's argtypes last: another thread that sees them set finds all the rest set
        for fn in (lib.tm_span, lib.tm_run):
            fn.restype = _I
            fn.argtypes = [_P, _P, _P, _I, _P, _P, _I, _I, ctypes.POINTER(_I)]
    return lib


def _address(a: np.ndarray) -> int:
    return int(a.ctypes.data)


@dataclass(eq=False)
class Kernel:
    """A program's step loops (see :func:`bind`)."""

    write: np.ndarray
    move: np.ndarray
    nxt: np.ndarray
    nsym: int
    stop: np.ndarray
    lib: ctypes.CDLL | None  # None: the numba loops
    _tables: tuple[int, int, int, int, int] = field(init=False)

    def __post_init__(self) -> None:
        self._tables = (
            _address(self.write), _address(self.move), _address(self.nxt), self.nsym,
            _address(self.stop),
        )  # fmt: skip

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its tables; the receiving process loads its own library."""
        return bind, (self.write, self.move, self.nxt, self.nsym, self.stop)

    @property
    def backend(self) -> str:
        """``"c"`` or ``"numba"``."""
        return "numba" if self.lib is None else "c"

    def run(
        self, tape: np.ndarray, head: int, state: int, max_steps: int
    ) -> tuple[int, int, int, int]:
        """At most ``max_steps`` steps in place: ``(steps_done, head, state, status)``."""
        if self.lib is None:
            from ._engine_numba import run_kernel

            w, m, n, s, st = self.write, self.move, self.nxt, self.nsym, self.stop
            out = run_kernel(w, m, n, s, st, tape, head, state, max_steps)
            return int(out[0]), int(out[1]), int(out[2]), int(out[3])
        io = _IO(head, state, 0, 0, 0)
        status = self.lib.tm_run(*self._tables, _address(tape), tape.size, max_steps, io)
        return io[0], io[1], io[2], status

    def span(
        self, tape: np.ndarray, head: int, state: int, max_steps: int, lo: int, hi: int
    ) -> tuple[int, int, int, int, int, int]:
        """As :meth:`run`, also tracking the lowest and highest head positions."""
        if self.lib is None:
            from ._engine_numba import span_kernel

            w, m, n, s, st = self.write, self.move, self.nxt, self.nsym, self.stop
            out: Any = span_kernel(w, m, n, s, st, tape, head, state, max_steps, lo, hi)
            return tuple(int(x) for x in out)  # type: ignore[return-value]
        io = _IO(head, state, lo, hi, 0)
        status = self.lib.tm_span(*self._tables, _address(tape), tape.size, max_steps, io)
        return io[0], io[1], io[2], status, io[3], io[4]


def bind(
    write: np.ndarray, move: np.ndarray, nxt: np.ndarray, nsym: int, stop: np.ndarray
) -> Kernel:
    """The step loops of one program.

    The tables ``write`` (uint8), ``move`` and ``nxt`` (int64) are indexed by
    ``state * nsym + symbol``; ``stop`` (bool) flags the states that end a loop.
    """
    return Kernel(
        np.ascontiguousarray(write, np.uint8),
        np.ascontiguousarray(move, np.int64),
        np.ascontiguousarray(nxt, np.int64),
        int(nsym),
        np.ascontiguousarray(stop, np.bool_),
        _library(),
    )
