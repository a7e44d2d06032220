"""Stochastic machine specs: every parameter range-checked, sizes refused before building."""

from __future__ import annotations

import time

import numpy as np
import pytest

from proofgames.errors import MachineFormatError, ProofgamesError
from proofgames.stochastic import StochasticBuilder
from proofgames.stochastic import machines as machines_module
from proofgames.stochastic.exact import _unique_rows
from proofgames.stochastic.lipschitz import (
    lipschitz_bounds,
    secant_from_derivative,
    univariate_lipschitz,
)
from proofgames.stochastic.machines import make_stochastic_machine

TOO_LARGE = {
    "majority:n=100000": "majority of 100,000 votes (~n^2/2 steps) makes 5,000,099,999 steps",
    "majority:n=447": "makes 100,351 steps",
    "copy-chain:t=100000000": "copy-chain makes 100,000,000 steps",
    "long-computation:t=100000000": "long-computation makes 100,000,000 steps",
    "parity:n=1000000": "parity of 1,000,000 answers makes 1,999,999 steps",
    "all-pass:n=1000000": "all-pass of 1,000,000 checks makes 1,999,999 steps",
    "screening:n=3000": "screening of 3,000 studies (~n^2/4 steps) makes 3,404,113 steps",
    "screening:n=10000000000": "screening of 10,000,000,000 studies makes at least",
    "audit:n=1099511627776": "makes 1,099,511,627,776 oracle queries",
    "audit:n=8,r=3000": "audit of r = 3,000 judged items makes 4,511,999 steps",
}


@pytest.mark.parametrize("spec", list(TOO_LARGE))
def test_machines_over_the_step_limit_are_refused_at_once(spec: str) -> None:
    start = time.perf_counter()
    with pytest.raises(MachineFormatError) as info:
        make_stochastic_machine(spec)
    assert time.perf_counter() - start < 1.0
    message = str(info.value)
    assert message.startswith(f"{spec!r}: too large: ") and TOO_LARGE[spec] in message
    assert "over the limit max_steps = 100,000; raise max_steps" in message


def test_max_steps_raises_and_lowers_the_limit() -> None:
    m = make_stochastic_machine("majority:n=21")
    assert make_stochastic_machine("majority:n=21", max_steps=m.length).length == m.length
    with pytest.raises(MachineFormatError, match="max_steps = 10;"):
        make_stochastic_machine("majority:n=21", max_steps=10)
    big = make_stochastic_machine("copy-chain:t=100001", max_steps=100_001)
    assert big.length == 100_001
    # the limit is restored afterwards, also after a refusal
    with pytest.raises(MachineFormatError, match="max_steps = 100,000"):
        make_stochastic_machine("copy-chain:t=100001")


@pytest.mark.parametrize("bad", [0, -5, True, 2.5])
def test_max_steps_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(MachineFormatError, match="max_steps must be a positive integer"):
        make_stochastic_machine("single-query", max_steps=bad)  # type: ignore[arg-type]


SPECS = [
    *(f"majority:n={n}" for n in (1, 2, 3, 4, 5, 8, 13, 30)),
    *(f"parity:n={n}" for n in (1, 2, 7)),
    *(f"all-pass:n={n}" for n in (1, 4)),
    *(f"copy-chain:t={t}" for t in (1, 2, 50)),
    *(
        f"screening:n={n},k={k},seed={s}"
        for n in (1, 3, 7, 12)
        for k in (-n, -1, 0, 1, n)
        for s in (0, 3)
    ),
    "screening:n=6,k=2,effects=------",
    "screening:n=6,k=-2,effects=++++++",
    *(f"audit:n={n},r={r}" for n in (1, 2, 8) for r in (1, 2, 3, 6)),
    *(f"long-computation:t={t},votes={v}" for t, v in ((10, 1), (40, 3), (200, 7))),
]


@pytest.mark.parametrize("spec", SPECS)
def test_the_size_estimate_is_the_exact_step_count(spec: str) -> None:
    m = make_stochastic_machine(spec)
    items = m.probabilities.size - 1 if spec.startswith("audit") else 0  # also limited
    limit = max(m.length, items)
    assert make_stochastic_machine(spec, max_steps=limit).length == m.length
    if m.length > max(1, items):
        with pytest.raises(MachineFormatError, match=f"makes {m.length:,} steps"):
            make_stochastic_machine(spec, max_steps=m.length - 1)


@pytest.mark.parametrize("n", range(0, 26))
@pytest.mark.parametrize("shift", [-2, 0, 1, 2, 5])
def test_counter_step_formula_matches_a_dry_run(n: int, shift: int) -> None:
    if n == 0:
        return
    k = n // 2 + shift
    b = StochasticBuilder([0.5])
    counter = machines_module._Counter(b, n, k)
    for _ in range(n):
        counter.feed(b.query(0))
    counter.result()
    assert machines_module._counter_steps(n, k) == len(b) - n


RANGES = {
    "screening:n=5,k=6": "k = 6 must lie in [-n, n] = [-5, 5]",
    "screening:n=5,k=-6": "k = -6 must lie in [-n, n]",
    "screening-panel:n=13": "n = 13 must be at most 12",
    "screening-panel:n=100000": "n = 100000 must be at most 12",
    "screening-panel:seed=-1": "seed = -1 must be at least 0",
    "screening-panel:spread=-1": "spread = -1.0 must be a number >= 0",
    "audit:n=6": "n = 6 must be a power of two",
    "long-computation:t=30,votes=31": "t = 30 is too short: 31 votes need t > 31",
    "long-computation:t=30,votes=30": "t = 30 is too short: 30 votes need t >= 482",
    "majority:n=0": "n = 0 must be at least 1",
    "majority:p=1.5": "p = 1.5 is a probability",
}


@pytest.mark.parametrize("spec", list(RANGES))
def test_parameters_out_of_range_are_refused_naming_them(spec: str) -> None:
    with pytest.raises(MachineFormatError) as info:
        make_stochastic_machine(spec)
    assert str(info.value).startswith(f"{spec!r}: ") and RANGES[spec] in str(info.value)
    assert isinstance(info.value, ProofgamesError)


# ------------------------------------------------------------------ the quadratic costs
def test_large_majority_builds_in_linear_time_per_step_with_exact_k(monkeypatch) -> None:
    # On c5c9194 K alone took 20 s at n = 3000 (degree n - 1 interpolation, cubic in n):
    # a large n must not take that path (shown by taking it away, not by a clock).
    from proofgames.stochastic import _machine_parts

    def cubic(*args: object) -> None:
        raise AssertionError("the degree n - 1 interpolation ran for a large n")

    monkeypatch.setattr(_machine_parts, "univariate_lipschitz", cubic)
    k, at = machines_module._majority_k(3000, 1501, 0.6)
    assert k == pytest.approx(8.29274195040605, rel=1e-10) and 0.48 < at < 0.49
    m = make_stochastic_machine("majority:n=400,p=0.55")
    assert m.lipschitz_exact and m.length == 80_399


@pytest.mark.parametrize("n", [65, 90])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.62, 1.0])
def test_closed_form_k_agrees_with_exact_interpolation(n: int, p: float) -> None:
    from scipy import stats

    for k in (1, n // 3, n // 2 + 1, n):

        def deriv(q: np.ndarray, k: int = k) -> np.ndarray:
            return np.asarray(n * stats.binom.pmf(k - 1, n - 1, q), dtype=np.float64)

        exact = univariate_lipschitz(secant_from_derivative(deriv, p, n - 1), n - 1)[0]
        assert machines_module._majority_k(n, k, p)[0] == pytest.approx(exact, rel=1e-11)

    def pderiv(q: np.ndarray) -> np.ndarray:
        return np.asarray(n * (1.0 - 2.0 * q) ** (n - 1), dtype=np.float64)

    exact = univariate_lipschitz(secant_from_derivative(pderiv, p, n - 1), n - 1)[0]
    assert make_stochastic_machine(f"parity:n={n},p={p}").lipschitz == pytest.approx(
        exact, rel=1e-11
    )


@pytest.mark.parametrize("n", [13, 20, 31])
@pytest.mark.parametrize("k", [-3, 0, 1, 4])
def test_screening_influence_bound_equals_the_transition_graphs(n: int, k: int) -> None:
    m = make_stochastic_machine(f"screening:n={n},k={k},seed={n}")
    assert m.lipschitz == pytest.approx(lipschitz_bounds(m, exact=False).upper, abs=1e-12)


def test_wide_unique_rows_match_numpy_unique() -> None:
    rng = np.random.default_rng(0)
    for width in (63, 64, 65, 130, 200):
        base = rng.integers(0, 2, (30, width)).astype(np.int8)
        rows = base[rng.integers(0, 30, 500)]
        uniq, inverse = _unique_rows(rows)
        ref, ref_inverse = np.unique(rows, axis=0, return_inverse=True)
        assert (uniq == ref).all() and (inverse == ref_inverse.reshape(-1)).all()
