"""The Turing-machine engine's inner loops in numba, used where the C kernel is not.

The same loops as the C source in :mod:`._engine` (state numbering and statuses there);
imported only when :func:`proofgames._native.load` gives no library, since importing numba
and loading these cached kernels takes about half a second.
"""

from __future__ import annotations

import numba
import numpy as np

STATUS_DONE, STATUS_STOP, STATUS_EDGE = 0, 1, 2  # as in ._engine


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
