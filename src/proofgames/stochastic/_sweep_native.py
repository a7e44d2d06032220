"""The every-step-K sweep in C (:func:`~proofgames.stochastic.hypothesis.step_lipschitz_bounds`).

The same loop as the numba kernel in :mod:`._sweep_kernel`, operation for operation in the
same order, compiled on first use by :func:`proofgames._native.load`; ``min`` and ``max``
keep their first argument unless the second is strictly smaller (larger), as Python's and
numba's do, and nothing is contracted into fused multiply-adds, so the two give
bit-identical results (a test compares them).  A short machine's sweep then needs no
numba, whose import and cache load cost about half a second.

Layout: the layers' arrays are concatenated; layer ``t`` owns the slice
``offsets[t]:offsets[t + 1]`` of ``p``, ``child0`` and ``child1``, whose child indices
point into layer ``t + 1``'s states (or into ``output`` for the last layer).

Example:
    >>> import numpy as np
    >>> from proofgames.stochastic.hypothesis import _layers
    >>> from proofgames.stochastic.machines import make_stochastic_machine
    >>> layers, output = _layers(make_stochastic_machine("single-query:p=0.8"), 16)
    >>> offsets, c0, c1 = flatten([x.p for x in layers], [x.child0 for x in layers],
    ...                           [x.child1 for x in layers])
    >>> p = np.concatenate([x.p for x in layers])
    >>> args = (offsets, p, c0, c1, output, np.array([0.0, 0.1]), np.array([0.1, 0.2]))
    >>> if _library() is None:  # no C compiler here: numba's loop
    ...     from proofgames.stochastic._sweep_kernel import sweep_kernel as sweep
    >>> f, slope = sweep(*args)  # radius 0.1 moves P[M=1] = 0.8 by 0.1 either way
    >>> f[:, 1].tolist(), slope.tolist()
    ([0.1, 0.1], [[1.0, 1.0], [1.0, 1.0]])
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import _native
from .exact import FloatArray, IntArray

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>

static double pmin(double a, double b) { return b < a ? b : a; }
static double pmax(double a, double b) { return b > a ? b : a; }
/* clip(p +- eps) - p without cancellation (up picks the sign) */
static double shift(double p, double eps, int up) {
    return up ? pmin(eps, 1.0 - p) : -pmin(eps, p);
}

enum { BASE, HI, LO, WHI, WLO, RUP, RDOWN, KINDS };

/* Returns 0, or -1 when memory runs out. f and slope: 2 x cells, row-major. */
int sweep(const int64_t *offsets, int64_t layers, const double *p_all, const int64_t *child0,
          const int64_t *child1, const double *output, int64_t n, const double *a,
          const double *b, int64_t cells, double *f, double *slope) {
    double *cur[KINDS], *nxt[KINDS];
    int failed = 0;
    for (int k = 0; k < KINDS; k++) {
        cur[k] = malloc(sizeof(double) * (size_t)(n * (k == BASE ? 1 : cells) + 1));
        failed |= cur[k] == NULL;
        nxt[k] = NULL;
    }
    if (failed) { for (int k = 0; k < KINDS; k++) free(cur[k]); return -1; }
    for (int64_t s = 0; s < n; s++) {
        cur[BASE][s] = output[s];
        for (int64_t j = 0; j < cells; j++) {
            int64_t x = s * cells + j;
            cur[HI][x] = output[s]; cur[LO][x] = output[s];
            cur[WHI][x] = 0.0; cur[WLO][x] = 0.0; cur[RUP][x] = 0.0; cur[RDOWN][x] = 0.0;
        }
    }
    for (int64_t t = layers - 1; t >= 0; t--) {
        int64_t start = offsets[t], m = offsets[t + 1] - offsets[t];
        for (int k = 0; k < KINDS; k++) {
            nxt[k] = malloc(sizeof(double) * (size_t)(m * (k == BASE ? 1 : cells) + 1));
            failed |= nxt[k] == NULL;
        }
        if (failed) break;
        const double *base = cur[BASE], *hi = cur[HI], *lo = cur[LO], *w_hi = cur[WHI],
                     *w_lo = cur[WLO], *r_up = cur[RUP], *r_down = cur[RDOWN];
        for (int64_t s = 0; s < m; s++) {
            double p = p_all[start + s];
            int64_t c0 = child0[start + s] * cells, c1 = child1[start + s] * cells;
            double true_gap = base[child1[start + s]] - base[child0[start + s]];
            for (int64_t j = 0; j < cells; j++) {
                int64_t x = s * cells + j;
                double rises = pmax(0.0, true_gap + w_hi[c1 + j] - w_lo[c0 + j]);
                double falls = pmax(0.0, -true_gap - w_lo[c1 + j] + w_hi[c0 + j]);
                double either = pmax(rises, falls);
                double up = p <= 0.0 ? rises : (p >= 1.0 ? falls : either);
                double down = p <= 0.0 ? falls : (p >= 1.0 ? rises : either);
                double d = r_up[c1 + j] - r_up[c0 + j];
                nxt[RUP][x] = pmin(1.0, up) + r_up[c0 + j] + d * (p + shift(p, b[j], d >= 0));
                d = r_down[c1 + j] - r_down[c0 + j];
                nxt[RDOWN][x] = pmin(1.0, down) + r_down[c0 + j] + d * (p + shift(p, b[j], d >= 0));
                d = hi[c1 + j] - hi[c0 + j];
                double delta = shift(p, a[j], d >= 0);
                nxt[HI][x] = hi[c0 + j] + d * (p + delta);
                nxt[WHI][x] = w_hi[c0 + j] + (w_hi[c1 + j] - w_hi[c0 + j]) * p + d * delta;
                d = lo[c1 + j] - lo[c0 + j];
                delta = shift(p, a[j], -d >= 0);
                nxt[LO][x] = lo[c0 + j] + d * (p + delta);
                nxt[WLO][x] = w_lo[c0 + j] + (w_lo[c1 + j] - w_lo[c0 + j]) * p + d * delta;
            }
            int64_t s0 = child0[start + s], s1 = child1[start + s];
            nxt[BASE][s] = base[s0] + (base[s1] - base[s0]) * p;
        }
        for (int k = 0; k < KINDS; k++) { free(cur[k]); cur[k] = nxt[k]; nxt[k] = NULL; }
    }
    if (!failed) {
        for (int64_t j = 0; j < cells; j++) {
            f[j] = cur[WHI][j]; f[cells + j] = -cur[WLO][j];
            slope[j] = cur[RUP][j]; slope[cells + j] = cur[RDOWN][j];
        }
    }
    for (int k = 0; k < KINDS; k++) { free(cur[k]); free(nxt[k]); }
    return failed ? -1 : 0;
}
"""


def _library() -> ctypes.CDLL | None:
    lib = _native.load("step-k-sweep", SOURCE)
    if lib is not None and lib.sweep.argtypes is None:
        ptr, i64 = ctypes.c_void_p, ctypes.c_int64
        lib.sweep.argtypes = [ptr, i64, ptr, ptr, ptr, ptr, i64, ptr, ptr, i64, ptr, ptr]
        lib.sweep.restype = ctypes.c_int
    return lib


def sweep(
    offsets: IntArray,
    p: FloatArray,
    child0: IntArray,
    child1: IntArray,
    output: FloatArray,
    a: FloatArray,
    b: FloatArray,
) -> tuple[FloatArray, FloatArray] | None:
    """``(f, L)``, each of shape ``(2, cells)`` (``hypothesis._sweep``); ``None`` without C.

    Raises:
        MemoryError: the layers' working arrays did not fit in memory.
    """
    lib = _library()
    if lib is None:
        return None
    arrays = [np.ascontiguousarray(x, t) for x, t in (
        (offsets, np.int64), (p, np.float64), (child0, np.int64), (child1, np.int64),
        (output, np.float64), (a, np.float64), (b, np.float64))]  # fmt: skip
    off, out, aa = arrays[0], arrays[4], arrays[5]
    f, slope = np.empty((2, aa.size)), np.empty((2, aa.size))
    ptr = [x.ctypes.data for x in arrays]
    status = lib.sweep(
        ptr[0], off.size - 1, ptr[1], ptr[2], ptr[3], ptr[4], out.size, ptr[5], ptr[6],
        aa.size, f.ctypes.data, slope.ctypes.data,
    )  # fmt: skip
    if status != 0:
        raise MemoryError(f"the every-step K sweep ran out of memory ({aa.size} cells)")
    return f, slope


def flatten(p: list[FloatArray], c0: list[IntArray], c1: list[IntArray]) -> tuple[IntArray, ...]:
    """Offsets and concatenated child arrays of per-layer arrays (module docstring)."""
    offsets = np.zeros(len(p) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([x.size for x in p])
    return (
        offsets,
        np.concatenate(c0).astype(np.int64),
        np.concatenate(c1).astype(np.int64),
    )
