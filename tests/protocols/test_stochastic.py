"""The stochastic protocol against its theorem (statistical tests with fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from proofgames import BernoulliOracle, OracleError, ProtocolError
from proofgames._registry import Player, StrategySpec
from proofgames.experiments.montecarlo import (
    clopper_pearson_interval,
    estimate_acceptance,
    wilson_interval,
)
from proofgames.protocols import play_stochastic, play_stochastic_batch
from proofgames.stochastic import (
    StochasticBuilder,
    StochasticParams,
    hoeffding_samples,
    lean_params,
    paper_params,
)
from proofgames.strategies import make_strategy, strategy_names


def single(p: float):
    b = StochasticBuilder([p])
    b.query(0)
    return b.build(f"single-query:p={p}", lipschitz=1.0, p_accept=p)


def majority3(p: float):
    b = StochasticBuilder([p])
    v = [b.query(0) for _ in range(3)]
    b.gate(lambda x: (x.sum(axis=1) >= 2).astype(np.int64), relevant=v)
    return b.build(f"majority-3:p={p}", lipschitz=1.5, p_accept=3 * p**2 - 2 * p**3)


def run(machine, params, claim, a, b, n=3000, seed=0, **kw):
    return play_stochastic_batch(
        machine,
        params,
        claim,
        make_strategy("stochastic", "A", a),
        make_strategy("stochastic", "B", b),
        debates=n,
        seed=seed,
        **kw,
    )


def test_lean_defaults_reproduce_the_formalization_sample_counts():
    p = lean_params(1.0, 10)
    assert (p.a_samples, p.b_samples, p.v_samples) == (38005, 16891, 105967)
    assert p.b_threshold == pytest.approx(0.035) and p.v_threshold == pytest.approx(0.015)
    assert hoeffding_samples(0.01, 1 / 1000) == 38005


def test_paper_constants_follow_figure_1():
    p = paper_params(2.0, 100)
    d = 300
    assert p.a_samples == p.b_samples == int(np.ceil(192 * d * d * np.log(100 * 100)))
    assert p.v_samples == int(np.ceil(192 * d * d * np.log(100)))
    assert p.b_threshold == 1 / (2 * d) and p.v_threshold == 1 / (4 * d)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"c": 0.03}, "c < s < b"),
        ({"q": 0.5, "v": 0.1}, "q <= v"),
        ({"b": 0.9}, "K b <= w"),
        ({"d": 0.66}, "completeness condition"),
    ],
)
def test_invalid_parameters_are_rejected_naming_the_condition(kwargs, fragment):
    with pytest.raises(ProtocolError, match=fragment):
        lean_params(1.0, 10, **kwargs)


def test_k_must_be_positive_and_probabilities_in_range():
    with pytest.raises(ProtocolError, match="Lipschitz constant K must be a positive"):
        paper_params(0.0, 5)
    with pytest.raises(ProtocolError, match="positive"):
        lean_params(-1.0, 5)
    bad = StochasticBuilder([1.2])
    bad.query(0)
    with pytest.raises(OracleError, match=r"\[0, 1\]"):
        bad.build("bad")


def test_without_an_oracle_lipschitz_bound_the_oracle_definition_needs_explicit_params():
    b = StochasticBuilder([0.5])
    b.query(0)
    with pytest.raises(ProtocolError, match="no known Lipschitz constant"):
        estimate_acceptance(
            b.build("unknown-k"), "paper", 1, "honest", "honest", debates=10, k_definition="oracle"
        )


@pytest.mark.parametrize("params", ["lean", "paper"])
@pytest.mark.parametrize("machine", [single(0.85), majority3(0.8)])
def test_honest_a_wins_true_claims_against_every_b(params, machine):
    pset = (lean_params if params == "lean" else paper_params)(machine.lipschitz, machine.length)
    for b in strategy_names("stochastic", "B"):
        res = run(machine, pset, 1, "honest", b)
        lo, _ = clopper_pearson_interval(int(res.verdicts.sum()), res.debates)
        assert lo >= pset.completeness_target, (b, res.acceptance)
        assert not res.forfeits


@pytest.mark.parametrize("params", ["lean", "paper"])
@pytest.mark.parametrize("machine", [single(0.15), majority3(0.2)])
def test_honest_b_keeps_false_claims_below_two_fifths_against_every_a(params, machine):
    pset = (lean_params if params == "lean" else paper_params)(machine.lipschitz, machine.length)
    for a in strategy_names("stochastic", "A"):
        res = run(machine, pset, 1, a, "honest")
        _, hi = clopper_pearson_interval(int(res.verdicts.sum()), res.debates)
        assert hi <= 1 - pset.completeness_target, (a, res.acceptance)


def test_claim_zero_is_the_mirror_image():
    pset = lean_params(1.0, 1)
    assert run(single(0.1), pset, 0, "honest", "abort-against").acceptance > 0.8
    assert run(single(0.9), pset, 0, "blatant", "honest").acceptance < 0.1


def test_binomial_aggregation_and_per_sample_drawing_agree_in_distribution():
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(2)
    p, r, n = 0.3, 12, 40_000
    agg = rng_a.binomial(r, np.full(n, p))
    per = (rng_b.random((n, r)) < p).sum(axis=1)
    table = np.array([np.bincount(agg, minlength=r + 1), np.bincount(per, minlength=r + 1)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    small = StochasticParams("custom", 1.0, 4, 10, 10, 30, 0.2, 0.1, "shared")
    m = majority3(0.6)
    x = run(m, small, 1, "shift:delta=0.1", "honest", n=6000, seed=3)
    y = run(m, small, 1, "shift:delta=0.1", "honest", n=6000, seed=4, sampling="per-sample")
    pooled = (x.verdicts.sum() + y.verdicts.sum()) / 12000
    se = np.sqrt(2 * pooled * (1 - pooled) / 6000)
    assert abs(x.acceptance - y.acceptance) < 5 * se


def test_same_seed_same_result_and_estimates_are_reproducible():
    m, pset = majority3(0.7), lean_params(1.5, 4)
    first, again = (
        run(m, pset, 1, "evade", "honest", seed=9),
        run(m, pset, 1, "evade", "honest", seed=9),
    )
    assert np.array_equal(first.verdicts, again.verdicts)
    assert np.array_equal(first.samples["A"], again.samples["A"])
    e1 = estimate_acceptance(m, pset, 1, "honest", "random-abort", debates=5000, seed=5, chunk=1000)
    e2 = estimate_acceptance(m, pset, 1, "honest", "random-abort", debates=5000, seed=5, chunk=1000)
    assert e1.accepted == e2.accepted and e1.queries == e2.queries


def test_intervals_cover_the_estimate():
    lo, hi = wilson_interval(30, 100)
    lo2, hi2 = clopper_pearson_interval(30, 100)
    assert lo < 0.3 < hi and lo2 < 0.3 < hi2
    assert clopper_pearson_interval(0, 50)[0] == 0.0


class Raises(Player):
    def announce(self, r, rng):
        raise RuntimeError("boom")


class OutOfRange(Player):
    def announce(self, r, rng):
        return np.full(r.n, 1.5)


class BadAbort(Player):
    def coin(self, r, rng):
        return rng.random(r.n)

    def abort(self, r, rng, announced, bits):
        return "yes"


def custom(p: Player, role: str) -> Player:
    p.spec = StrategySpec("stochastic", role, type(p).__name__)
    return p


def test_misbehaving_strategies_lose_their_debates_with_a_recorded_reason():
    m, pset = single(0.9), lean_params(1.0, 1)
    res = play_stochastic_batch(
        m, pset, 1, custom(Raises(), "A"), make_strategy("stochastic", "B", "honest"), debates=50
    )
    assert res.acceptance == 0 and "boom" in res.forfeits[0].reason
    res = play_stochastic_batch(
        m,
        pset,
        1,
        custom(OutOfRange(), "A"),
        make_strategy("stochastic", "B", "honest"),
        debates=50,
    )
    assert res.acceptance == 0 and "outside [0, 1]" in res.forfeits[0].reason
    res = play_stochastic_batch(
        m, pset, 1, make_strategy("stochastic", "A", "blatant"), custom(BadAbort(), "B"), debates=50
    )
    assert res.acceptance == 1 and "abort decision" in res.forfeits[0].reason
    assert res.forfeits[0].party == "B" and res.forfeit_counts() == {"A": 0, "B": 50}


def test_real_oracle_calls_are_counted_and_bounded_by_a_budget():
    m = single(0.5)
    small = StochasticParams("custom", 1.0, 1, 20, 20, 40, 0.3, 0.2, "shared")
    oracle = BernoulliOracle(lambda z: 0.9, name="panel")
    res = run(m, small, 1, "honest", "honest", n=10, sampling="oracle", oracle=oracle)
    assert res.oracle_calls["A"] == 200 and res.oracle_calls["B"] == 200
    assert res.acceptance > 0.5  # the real oracle says 0.9, not the machine's 0.5
    with pytest.raises(ProtocolError, match="below what the protocol prescribes"):
        run(m, small, 1, "honest", "honest", n=10, sampling="oracle", oracle=oracle, budget=100)
    greedy = Greedy()
    greedy.spec = StrategySpec("stochastic", "A", "greedy")
    res = play_stochastic_batch(
        m, small, 1, greedy, make_strategy("stochastic", "B", "honest"), debates=10,
        sampling="oracle", oracle=oracle, budget=400,
    )  # fmt: skip
    assert res.acceptance == 0 and res.forfeit_counts() == {"A": 10, "B": 0}
    assert "budget" in res.forfeits[0].reason  # asking beyond its own budget is A's loss


class Greedy(Player):
    def announce(self, r, rng):
        return r.estimate(1000)

    def coin(self, r, rng):
        return rng.random(r.n)


def test_one_debate_record_has_messages_and_costs():
    out = play_stochastic(
        majority3(0.8),
        lean_params(1.5, 4),
        1,
        make_strategy("stochastic", "A", "honest"),
        make_strategy("stochastic", "B", "always-abort"),
        seed=0,
    )
    assert out.protocol == "stochastic" and out.winner == "A"
    assert out.costs.prover_queries["A"] == lean_params(1.5, 4).a_samples
    assert out.costs.verifier_queries == lean_params(1.5, 4).v_samples
    assert [m.kind for m in out.messages][:3] == ["announce", "bit", "abort"]


def test_shading_deterministic_steps_breaks_oracle_only_k_and_strict_checks_restore_it():
    from proofgames.stochastic import resolve_params
    from proofgames.stochastic.machines import make_stochastic_machine

    liar_target = make_stochastic_machine("copy-chain:t=300,p=0.3")
    loose = estimate_acceptance(
        liar_target, resolve_params("paper", 1.0, 300), 1, "evade", "honest", debates=3000, seed=1
    )
    strict = estimate_acceptance(
        liar_target,
        resolve_params("paper:strict", 1.0, 300),
        1,
        "evade",
        "honest",
        debates=3000,
        seed=1,
    )
    assert loose.ci_low > 0.4  # Theorem 6.2's 2/5, broken with K = 1 (oracle-only)
    assert strict.ci_high < 0.4
    honest = estimate_acceptance(
        make_stochastic_machine("copy-chain:t=300,p=0.8"),
        resolve_params("paper:strict", 1.0, 300),
        1,
        "honest",
        "abort-against",
        debates=3000,
        seed=2,
    )
    assert honest.ci_low > 0.6  # strict checking costs honest A nothing
    assert resolve_params("lean:strict", 1.0, 10).name == "lean:strict"


def test_a_debate_aborted_in_round_t_reports_t_plus_one_rounds():
    m = majority3(0.5)  # T = 4: three queries and the gate
    for step in range(m.length):
        out = play_stochastic(
            m, lean_params(1.5, m.length), 1, make_strategy("stochastic", "A", "honest"),
            make_strategy("stochastic", "B", f"abort-at:step={step}"), seed=0,
        )  # fmt: skip
        assert out.details["abort_round"] == step
        assert out.costs.rounds == step + 1
