"""The every-step Lipschitz constant (the theorem's hypothesis) and the bounds labelled by it."""

from __future__ import annotations

import numpy as np
import pytest

from proofgames import ProtocolError
from proofgames.experiments.montecarlo import estimate_acceptance
from proofgames.stochastic import StochasticBuilder
from proofgames.stochastic.hypothesis import (
    K_DEFINITIONS,
    guarantee,
    hypothesis_lipschitz,
    hypothesis_status,
    machine_params,
    step_lipschitz_bounds,
)
from proofgames.stochastic.machines import make_stochastic_machine


def perturbed_acceptance(machine, shift: dict[int, np.ndarray]) -> float:
    """P[M=1] when step t at full prefix h has probability clip(p + shift[t][h]) (brute force)."""
    steps = machine.length
    value = ((np.arange(1 << steps) >> (steps - 1)) & 1).astype(float)  # each one's last bit
    for t in range(steps - 1, -1, -1):
        h = np.arange(1 << t)
        bits = (h[:, None] >> np.arange(t)) & 1
        rel = list(machine.relevant(t))
        p = machine.probability_batch(t, bits[:, rel] if rel else np.zeros((h.size, 0), int))
        q = np.clip(p + shift[t], 0.0, 1.0)
        value = (1 - q) * value[h] + q * value[h | (1 << t)]
    return float(value[0])


@pytest.mark.parametrize("p", [0.3, 0.45, 0.8])
@pytest.mark.parametrize("t", [1, 4, 9])
def test_copy_chain_every_step_k_matches_its_closed_form(t, p):
    # shading each copy toward the likelier loss: f'(0) = 1 + max(p, 1 - p)(t - 1), and the
    # ratio f(eps)/eps only falls as eps grows (f is concave), so that is K
    m = make_stochastic_machine(f"copy-chain:t={t},p={p}")
    bounds = step_lipschitz_bounds(m)
    exact = 1 + max(p, 1 - p) * (t - 1)
    assert bounds.lower <= exact * (1 + 1e-9)
    assert exact <= bounds.upper <= exact * (1 + 2e-6)


@pytest.mark.parametrize(
    "spec",
    ["majority:n=3,p=0.38", "parity:n=3,p=0.1", "audit:n=4,r=1,p=0.5,spread=0.5,seed=3"],
)
def test_no_perturbation_of_any_step_beats_the_upper_bound(spec):
    m = make_stochastic_machine(spec)
    bounds = step_lipschitz_bounds(m)
    base = perturbed_acceptance(m, {t: np.zeros(1 << t) for t in range(m.length)})
    rng = np.random.default_rng(7)
    worst = 0.0
    for eps in np.geomspace(1e-4, 1.0, 25):
        for _ in range(40):
            shift = {t: eps * rng.choice([-1.0, 1.0], 1 << t) for t in range(m.length)}
            worst = max(worst, abs(perturbed_acceptance(m, shift) - base) / eps)
    assert worst <= bounds.upper * (1 + 1e-12)
    assert bounds.lower <= bounds.upper <= bounds.lower * (1 + 2e-6)
    assert bounds.upper >= m.lipschitz - 1e-9  # every step includes the oracle's


@pytest.mark.slow
def test_both_bounds_agree_with_every_vertex_perturbation_of_a_tiny_machine():
    # T = 3 steps, 7 histories: P' is multilinear in the 7 probabilities, so for each eps its
    # extremes sit at the 2^7 vertices clip(p +- eps) -- enumerated here
    m = make_stochastic_machine("audit:n=4,r=1,p=0.5,spread=0.5,seed=3")
    bounds = step_lipschitz_bounds(m)
    base = perturbed_acceptance(m, {t: np.zeros(1 << t) for t in range(m.length)})
    signs = ((np.arange(128)[:, None] >> np.arange(7)) & 1) * 2.0 - 1.0
    best = 0.0
    for eps in np.geomspace(1e-6, 1.0, 300):
        for s in signs:
            shift = {0: eps * s[:1], 1: eps * s[1:3], 2: eps * s[3:7]}
            best = max(best, abs(perturbed_acceptance(m, shift) - base) / eps)
    assert best <= bounds.upper * (1 + 1e-12)
    assert best >= bounds.lower * (1 - 1e-4)


def test_a_machine_too_large_to_enumerate_gets_the_step_count_bound():
    m = make_stochastic_machine("majority:n=9,p=0.5")
    bounds = step_lipschitz_bounds(m, max_states=4)
    assert bounds.upper_method == "step-count" and bounds.upper == m.length
    assert bounds.lower == pytest.approx(m.lipschitz)


def test_oracle_definition_is_the_papers_k_and_unknown_definitions_are_refused():
    m = make_stochastic_machine("majority:n=3,p=0.38")
    assert hypothesis_lipschitz(m, "oracle") == m.lipschitz
    assert hypothesis_lipschitz(m) > 2 * m.lipschitz  # the counting gates can be shaded too
    with pytest.raises(ProtocolError, match="K definition"):
        hypothesis_lipschitz(m, "both")


def test_params_derived_for_a_machine_are_labelled_with_their_k():
    m = make_stochastic_machine("copy-chain:t=4,p=0.3")
    step = machine_params("lean", m)
    oracle = machine_params("paper:strict", m, "oracle")
    assert step.k_definition == K_DEFINITIONS["step"] and step.k >= 1 + 0.7 * 3
    assert oracle.k_definition == K_DEFINITIONS["oracle"] and oracle.k == 1.0
    assert oracle.strict_deterministic and oracle.name == "paper:strict"
    assert hypothesis_status(m, step.k) == "holds"
    assert hypothesis_status(m, oracle.k) == "fails"
    bounds = step_lipschitz_bounds(m)
    if bounds.upper > bounds.lower:
        assert hypothesis_status(m, (bounds.lower + bounds.upper) / 2) == "unverified"


def test_a_bound_is_proven_only_where_the_hypothesis_holds():
    m = make_stochastic_machine("majority:n=3,p=0.38")
    for definition, status in (("step", "holds"), ("oracle", "fails")):
        params = machine_params("lean", m, definition)
        g = guarantee(m, params, claim=1)
        assert g.hypothesis == status
        assert g.formula == pytest.approx(params.proven_soundness(m.p_accept))
        assert g.proven == (g.formula if status == "holds" else None)
    middle = guarantee(make_stochastic_machine("majority:n=3,p=0.5"), params, claim=1)
    assert middle.formula is None and middle.proven is None  # no claim between 1/3 and 2/3


def test_estimates_use_the_every_step_k_by_default_and_label_the_oracle_one():
    spec = "majority:n=3,p=0.38"
    default = estimate_acceptance(spec, "lean", 1, "evade", "honest", debates=200, seed=3)
    paper = estimate_acceptance(spec, "lean", 1, "evade", "honest", debates=200, seed=3,
                                k_definition="oracle")  # fmt: skip
    assert default.k_definition == K_DEFINITIONS["step"] and default.hypothesis == "holds"
    assert default.proven is not None and default.proven == default.formula_bound
    assert paper.k_definition == K_DEFINITIONS["oracle"] and paper.hypothesis == "fails"
    assert paper.proven is None and paper.formula_bound is not None
    assert default.params["k"] > paper.params["k"]


def test_a_machine_without_an_oracle_k_is_debated_with_its_every_step_k():
    b = StochasticBuilder([0.5])
    b.query(0)
    m = b.build("unknown-k", p_accept=0.5)
    est = estimate_acceptance(m, "lean", 1, "honest", "honest", debates=50)
    assert est.params["k"] == pytest.approx(1.0) and est.hypothesis == "holds"
    with pytest.raises(ProtocolError, match="no known Lipschitz constant"):
        estimate_acceptance(m, "lean", 1, "honest", "honest", debates=50, k_definition="oracle")


def test_a_witness_problem_takes_the_largest_every_step_k_over_its_witnesses():
    from proofgames.protocols.stochastic_witness import PanelChoice
    from proofgames.stochastic.hypothesis import witness_hypothesis_lipschitz

    problem = PanelChoice((0.2, 0.9, 0.4))
    ks = [hypothesis_lipschitz(problem.machine(w)) for w in problem.candidates()]
    assert witness_hypothesis_lipschitz(problem) == max(ks)
    assert max(ks) >= problem.lipschitz  # the oracle-only K it derives its params from today
