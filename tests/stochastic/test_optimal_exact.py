"""The optimal adversaries are exact: checked against independent brute force and fine grids."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from proofgames import ProtocolError
from proofgames.experiments.montecarlo import clopper_pearson_interval
from proofgames.protocols import play_stochastic_batch
from proofgames.stochastic import StochasticBuilder, lean_params, paper_params, resolve_params
from proofgames.stochastic._verdicts import (
    TAIL,
    Check,
    announcement_interval,
    breakpoints,
    pass_probability,
)
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.stochastic.optimal import (
    liar_policy_value,
    optimal_disputer,
    optimal_liar,
    verdict_probabilities,
)
from proofgames.strategies import make_strategy

AUDIT = "audit:n=4,r=1,p=0.5,spread=0.5,seed=3"


def brute_pass(n: int | None, thr: float, p: float, c: np.ndarray) -> np.ndarray:
    """P[|X/n - c| < thr] summed over every count X (the exact p when n is None)."""
    if n is None:
        return (np.abs(p - c) < thr).astype(float)
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x, n, p)
    keep = pmf > 1e-22
    inside = np.abs(x[keep, None] / n - c[None, :]) < thr
    return pmf[keep] @ inside


def brute_liar(machine, params, claim: int, coins_known: bool, grid: int = 1501) -> float:
    """Backward induction with each history's announcement searched on a dense grid."""
    steps = machine.length
    nxt = (((np.arange(1 << steps) >> (steps - 1)) & 1) == claim).astype(float)
    for t in range(steps - 1, -1, -1):
        h = np.arange(1 << t)
        bits = (h[:, None] >> np.arange(t)) & 1
        rel = list(machine.relevant(t))
        values = bits[:, rel] if rel else np.zeros((h.size, 0), int)
        p_all = machine.probability_batch(t, values)
        coin = machine.internal_batch(t, values)
        out = np.empty(h.size)
        for i in h:
            p = float(p_all[i])
            c = np.unique(np.clip(np.concatenate([
                np.linspace(0, 1, grid), p + np.linspace(-1.5, 1.5, grid) * params.b_threshold,
            ]), 0, 1))  # fmt: skip
            known = not machine.is_query(t) or (coin[i] and coins_known)
            n_b, n_v = (None, None) if known else (params.b_samples, params.v_samples)
            stay = brute_pass(n_b, params.b_threshold, p, c)
            accept = brute_pass(n_v, params.v_threshold, p, c)
            cont = nxt[i] + c * (nxt[i | (1 << t)] - nxt[i])
            out[i] = np.max((1 - stay) * accept + stay * cont)
        nxt = out
    return float(nxt[0])


def majority3(p: float):
    b = StochasticBuilder([p])
    v = [b.query(0) for _ in range(3)]
    b.gate(lambda x: (x.sum(axis=1) >= 2).astype(np.int64), relevant=v)
    return b.build(f"majority-3:p={p}", lipschitz=1.5, p_accept=3 * p**2 - 2 * p**3)


# ------------------------------------------------------------------ the verdicts themselves
@pytest.mark.parametrize("inclusive", [False, True])
def test_verdict_probabilities_are_the_protocols_comparisons_summed_over_every_count(inclusive):
    rng = np.random.default_rng(5)
    n, thr, p = 37, 3 / 37, 0.41  # a threshold on the estimates' lattice: ties everywhere
    check = Check(n, thr, inclusive)
    c = np.concatenate([rng.random(200), np.arange(n + 1) / n + thr, np.arange(n + 1) / n - thr])
    c = c[(c >= 0) & (c <= 1)]
    x = np.arange(n + 1)
    gap = np.abs(x[:, None] / n - c[None, :])
    brute = stats.binom.pmf(x, n, p) @ (gap <= thr if inclusive else gap < thr)
    np.testing.assert_allclose(pass_probability(check, p, c), brute, atol=1e-15)


@pytest.mark.parametrize("thr", [0.035, 0.5, 1e-12])
def test_each_window_ends_at_the_last_float_the_comparison_passes(thr):
    check = Check(None, thr)
    x = np.array([0.0, 0.3, 0.5, 0.965, 1.0, 1 / 3, 1e-300])
    lo, hi = announcement_interval(check, x)
    assert check.passes(x, lo).all() and check.passes(x, hi).all()
    inside = (lo > 0) & (hi < 1)  # a window's end is 0 or 1 where it reaches past them
    assert not check.passes(x, np.nextafter(lo, -np.inf))[lo > 0].any()
    assert not check.passes(x, np.nextafter(hi, np.inf))[hi < 1].any()
    assert inside.any()


def test_verdicts_are_constant_between_consecutive_breakpoints():
    rng = np.random.default_rng(2)
    check, p = Check(200, 0.03), 0.37
    points = np.unique(np.concatenate([[0.0, 1.0], breakpoints(check, p)]))
    inner = points[:-1] + rng.random(points.size - 1) * np.diff(points)
    last = np.nextafter(points[1:], -np.inf)  # the last float before the next breakpoint
    gaps = (inner > points[:-1]) & (inner < points[1:])  # gaps holding a float strictly inside
    assert gaps.sum() > 100
    # no step strictly inside a gap, but for counts beyond the listed tails (mass <= TAIL)
    np.testing.assert_allclose(
        pass_probability(check, p, inner[gaps]),
        pass_probability(check, p, last[gaps]),
        rtol=0,
        atol=2 * TAIL,
    )


def test_a_step_mixing_coins_and_oracle_answers_needs_its_rows_marked():
    b = StochasticBuilder([0.3])
    coin = b.coin()
    b.query(lambda v: np.where(v[:, 0] == 1, 1, 0), relevant=[coin])  # id 1: the coin itself
    m = b.build("mixed")
    params = lean_params(1.0, m.length)
    with pytest.raises(ProtocolError, match="internal coin at some histories"):
        verdict_probabilities(m, params, 1, np.array([0.3]), np.array([0.3]))
    aborts, accept = verdict_probabilities(
        m, params, 1, np.array([0.5, 0.3]), np.array([0.52, 0.33]), known=np.array([True, False])
    )
    assert aborts[0] == 0.0 and accept[0] == 0.0  # a known 0.5: 0.02 is inside B's window only
    assert 0.0 < aborts[1] < 1.0


# ------------------------------------------------------------------ the liar
CASES = [
    ("majority3:0.3", "lean"),
    ("majority3:0.3", "paper"),
    ("majority:n=3,p=0.38", "lean:strict"),
    (AUDIT, "lean"),
]


def build(spec: str):
    return majority3(0.3) if spec == "majority3:0.3" else make_stochastic_machine(spec)


@pytest.mark.parametrize(("spec", "pname"), CASES)
def test_the_exact_liar_beats_every_grid_and_a_fine_grid_comes_close(spec, pname):
    m = build(spec)
    params = resolve_params(pname, 1.5, m.length)
    exact = optimal_liar(m, params, 1)
    assert exact.label == "exact" and exact.gap is not None and exact.gap < 1e-12
    for grid in (11, 401, 4001):
        coarse = optimal_liar(m, params, 1, grid, method="grid")
        assert "lower bound" in coarse.label
        assert coarse.value <= exact.value + 1e-15
    fine = optimal_liar(m, params, 1, 40001, method="grid")
    assert exact.value - fine.value <= 2e-5


@pytest.mark.parametrize(("spec", "pname"), CASES)
def test_the_exact_liar_attains_its_value_with_the_announcements_it_returns(spec, pname):
    m = build(spec)
    params = resolve_params(pname, 1.5, m.length)
    policy = optimal_liar(m, params, 1)
    assert liar_policy_value(m, params, 1, policy.announce) == pytest.approx(
        policy.value, abs=1e-14
    )


def test_the_exact_liar_matches_independent_brute_force_on_majority():
    m = majority3(0.3)
    params = lean_params(1.5, m.length)
    exact = optimal_liar(m, params, 1).value
    brute = brute_liar(m, params, 1, coins_known=True)
    assert brute <= exact + 1e-12
    assert exact - brute <= 1e-4


def test_the_optimal_liar_treats_internal_coins_as_known_as_the_protocol_does():
    m = make_stochastic_machine(AUDIT)  # two fair internal coins pick the item judged
    params = lean_params(1.0, m.length)
    policy = optimal_liar(m, params, 1)
    known = brute_liar(m, params, 1, coins_known=True)
    sampled = brute_liar(m, params, 1, coins_known=False)
    # V and honest B know a coin's bias exactly: shading it up to B's threshold is free, and
    # is worth much more than the old model (coins sampled) allowed
    assert sampled + 0.005 < known <= policy.value + 1e-12
    assert policy.value - known <= 1e-4
    coin_check = Check(None, params.b_threshold)
    for t in (0, 1):  # the coins' announcements sit on the last float of B's window
        c, half = policy.announce[t], np.full(policy.announce[t].shape, 0.5)
        assert coin_check.passes(half, c).all()
        outward = np.nextafter(c, np.where(c > 0.5, np.inf, -np.inf))
        assert not coin_check.passes(half, outward).any()
    res = play_stochastic_batch(
        m, params, 1, make_strategy("stochastic", "A", "optimal"),
        make_strategy("stochastic", "B", "honest"), debates=40_000, seed=23,
    )  # fmt: skip
    lo, hi = clopper_pearson_interval(int(res.verdicts.sum()), res.debates, 0.9999)
    assert lo <= policy.value <= hi


# ------------------------------------------------------------------ the disputer
@pytest.mark.parametrize("family", [lean_params, paper_params])
def test_the_exact_disputer_matches_a_sum_over_every_estimate(family):
    b = StochasticBuilder([0.7])
    b.query(0)
    m = b.build("single-query:p=0.7", lipschitz=1.0, p_accept=0.7)
    params = family(1.0, 1)
    exact = optimal_disputer(m, params, 1)
    r = params.a_samples
    sd = (r * 0.21) ** 0.5  # counts beyond 15 sd carry far less than 1e-40
    x = np.arange(max(0, int(0.7 * r - 15 * sd)), min(r, int(0.7 * r + 15 * sd)) + 1)
    pmf = stats.binom.pmf(x, r, 0.7)
    x, pmf = x[pmf > 1e-22], pmf[pmf > 1e-22]
    accept = pass_probability(Check(params.v_samples, params.v_threshold), 0.7, x / r)
    coin = x / r  # the bit is 1 w.p. A's announcement; continuing wins iff it is
    if params.coin == "external":
        brute = pmf @ np.minimum(accept, coin)
    else:
        brute = pmf @ (coin * np.minimum(accept, 1.0) + (1 - coin) * np.minimum(accept, 0.0))
    assert exact.value == pytest.approx(brute, abs=1e-13)
    approx = optimal_disputer(m, params, 1, 64, method="quantiles")
    assert "approximation" in approx.label and abs(approx.value - exact.value) < 1e-2
