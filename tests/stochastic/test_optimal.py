"""The optimal adversary on tiny instances: within the theorem, and stronger than heuristics."""

from __future__ import annotations

import numpy as np
import pytest

from proofgames import ProtocolError
from proofgames.experiments.montecarlo import clopper_pearson_interval
from proofgames.protocols import play_stochastic_batch
from proofgames.stochastic import StochasticBuilder, lean_params, paper_params
from proofgames.stochastic.optimal import optimal_disputer, optimal_liar
from proofgames.strategies import make_strategy, strategy_names


def majority3(p: float):
    b = StochasticBuilder([p])
    v = [b.query(0) for _ in range(3)]
    b.gate(lambda x: (x.sum(axis=1) >= 2).astype(np.int64), relevant=v)
    return b.build(f"majority-3:p={p}", lipschitz=1.5, p_accept=3 * p**2 - 2 * p**3)


PARAMS = {"lean": lean_params, "paper": paper_params}


@pytest.mark.parametrize("name", ["lean", "paper"])
@pytest.mark.parametrize("p", [0.2, 0.3])
def test_optimal_liar_stays_within_the_theorem_and_beats_every_heuristic(name, p):
    m = majority3(p)
    params = PARAMS[name](1.5, m.length)
    best = optimal_liar(m, params, claim=1)
    assert best.value <= params.proven_soundness(m.p_accept) + 1e-9
    assert best.value >= m.p_accept - 1e-9  # telling the truth is one of its options
    for a in strategy_names("stochastic", "A"):
        res = play_stochastic_batch(
            m,
            params,
            1,
            make_strategy("stochastic", "A", a),
            make_strategy("stochastic", "B", "honest"),
            debates=4000,
            seed=11,
        )
        # a 99.99% interval: a dozen strategies x four cases must not fail by chance
        lo, hi = clopper_pearson_interval(int(res.verdicts.sum()), res.debates, 0.9999)
        assert lo <= best.value + 1e-9, (a, res.acceptance, best.value)
        if a == "optimal":  # playing the policy achieves the computed value
            assert lo <= best.value <= hi


@pytest.mark.parametrize("name", ["lean", "paper"])
def test_optimal_disputer_cannot_break_completeness(name):
    m = majority3(0.8)
    params = PARAMS[name](1.5, m.length)
    worst = optimal_disputer(m, params, claim=1)
    assert worst.value >= params.proven_completeness(m.p_accept) - 1e-9
    res = play_stochastic_batch(
        m,
        params,
        1,
        make_strategy("stochastic", "A", "honest"),
        make_strategy("stochastic", "B", "optimal"),
        debates=4000,
        seed=2,
    )
    lo, hi = clopper_pearson_interval(int(res.verdicts.sum()), res.debates, 0.9999)
    assert lo - 0.01 <= worst.value <= hi + 0.01


def test_optimal_adversary_refuses_long_machines():
    b = StochasticBuilder([0.5])
    for _ in range(20):
        b.query(0)
    m = b.build("long", lipschitz=1.0)
    with pytest.raises(ProtocolError, match="2\\^T histories"):
        optimal_liar(m, lean_params(1.0, 20), 1)
