"""Vectorized simulation of one sampled round under given adversaries (report section 7).

At K = 1, T = 10 the report's machine (``padded-query:t=10``) has one sampled round, the
last, whose bit is the output; the nine rounds before it are deterministic, and there the
exact optimal adversaries announce the truth (checked by the caller).  So a debate is
decided in that round: A announces ``c``; B aborts or not; on an abort V samples and
decides; otherwise the output bit is a Bernoulli(``c``) draw (the Lean external coin).
Every draw comes from a ``numpy`` generator seeded through ``SeedSequence``.

Example:
    >>> import numpy as np
    >>> from proofgames.stochastic.seqtest import SequentialTest
    >>> t = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
    ...                    v_a=0.007057, delta=0.243256)
    >>> acc, used = sequential_v(t, np.full(4000, 0.5), 0.5, np.random.default_rng(0))
    >>> 0.9 < acc.mean() < 0.96, 48 < used.mean() < 56  # exact: 0.9389 and 52.05
    (np.True_, np.True_)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..stochastic.seqtest import SequentialTest, thresholds

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
NEVER = np.iinfo(np.int64).max


def _first(mask: BoolArray) -> IntArray:
    """Per row, the first column where ``mask`` holds (1-based), or :data:`NEVER`."""
    hit = mask.any(axis=1)
    return np.where(hit, mask.argmax(axis=1) + 1, NEVER)


def _group(test: SequentialTest, a: float, x: float, rows: int,
           rng: np.random.Generator) -> tuple[BoolArray, IntArray]:  # fmt: skip
    """V's verdicts and samples on ``rows`` runs at one announcement (module docstring)."""
    th = thresholds(test, a)
    if th.start_hi and th.start_lo:
        return np.ones(rows, dtype=bool), np.zeros(rows, dtype=np.int64)
    counts = np.cumsum(rng.random((rows, test.n)) < x, axis=1, dtype=np.int64)
    t_rej = _first((counts >= th.reject_hi) | (counts <= th.reject_lo))
    t_hi = np.zeros(rows, np.int64) if th.start_hi else _first(counts <= th.settle_hi)
    t_lo = np.zeros(rows, np.int64) if th.start_lo else _first(counts >= th.settle_lo)
    t_acc = np.maximum(t_hi, t_lo)
    early = np.minimum(t_rej, t_acc) <= test.n
    final = counts[:, -1]
    accept = np.where(early, t_acc < t_rej, (final >= th.low) & (final <= th.high))
    used = np.where(early, np.minimum(t_rej, t_acc), test.n)
    return accept.astype(bool), used.astype(np.int64)


def sequential_v(test: SequentialTest, a: FloatArray, x: float,
                 rng: np.random.Generator) -> tuple[BoolArray, IntArray]:  # fmt: skip
    """The sequential V on one aborted round per announcement in ``a``, at truth ``x``.

    Rows with the same announcement share one vectorized draw.  An announcement outside
    [0, 1] is rejected with no sample.  Returns (accepted, samples drawn) per row.
    """
    accept = np.zeros(a.size, dtype=bool)
    used = np.zeros(a.size, dtype=np.int64)
    values, inverse = np.unique(a, return_inverse=True)
    for j, value in enumerate(values.tolist()):
        rows = np.flatnonzero(inverse == j)
        if 0 <= value <= 1:
            accept[rows], used[rows] = _group(test, value, x, rows.size, rng)
    return accept, used


def fixed_v(n: int, theta: float, a: FloatArray, x: float,
            rng: np.random.Generator) -> tuple[BoolArray, IntArray]:  # fmt: skip
    """A fixed-``n`` V: ``n`` samples, accept iff ``|X/n - a| < theta`` (the protocol's test)."""
    estimate = rng.binomial(n, x, size=a.size) / n
    return np.abs(estimate - a) < theta, np.full(a.size, n, dtype=np.int64)


def honest_b_stays(samples: int, threshold: float, c: FloatArray, p: float,
                   rng: np.random.Generator) -> BoolArray:  # fmt: skip
    """Honest B's check: it stays iff its estimate is within ``threshold`` of ``c``."""
    estimate = rng.binomial(samples, p, size=c.size) / samples
    return np.abs(estimate - c) < threshold
