"""Compiled inner loops of the Turing-machine engine (numba).

The state numbering is: ``0 .. n-1`` ordinary states, ``n`` = HALT, ``n + 1`` = OVERFLOW.
``stop[q]`` is true for states at which the compiled loop must hand control back to
Python: HALT, OVERFLOW and oracle-query states.
"""

from __future__ import annotations

import numba
import numpy as np

STATUS_DONE = 0  # ran the requested number of steps
STATUS_STOP = 1  # sitting in a state flagged in ``stop`` (halt, overflow or query)
STATUS_EDGE = 2  # the next step would move the head off the tape window

MAX_STEPS = 2**63 - 1
"""Most steps one run may ask for: the compiled loops count steps in a signed 64-bit int."""


@numba.njit(cache=True, nogil=True)
def run_kernel(
    write: np.ndarray,
    move: np.ndarray,
    nxt: np.ndarray,
    nsym: int,
    stop: np.ndarray,
    tape: np.ndarray,
    head: int,
    state: int,
    max_steps: int,
) -> tuple[int, int, int, int]:  # pragma: no cover - compiled
    """Run at most ``max_steps`` ordinary steps in place on ``tape``.

    Returns ``(steps_done, head, state, status)``.
    """
    size = tape.shape[0]
    steps = 0
    while steps < max_steps:
        if stop[state]:
            return steps, head, state, STATUS_STOP
        i = state * nsym + tape[head]
        h = head + move[i]
        if h < 0 or h >= size:
            return steps, head, state, STATUS_EDGE
        tape[head] = write[i]
        head = h
        state = nxt[i]
        steps += 1
    return steps, head, state, STATUS_DONE


@numba.njit(cache=True, nogil=True)
def span_kernel(
    write: np.ndarray,
    move: np.ndarray,
    nxt: np.ndarray,
    nsym: int,
    stop: np.ndarray,
    tape: np.ndarray,
    head: int,
    state: int,
    max_steps: int,
    lo: int,
    hi: int,
) -> tuple[int, int, int, int, int, int]:  # pragma: no cover - compiled
    """Like :func:`run_kernel`, also tracking the lowest and highest head positions."""
    size = tape.shape[0]
    steps = 0
    while steps < max_steps:
        if stop[state]:
            return steps, head, state, STATUS_STOP, lo, hi
        i = state * nsym + tape[head]
        h = head + move[i]
        if h < 0 or h >= size:
            return steps, head, state, STATUS_EDGE, lo, hi
        tape[head] = write[i]
        head = h
        state = nxt[i]
        if h < lo:
            lo = h
        if h > hi:
            hi = h
        steps += 1
    return steps, head, state, STATUS_DONE, lo, hi
