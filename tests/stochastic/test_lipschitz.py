from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from proofgames._transcript import gates
from proofgames.errors import OracleError, ProtocolError
from proofgames.stochastic import StochasticBuilder, StochasticMachine
from proofgames.stochastic.exact import acceptance_probabilities, transition_graph
from proofgames.stochastic.lipschitz import (
    acceptance_probability,
    exact_lipschitz,
    lipschitz_bounds,
    query_count_bound,
    require_lipschitz,
    univariate_lipschitz,
)


def table(tab: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def fn(v: np.ndarray) -> np.ndarray:
        return np.asarray(tab[v @ (1 << np.arange(v.shape[1]))], dtype=np.int64)

    return fn


def two_query(p1: float, p2: float, gate: Callable[[np.ndarray], np.ndarray]) -> StochasticMachine:
    b = StochasticBuilder([p1, p2])
    b.gate(gate, [b.query(0), b.query(1)])
    return b.build("two-query")


def majority3(p: float) -> StochasticMachine:
    b = StochasticBuilder([p])
    b.gate(gates.majority, [b.query(0) for _ in range(3)])
    return b.build("majority-of-3")


def random_machine(rng: np.random.Generator, kind: str) -> StochasticMachine:
    """Random gates over ids asked once ("multilinear"), one id asked repeatedly, or coins."""
    m = int(rng.integers(1, 5)) if kind == "multilinear" else 1
    probs = rng.choice([0.0, 1.0, *rng.random(8)], size=m)
    b = StochasticBuilder(list(probs))
    pos = [b.query(i) for i in range(m)]
    if kind == "repeated":
        pos += [b.query(0) for _ in range(int(rng.integers(1, 4)))]
    if kind == "coins":
        pos += [b.coin(float(rng.random())) for _ in range(2)]
    for _ in range(int(rng.integers(2, 9))):
        rel = sorted(
            rng.choice(len(pos), size=min(int(rng.integers(1, 4)), len(pos)), replace=False)
        )
        pos.append(b.gate(table(rng.integers(0, 2, 1 << len(rel))), rel))
    return b.build(f"random-{kind}")


def brute_force_k(machine: StochasticMachine) -> float:
    """max |f(q) - f(p)| / ||q - p|| over a grid and over box vertices at many radii."""
    p = machine.probabilities
    oracle = np.flatnonzero(~machine.internal)
    grid = np.linspace(0.0, 1.0, int(5000 ** (1 / oracle.size)))
    qs = [np.array(list(itertools.product(grid, repeat=oracle.size)))]
    for signs in itertools.product((-1.0, 1.0), repeat=oracle.size):
        eps = np.geomspace(1e-5, 1.0, 400)[:, None]
        qs.append(np.clip(p[oracle] + eps * np.array(signs), 0.0, 1.0))
    q_oracle = np.vstack(qs)
    full = np.tile(p, (q_oracle.shape[0], 1))
    full[:, oracle] = q_oracle
    f = acceptance_probabilities(machine, full)
    dist = np.abs(q_oracle - p[oracle]).max(axis=1)
    ok = dist > 0
    return float((np.abs(f - acceptance_probability(machine))[ok] / dist[ok]).max())


# ----------------------------------------------------------- exact, hand-computed
def test_single_query_has_k_one() -> None:
    for p in (0.0, 0.3, 1.0):
        b = StochasticBuilder([p])
        b.query(0)
        assert exact_lipschitz(b.build("one")) == pytest.approx(1.0)


def test_majority_of_three_at_one_half_is_the_tangent_slope() -> None:
    # P = 3q^2 - 2q^3 = 1/2 + 3e/2 - 2e^3 at q = 1/2 + e: secant slope 3/2 - 2e^2, sup 3/2
    assert exact_lipschitz(majority3(0.5)) == pytest.approx(1.5, abs=1e-12)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.7, 0.95])
def test_majority_of_three_secant_maximum_by_hand(p: float) -> None:
    # secant slope from p to q: 3(q + p) - 2(q^2 + qp + p^2), maximised at q = (3 - 2p) / 4
    q = (3 - 2 * p) / 4
    expected = 3 * (q + p) - 2 * (q * q + q * p + p * p)
    assert exact_lipschitz(majority3(p)) == pytest.approx(expected, abs=1e-12)
    assert exact_lipschitz(majority3(0.7)) == pytest.approx(1.44, abs=1e-12)


def test_and_of_two_distinct_queries_peaks_at_the_far_vertex() -> None:
    # q1 q2 at (1/2 + e)^2: slope 1 + e up to e = 1/2; downwards slope 1 - e
    assert exact_lipschitz(two_query(0.5, 0.5, gates.AND)) == pytest.approx(1.5, abs=1e-12)


def test_xor_of_two_distinct_queries_at_one_half() -> None:
    # f - 1/2 = -2 (q1 - 1/2)(q2 - 1/2): |df| / e = 2e, largest at e = 1/2
    assert exact_lipschitz(two_query(0.5, 0.5, gates.XOR)) == pytest.approx(1.0, abs=1e-12)


def test_parity_of_one_question_asked_twice() -> None:
    # f = 2q(1 - q); secant slope 2(1 - q - p); at p = 0.3 largest at q = 0: 1.4
    b = StochasticBuilder([0.3])
    b.gate(gates.XOR, [b.query(0), b.query(0)])
    assert exact_lipschitz(b.build("parity-2")) == pytest.approx(1.4, abs=1e-12)


def test_machine_ignoring_the_oracle_has_k_zero() -> None:
    b = StochasticBuilder([0.6])
    b.gate(lambda v: np.ones(v.shape[0], dtype=np.int64), [b.query(0)])
    m = b.build("ignores-oracle", lipschitz=0.0)
    assert exact_lipschitz(m) == 0.0
    assert lipschitz_bounds(m).exact and lipschitz_bounds(m).upper == 0.0
    assert lipschitz_bounds(m, exact=False).upper == 0.0  # every influence is 0
    with pytest.raises(ProtocolError, match=r"needs K > 0, got K = 0\.0.*ignores the oracle"):
        require_lipschitz(m)


def test_machine_without_queries_has_k_zero() -> None:
    b = StochasticBuilder([])
    b.gate(lambda v: np.zeros(v.shape[0], dtype=np.int64))
    m = b.build("no-queries")
    assert exact_lipschitz(m) == 0.0
    assert query_count_bound(m) == 0
    assert acceptance_probability(m) == 0.0


def test_internal_coins_are_not_perturbed() -> None:
    # output = coin AND answer with a fair coin: P = q / 2, so K = 1/2 (not 1)
    b = StochasticBuilder([0.4])
    coin = b.coin(0.5)
    b.gate(gates.AND, [coin, b.query(0)])
    m = b.build("coin-and-query")
    assert exact_lipschitz(m) == pytest.approx(0.5)
    assert acceptance_probability(m) == pytest.approx(0.2)
    bounds = lipschitz_bounds(m, exact=False)
    assert bounds.lower == pytest.approx(0.5) and bounds.upper >= 0.5 - 1e-12
    assert query_count_bound(m) == 1


# ----------------------------------------------------------------- bounds
@pytest.mark.parametrize("kind", ["multilinear", "repeated", "coins"])
def test_lower_bound_exact_upper_bound_on_random_machines(kind: str) -> None:
    rng = np.random.default_rng(2024)
    for _ in range(25):
        m = random_machine(rng, kind)
        k = exact_lipschitz(m)
        bounds = lipschitz_bounds(m, exact=False, seed=1)
        assert not bounds.exact and bounds.lower_method == "search"
        assert bounds.lower <= k + 1e-9 <= bounds.upper + 2e-9
        assert k <= query_count_bound(m) + 1e-9
        assert k - bounds.lower <= 0.05 * k + 1e-9  # the search gets close on small machines


def test_exact_agrees_with_brute_force_search() -> None:
    rng = np.random.default_rng(7)
    for kind in ("multilinear", "repeated", "coins") * 4:
        m = random_machine(rng, kind)
        k, brute = exact_lipschitz(m), brute_force_k(m)
        assert brute <= k + 1e-9
        assert k - brute <= 0.02 * max(k, 1.0)


def test_bounds_report_exact_when_available() -> None:
    bounds = lipschitz_bounds(majority3(0.5))
    assert bounds.exact and bounds.lower == bounds.upper == pytest.approx(1.5)
    assert (bounds.lower_method, bounds.upper_method) == ("exact", "exact")


def test_query_count_bound_skips_steps_the_output_ignores() -> None:
    b = StochasticBuilder([0.5, 0.5])
    b.query(0)  # never read
    a = b.query(1)
    b.gate(gates.NOT, [a])
    assert query_count_bound(b.build("ignored-first")) == 1


def test_too_many_states_falls_back_to_the_query_count_bound() -> None:
    b = StochasticBuilder([0.5] * 12)
    votes = [b.query(i) for i in range(12)]
    b.gate(gates.XOR, votes)
    m = b.build("wide")
    with pytest.raises(ProtocolError, match=r"reachable states .* exceed max_states = 64"):
        acceptance_probability(m, max_states=64)
    bounds = lipschitz_bounds(m.with_probabilities([0.5] * 12), max_states=64)
    assert (bounds.lower, bounds.upper, bounds.upper_method) == (0.0, 12.0, "query-count")


def test_exact_refuses_many_ids_and_repeated_ids() -> None:
    b = StochasticBuilder([0.3, 0.6, 0.8])
    b.gate(gates.majority, [b.query(0), b.query(1), b.query(2)])
    with pytest.raises(ProtocolError, match="m = 3 oracle ids > max_ids = 2"):
        exact_lipschitz(b.build("three-ids"), max_ids=2)
    b = StochasticBuilder([0.3, 0.6])
    b.gate(gates.majority, [b.query(0), b.query(0), b.query(1)])
    with pytest.raises(ProtocolError, match="query 0 is asked by 2 steps"):
        exact_lipschitz(b.build("repeated"))


def test_require_lipschitz_rejects_missing_and_nonpositive_constants() -> None:
    for k, message in ((None, "no Lipschitz constant is known"), (-1.0, "needs K > 0")):
        b = StochasticBuilder([0.5])
        b.query(0)
        with pytest.raises(ProtocolError, match=message):
            require_lipschitz(b.build("m", lipschitz=k))
    b = StochasticBuilder([0.5])
    b.query(0)
    assert require_lipschitz(b.build("m", lipschitz=2)) == 2.0


# ------------------------------------------------------- acceptance probability
def test_acceptance_probability_matches_closed_forms() -> None:
    assert acceptance_probability(two_query(0.3, 0.6, gates.AND)) == pytest.approx(0.18)
    assert acceptance_probability(two_query(0.3, 0.6, gates.OR)) == pytest.approx(0.72)
    assert acceptance_probability(majority3(0.7)) == pytest.approx(3 * 0.49 - 2 * 0.343)
    assert acceptance_probability(majority3(0.7), [0.2]) == pytest.approx(3 * 0.04 - 2 * 0.008)


def test_acceptance_probability_rejects_bad_probabilities() -> None:
    with pytest.raises(OracleError, match=r"must lie in \[0, 1\]"):
        acceptance_probability(majority3(0.5), [1.2])
    with pytest.raises(OracleError, match="length 1"):
        acceptance_probabilities(majority3(0.5), [[0.1, 0.2]])


def test_difference_is_the_exact_secant_slope() -> None:
    m = two_query(0.4, 0.7, gates.AND)
    graph = transition_graph(m)
    q = np.array([[0.5, 0.5], [0.4, 0.7]])
    d = np.array([[1.0, -2.0], [1.0, 0.0]])
    got = graph.difference(q, d)
    assert got[0] == pytest.approx((0.25 - 0.28) / 0.1)  # q = p + 0.1 d
    assert got[1] == pytest.approx(0.7)  # directional derivative at p along e_1


def test_univariate_helper_finds_an_interior_maximum() -> None:
    def secant(q: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 - 4.0 * (q - 0.3) ** 2)

    value, at = univariate_lipschitz(secant, 2)
    assert value == pytest.approx(1.0) and at == pytest.approx(0.3)  # not |1 - 4(0.7)^2|
