"""The backward sweep of :func:`~proofgames.stochastic.hypothesis.step_lipschitz_bounds`, compiled.

The sweep visits every step of the machine once per refinement round. Written with numpy
over per-step arrays it costs a fixed ~0.2 ms a step (array overhead on a handful of
states), so a 200,000-step machine took minutes. This kernel does the same arithmetic,
operation for operation in the same order, in one compiled loop over flat arrays; the
results are bit-identical to the numpy formulation (a test compares them).  The same loop
in C (:mod:`._sweep_native`) is used where a C compiler works; this one, which costs a
numba import, elsewhere.  The layout of the flat arrays is described there.
"""

from __future__ import annotations

import numba
import numpy as np

from .exact import FloatArray, IntArray


@numba.njit(cache=True, nogil=True, inline="always")
def _shift(p: float, eps: float, up: bool) -> float:  # pragma: no cover - compiled
    """``clip(p +- eps) - p`` without cancellation (``up`` picks the sign)."""
    return min(eps, 1.0 - p) if up else -min(eps, p)


@numba.njit(cache=True, nogil=True)
def sweep_kernel(
    offsets: IntArray,
    p_all: FloatArray,
    child0: IntArray,
    child1: IntArray,
    output: FloatArray,
    a: FloatArray,
    b: FloatArray,
) -> tuple[FloatArray, FloatArray]:  # pragma: no cover - compiled
    """``(f, L)``, each of shape ``(2, cells)``: see ``hypothesis._sweep``."""
    cells = a.size
    n = output.size
    base = output.copy()
    hi = np.empty((n, cells))
    for s in range(n):
        hi[s, :] = output[s]
    lo = hi.copy()
    w_hi = np.zeros((n, cells))
    w_lo = np.zeros((n, cells))
    r_up = np.zeros((n, cells))
    r_down = np.zeros((n, cells))
    for t in range(offsets.size - 2, -1, -1):
        start, stop = offsets[t], offsets[t + 1]
        m = stop - start
        nbase = np.empty(m)
        nhi, nlo = np.empty((m, cells)), np.empty((m, cells))
        nw_hi, nw_lo = np.empty((m, cells)), np.empty((m, cells))
        nr_up, nr_down = np.empty((m, cells)), np.empty((m, cells))
        for s in range(m):
            p = p_all[start + s]
            c0, c1 = child0[start + s], child1[start + s]
            true_gap = base[c1] - base[c0]
            for j in range(cells):
                rises = max(0.0, true_gap + w_hi[c1, j] - w_lo[c0, j])
                falls = max(0.0, -true_gap - w_lo[c1, j] + w_hi[c0, j])
                either = max(rises, falls)
                up = rises if p <= 0.0 else (falls if p >= 1.0 else either)
                down = falls if p <= 0.0 else (rises if p >= 1.0 else either)
                d = r_up[c1, j] - r_up[c0, j]
                nr_up[s, j] = min(1.0, up) + r_up[c0, j] + d * (p + _shift(p, b[j], d >= 0))
                d = r_down[c1, j] - r_down[c0, j]
                nr_down[s, j] = min(1.0, down) + r_down[c0, j] + d * (p + _shift(p, b[j], d >= 0))
                d = hi[c1, j] - hi[c0, j]
                delta = _shift(p, a[j], d >= 0)
                nhi[s, j] = hi[c0, j] + d * (p + delta)
                nw_hi[s, j] = w_hi[c0, j] + (w_hi[c1, j] - w_hi[c0, j]) * p + d * delta
                d = lo[c1, j] - lo[c0, j]
                delta = _shift(p, a[j], -d >= 0)
                nlo[s, j] = lo[c0, j] + d * (p + delta)
                nw_lo[s, j] = w_lo[c0, j] + (w_lo[c1, j] - w_lo[c0, j]) * p + d * delta
            nbase[s] = base[c0] + (base[c1] - base[c0]) * p
        base, hi, lo, w_hi, w_lo, r_up, r_down = nbase, nhi, nlo, nw_hi, nw_lo, nr_up, nr_down
    f = np.empty((2, cells))
    slope = np.empty((2, cells))
    for j in range(cells):
        f[0, j], f[1, j] = w_hi[0, j], -w_lo[0, j]
        slope[0, j], slope[1, j] = r_up[0, j], r_down[0, j]
    return f, slope
