"""The verdict tables' faster searches give bit for bit what the plain searches gave.

The reference functions below are the searches as they were before the windows were
bracketed and the support searched with vectorized probes (one scalar ``binom.cdf`` call
per bisection step, 64 bisection steps per window end, four fix-up rounds always): the
new ones must agree with them exactly -- the same integers, the same floats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from proofgames.stochastic import _verdicts, machine_params
from proofgames.stochastic import optimal as optimal_module
from proofgames.stochastic._verdicts import (
    TAIL,
    Check,
    announcement_interval,
    pass_probability,
    passing_range,
    support,
)
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.stochastic.optimal import optimal_liar


def _first_reference(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid + 1, hi)
    return lo


def support_reference(samples: int, p: float) -> np.ndarray:
    lo = _first_reference(lambda k: float(stats.binom.cdf(k, samples, p)) > TAIL, 0, samples)
    hi = _first_reference(lambda k: float(stats.binom.sf(k, samples, p)) <= TAIL, 0, samples)
    return np.arange(lo, hi + 1, dtype=np.int64)


def interval_reference(check: Check, estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.clip(np.asarray(estimate, dtype=np.float64), 0.0, 1.0)

    def passes(bits: np.ndarray) -> np.ndarray:
        return check.passes(x, bits.view(np.float64))

    lo, hi = np.zeros(x.shape, dtype=np.int64), x.view(np.int64).copy()
    while (lo < hi).any():
        mid = lo + (hi - lo) // 2
        ok = passes(mid)
        lo, hi = np.where(ok, lo, mid + 1), np.where(ok, mid, hi)
    lower = lo.view(np.float64)
    lo, hi = x.view(np.int64).copy(), np.full(x.shape, np.float64(1.0).view(np.int64))
    while (lo < hi).any():
        mid = hi - (hi - lo) // 2
        ok = passes(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid - 1)
    return lower, lo.view(np.float64)


def range_reference(check: Check, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = check.samples
    assert n is not None
    c = np.asarray(c, dtype=np.float64)
    lo = np.ceil((c - check.threshold) * n).astype(np.int64)
    hi = np.floor((c + check.threshold) * n).astype(np.int64)
    for _ in range(4):
        lo = np.where(check.passes((lo - 1) / n, c) & (lo > 0), lo - 1, lo)
        hi = np.where(check.passes((hi + 1) / n, c) & (hi < n), hi + 1, hi)
    for _ in range(4):
        lo = np.where(~check.passes(lo / n, c) & (lo <= hi), lo + 1, lo)
        hi = np.where(~check.passes(hi / n, c) & (hi >= lo), hi - 1, hi)
    return np.clip(lo, 0, n + 1), np.clip(hi, -1, n)


def probability_reference(check: Check, p: float, c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    if check.samples is None:
        return check.passes(np.asarray(p, dtype=np.float64), c).astype(np.float64)
    lo, hi = range_reference(check, c)
    counts = support_reference(check.samples, p)
    keys = np.concatenate([[counts[0] - 1], counts])
    table = np.asarray(stats.binom.cdf(keys, check.samples, p), dtype=np.float64)

    def at(k: np.ndarray) -> np.ndarray:
        return table[np.clip(k - keys[0], 0, table.size - 1)]

    return np.where(hi >= lo, np.clip(at(hi) - at(lo - 1), 0.0, 1.0), 0.0)


SAMPLES = [1, 2, 7, 37, 200, 10_007, 105_967, 2_321_873_337]
PROBS = [0.0, 1e-12, 1e-4, 0.01, 0.3, 0.5, 0.8, 0.896, 1 - 1e-9, 1.0]


@pytest.mark.parametrize("samples", SAMPLES)
def test_the_support_is_the_one_the_scalar_bisection_found(samples: int) -> None:
    for p in PROBS:
        np.testing.assert_array_equal(support(samples, p), support_reference(samples, p))


CHECKS = [
    Check(None, 0.035), Check(None, 0.5), Check(None, 1e-12), Check(None, 0.499999),
    Check(None, 2.0), Check(None, 1e-12, inclusive=True), Check(None, 0.0, inclusive=True),
    Check(37, 3 / 37), Check(37, 3 / 37, inclusive=True), Check(200, 0.03),
    Check(105_967, 0.005), Check(2_321_873_337, 0.0123),
]  # fmt: skip


@pytest.mark.parametrize("check", CHECKS, ids=repr)
def test_windows_end_at_the_floats_the_full_bisection_found(check: Check) -> None:
    rng = np.random.default_rng(11)
    x = np.concatenate([
        [0.0, 1.0, 0.5, 1 / 3, 1e-300, 5e-324, 1 - 1e-16, check.threshold % 1.0],
        rng.random(300), rng.random(50) * 1e-6, 1 - rng.random(50) * 1e-6,
        np.arange(38) / 37, np.nextafter(np.arange(38) / 37, 2.0),
    ])  # fmt: skip
    if check.samples is not None:
        x = np.concatenate([x, support(check.samples, 0.37)[::97] / check.samples])
    new, old = announcement_interval(check, x), interval_reference(check, x)
    for a, b in zip(new, old, strict=True):
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))  # the same bits


SAMPLED = [
    pytest.param(c, marks=[pytest.mark.slow] if c.samples > 10**6 else [], id=repr(c))
    for c in CHECKS
    if c.samples is not None
]


@pytest.mark.parametrize("check", SAMPLED)
def test_passing_ranges_and_probabilities_are_bit_for_bit_the_old_ones(check: Check) -> None:
    rng = np.random.default_rng(3)
    assert check.samples is not None
    for p in (0.0, 0.01, 0.37, 0.5, 0.9, 1.0):
        lo, hi = announcement_interval(check, support(check.samples, p) / check.samples)
        c = np.concatenate([lo, hi, np.nextafter(lo, -1.0), np.nextafter(hi, 2.0),
                            rng.random(500), [0.0, 1.0, p]])  # fmt: skip
        c = c[(c >= 0) & (c <= 1)]
        for a, b in zip(passing_range(check, c), range_reference(check, c), strict=True):
            np.testing.assert_array_equal(a, b)
        new, old = pass_probability(check, p, c), probability_reference(check, p, c)
        np.testing.assert_array_equal(new.view(np.int64), old.view(np.int64))
        # an array of one p takes the general path: the same floats again
        spread = pass_probability(check, np.full(c.shape, p), c)
        np.testing.assert_array_equal(spread.view(np.int64), new.view(np.int64))


CASES = [
    ("majority:n=3,p=0.3", "lean"), ("majority:n=3,p=0.38", "paper:strict"),
    ("copy-chain:t=4,p=0.3", "lean:strict"), ("parity:n=3,p=0.1", "paper"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "pname"), CASES)
def test_the_optimal_liar_is_bit_for_bit_the_one_of_the_old_searches(
    spec: str, pname: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = make_stochastic_machine(spec)
    params = machine_params(pname, m)
    new = optimal_liar(m, params, 1)
    _verdicts._cdf.cache_clear()
    monkeypatch.setattr(_verdicts, "support", support_reference)
    monkeypatch.setattr(_verdicts, "announcement_interval", interval_reference)
    monkeypatch.setattr(optimal_module, "pass_probability", probability_reference)
    old = optimal_liar(m, params, 1)
    _verdicts._cdf.cache_clear()
    assert new.value == old.value and new.gap == old.gap
    for a, b in zip([*new.values, *new.announce], [*old.values, *old.announce], strict=True):
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))


def test_shrunk_lean_counts_give_the_same_liar_as_the_old_searches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small sample counts: windows that hold few estimates, ties on the lattice."""
    m = make_stochastic_machine("majority:n=3,p=0.38")
    for pname in ("paper", "lean"):
        params = replace(machine_params(pname, m), a_samples=9, b_samples=23, v_samples=41)
        new = optimal_liar(m, params, 1)
        with monkeypatch.context() as patch:
            patch.setattr(_verdicts, "support", support_reference)
            patch.setattr(_verdicts, "announcement_interval", interval_reference)
            patch.setattr(optimal_module, "pass_probability", probability_reference)
            old = optimal_liar(m, params, 1)
        assert new.value == old.value
        for a, b in zip(new.announce, old.announce, strict=True):
            np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
