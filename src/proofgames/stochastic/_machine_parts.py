"""Parts the registered stochastic machines are built from (:mod:`.machines`).

Argument checks, the vote counter that majority-like machines share (its exact step
count is known before building), and the exact K of a binomial tail.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .._transcript import IntArray, gates
from ..errors import MachineFormatError
from .lipschitz import secant_from_derivative, tail_lipschitz, univariate_lipschitz
from .model import FloatArray, StochasticBuilder

_INTERPOLATE_UP_TO = 64  # K by exact interpolation up to this many votes, else closed forms


def _probability(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MachineFormatError(f"{key} = {value!r} is not a number")
    if not 0.0 <= value <= 1.0:
        raise MachineFormatError(f"{key} = {value} is a probability and must lie in [0, 1]")
    return float(value)


def _integer(key: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MachineFormatError(f"{key} = {value!r} must be an integer")
    if value < minimum:
        raise MachineFormatError(f"{key} = {value} must be at least {minimum}")
    return value


def _const(c: int) -> Callable[[IntArray], IntArray]:
    def fn(v: IntArray) -> IntArray:
        return np.full(v.shape[0], c, dtype=np.int64)

    return fn


def _spread(p: float, spread: Any, n: int, rng: np.random.Generator) -> FloatArray:
    """Per-item probabilities ``clip(p + spread * U[-1, 1])``."""
    if isinstance(spread, bool) or not isinstance(spread, (int, float)) or spread < 0:
        raise MachineFormatError(f"spread = {spread!r} must be a number >= 0")
    return np.asarray(np.clip(p + spread * rng.uniform(-1.0, 1.0, n), 0.0, 1.0))


def _counter_steps(n: int, k: int) -> int:
    """Steps a :class:`_Counter` of ``n`` votes and threshold ``k`` adds, ``result`` included.

    Exact, in ``O(n)``: vote ``i`` (1-based) updates the thresholds ``j`` in
    ``[max(1, k - (n - i)), min(i, k)]`` -- an AND for each ``j >= 2`` and an OR for each
    ``j`` also kept after vote ``i - 1``.
    """
    if not 1 <= k <= n:
        return 1  # result(): one constant step
    i = np.arange(1, n + 1, dtype=np.int64)
    lo, hi = np.maximum(1, k - (n - i)), np.minimum(i, k)
    ands = np.maximum(0, hi - np.maximum(lo, 2) + 1)
    lo_prev, hi_prev = np.r_[1, lo[:-1]], np.r_[0, hi[:-1]]
    ors = np.maximum(0, np.minimum(hi, hi_prev) - np.maximum(lo, lo_prev) + 1)
    return int(ands.sum() + ors.sum())


class _Counter:
    """The bits ``[count >= j]`` of ``n`` votes fed one at a time (module docstring)."""

    def __init__(self, b: StochasticBuilder, n: int, k: int) -> None:
        self.b, self.n, self.k, self.i = b, n, k, 0
        self.bits: dict[int, int] = {}

    def feed(self, vote: int) -> None:
        """Count one more vote (the position of a 0/1 entry)."""
        self.i += 1
        if not 1 <= self.k <= self.n:
            return
        b, i, bits = self.b, self.i, self.bits
        new: dict[int, int] = {}
        for j in range(max(1, self.k - (self.n - i)), min(i, self.k) + 1):
            h = vote if j == 1 else b.gate(gates.AND, [bits[j - 1], vote], f"count{i}>={j}?")
            new[j] = h if j not in bits else b.gate(gates.OR, [bits[j], h], f"count{i}>={j}")
        self.bits = new

    def result(self) -> int:
        """Position of ``[count >= k]`` (a constant step when ``k`` is out of range)."""
        if 1 <= self.k <= self.n:
            return self.bits[self.k]
        return self.b.gate(_const(int(self.k <= 0)), (), f"count>={self.k}")


def _finish(b: StochasticBuilder, out: int) -> None:
    """Make ``out`` the last entry (the machine's output)."""
    if out != len(b) - 1:
        b.gate(gates.COPY, [out], "output")


def _pmf(j: int, n: int, q: FloatArray) -> FloatArray:
    """``P[Binomial(n, q) = j]`` for ``n <=`` :data:`_INTERPOLATE_UP_TO` (plain arithmetic).

    Up to 64 votes the binomial coefficient is exact in a float to one rounding, so this
    needs no SciPy (importing ``scipy.stats`` costs about 0.4-1 s at start-up).
    """
    q = np.asarray(q, dtype=np.float64)
    return np.asarray(math.comb(n, j) * q**j * (1.0 - q) ** (n - j), dtype=np.float64)


def _tail(n: int, k: int, p: float) -> float:
    """``P[Binomial(n, p) >= k]``."""
    if n <= _INTERPOLATE_UP_TO:  # exact in rationals, then rounded once
        x = Fraction(p)
        return float(
            sum(math.comb(n, j) * x**j * (1 - x) ** (n - j) for j in range(max(k, 0), n + 1))
        )
    from scipy import stats  # here: importing scipy.stats costs ~0.4 s at start-up

    return float(stats.binom.sf(k - 1, n, p))


def _majority_k(n: int, k: int, p: float) -> tuple[float, float]:
    """Exact K (and the maximising q) of ``q -> P[Binomial(n, q) >= k]`` at ``p``.

    Interpolation of degree ``n - 1`` (cubic in ``n``) for small ``n``; beyond, the
    unimodal-secant search of :func:`~.lipschitz.tail_lipschitz` (the two agree to ~1e-13).
    """
    if not 1 <= k <= n:
        return 0.0, p
    if n > _INTERPOLATE_UP_TO:
        return tail_lipschitz(n, k, p)

    def deriv(q: FloatArray) -> FloatArray:
        return n * _pmf(k - 1, n - 1, q)

    return univariate_lipschitz(secant_from_derivative(deriv, p, n - 1), n - 1)
