"""The stochastic protocol's self-play rules: moves, chance nodes, forfeits, observations."""

import itertools

import numpy as np
import pytest

from proofgames.errors import ProtocolError, RegistryError
from proofgames.selfplay.rules import CHANCE, TERMINAL, A, B
from proofgames.selfplay.stochastic import StochasticNode, StochasticRules
from proofgames.stochastic.optimal import verdict_probabilities

MACHINES = ["single-query:p=0.8", "padded-query:t=2,p=0.8", "copy-chain:t=2,p=0.3"]


def _random_play(rules: StochasticRules, seed: int) -> list[StochasticNode]:
    """One game with uniform moves and chance drawn by its probabilities; every state."""
    rng, s = np.random.default_rng(seed), rules.initial()
    states = [s]
    while not s.terminal:
        if s.player == CHANCE:
            outcomes = rules.chance_outcomes(s)
            probs = np.array([q for _, q in outcomes])
            assert (probs > 0).all() and abs(probs.sum() - 1.0) < 1e-12
            s = rules.apply(s, outcomes[int(rng.choice(len(outcomes), p=probs))][0])
        else:
            s = rules.apply(s, int(rng.choice(rules.legal(s))))
        states.append(s)
    return states


@pytest.mark.parametrize("params", ["lean", "paper"])
@pytest.mark.parametrize("machine", MACHINES)
def test_random_games_follow_the_protocol_s_order_and_end_with_v_s_verdict(
    machine: str, params: str
) -> None:
    rules = StochasticRules(machine, params=params, claim=-1, grid=10)
    external = rules.protocol_params.coin == "external"
    for seed in range(20):
        states = _random_play(rules, seed)
        end = states[-1]
        assert end.player == TERMINAL and end.verdict in (0, 1) and end.forfeited_by == ""
        assert len(states) - 1 <= rules.max_length
        phases = [s.phase for s in states]
        for before, after in itertools.pairwise(phases):
            if before == "coin" and not external:
                assert after == "abort"  # the paper's shared coin: B decides after the bit
            if before == "abort" and after == "coin":
                assert external  # the Lean coin comes after B continues
        if end.aborted:
            assert phases[-2] == "verify" and end.reason.startswith("B aborted")
        else:
            assert end.round == rules.steps and end.verdict == int(end.bit == end.claim)


def test_the_honest_action_announces_p_at_a_known_step_and_a_sample_mean_at_a_query() -> None:
    rules = StochasticRules("padded-query:t=2,p=0.8", claim=1, grid=10)
    s = rules.apply(rules.initial(), rules.honest_action)  # step 0: a constant 0, known
    assert s.announced == rules.probability(rules.initial())[0] == 0.0
    s = rules.apply(s, 0)  # B continues
    s = rules.apply(s, rules.chance_outcomes(s)[0][0])  # the coin: 0, surely
    assert (s.round, s.phase) == (1, "announce")
    s = rules.apply(s, rules.honest_action)
    assert s.phase == "sample" and s.player == CHANCE
    outcomes = rules.chance_outcomes(s)
    counts = [int(rules.action_name(s, o).split()[2]) for o, _ in outcomes]
    r = rules.protocol_params.a_samples
    mean = sum(c * q for c, (_, q) in zip(counts, outcomes, strict=True)) / r
    assert abs(mean - 0.8) < 1e-9  # the Binomial(R, 0.8) mean, tails folded in
    after = rules.apply(s, outcomes[3][0])
    assert after.announced == counts[3] / r


def test_chance_probabilities_are_stochastic_optimal_s_verdict_probabilities() -> None:
    rules = StochasticRules("single-query:p=0.8", claim=1, grid=20, b="honest")
    m, par = rules.machine, rules.protocol_params
    for k in (14, 16, 17, 20):
        s = rules.apply(rules.initial(), k)
        aborts, accept = verdict_probabilities(m, par, 0, np.array([0.8]), np.array([k / 20]))
        assert s.phase == "abort" and s.player == CHANCE
        assert dict(rules.chance_outcomes(s)).get(1, 0.0) == aborts[0]
        if aborts[0] > 0:
            v = rules.apply(s, 1)
            assert v.phase == "verify" and dict(rules.chance_outcomes(v)).get(1, 0.0) == accept[0]


@pytest.mark.parametrize("bad", [10**6, -3, 0.5, "honest", None, True])
def test_an_illegal_action_is_the_mover_s_loss_with_a_reason(bad: object) -> None:
    rules = StochasticRules("single-query:p=0.8", claim=1, grid=10)
    s = rules.apply(rules.initial(), bad)
    assert (s.verdict, s.forfeited_by, rules.returns(s)) == (0, "A", (-1.0, 1.0))
    assert s.reason == f"A loses: A played {bad!r} as its announce, not an action in 0..11"
    s = rules.apply(rules.initial(), 8)  # Lean: B's move is next
    assert s.player == B
    s = rules.apply(s, bad)
    assert (s.verdict, s.forfeited_by, rules.returns(s)) == (1, "B", (1.0, -1.0))
    assert s.reason.startswith(f"B loses: B played {bad!r} as its abort")


def test_a_chance_outcome_that_cannot_happen_is_refused_not_forfeited() -> None:
    rules = StochasticRules("single-query:p=0.8", claim=1, grid=10)
    s = rules.apply(rules.apply(rules.initial(), 10), 0)  # announce 1.0; B continues
    assert rules.chance_outcomes(s) == [(1, 1.0)]
    with pytest.raises(ProtocolError, match="not a chance outcome of the coin node"):
        rules.apply(s, 0)
    with pytest.raises(ProtocolError, match="the game is over"):
        rules.apply(rules.apply(s, 1), 0)


def test_honest_players_are_chance_nodes() -> None:
    rules = StochasticRules("single-query:p=0.8", claim=1, grid=10, a="honest", b="honest")
    s = rules.initial()
    assert s.phase == "sample" and s.player == CHANCE and rules.legal(s) == []
    assert len(rules.chance_outcomes(s)) == rules.max_chance_outcomes
    s = rules.apply(s, 0)
    assert s.phase == "abort" and s.player == CHANCE


def test_observations_lie_in_the_unit_box_and_follow_the_game() -> None:
    rules = StochasticRules("copy-chain:t=2,p=0.3", claim=-1, grid=10, horizon=4)
    assert rules.observation_size == 7 + 2 + 3 + 2 * 4 + 9
    seen = set()
    for seed in range(10):
        for s in _random_play(rules, seed):
            obs = rules.observation(s)
            assert obs.shape == (rules.observation_size,) and obs.dtype == np.float32
            assert ((obs >= 0) & (obs <= 1)).all() and obs[:7].sum() == 1.0
            assert obs[7:9].tolist() == [float(s.player == A), float(s.player == B)]
            seen.add(obs.tobytes())
    assert len(seen) > 10


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"claim": 2}, "claim must be"),
        ({"grid": 0}, "grid must be"),
        ({"grid": 2.5}, "grid must be"),
        ({"a": "greedy"}, "a and b must be"),
        ({"machine": "padded-query:t=3", "horizon": 2}, "horizon 2 is shorter"),
        ({"machine": "majority:n=5"}, "T <= 14"),
    ],
)
def test_bad_parameters_are_refused_with_the_reason(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ProtocolError, match=message):
        StochasticRules(**kwargs)  # type: ignore[arg-type]


def test_an_unknown_machine_is_refused_naming_the_zoo() -> None:
    with pytest.raises(RegistryError, match="single-query"):
        StochasticRules("no-such-machine")


def _fixed_value(rules: StochasticRules, s: StochasticNode, a: int, b: int) -> float:
    """P[V accepts] from ``s`` when A always plays ``a`` and B always plays ``b`` (where the
    rules let them move; chance nodes, honest parties among them, are averaged)."""
    if s.terminal:
        return float(s.verdict)
    if s.player == CHANCE:
        return sum(q * _fixed_value(rules, rules.apply(s, o), a, b)
                   for o, q in rules.chance_outcomes(s))  # fmt: skip
    return _fixed_value(rules, rules.apply(s, a if s.player == A else b), a, b)


class _Constant:
    """A protocol-side A that announces ``c`` every round (and a uniform coin share)."""

    def __init__(self, c: float) -> None:
        self.c = c

    def announce(self, r: object, rng: np.random.Generator) -> np.ndarray:
        return np.full(r.n, self.c)  # type: ignore[attr-defined]

    def coin(self, r: object, rng: np.random.Generator) -> np.ndarray:
        return rng.random(r.n)  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("machine", "params", "claim"),
    [("single-query:p=0.8", "lean", 1), ("copy-chain:t=2,p=0.3", "lean", 0),
     ("single-query:p=0.8", "paper", 1)],
)  # fmt: skip
def test_the_protocol_s_own_simulator_accepts_as_often_as_the_game_says(
    machine: str, params: str, claim: int
) -> None:
    from proofgames.protocols.stochastic import play_stochastic_batch
    from proofgames.strategies import make_strategy

    debates, grid = 4000, 200
    honest_a = make_strategy("stochastic", "A", "honest")
    lie = 167  # announce 0.835: at B's Lean abort threshold from p = 0.8
    pairs = [  # (a, b, A's action, B's action, protocol A, protocol B)
        ("honest", "honest", 0, 0, honest_a, "honest"),
        ("honest", "player", 0, 1, honest_a, "always-abort"),
        ("honest", "player", 0, 0, honest_a, "never-abort"),
        ("player", "honest", lie, 0, _Constant(lie / grid), "honest"),
    ]
    for a, b, act_a, act_b, prover_a, b_name in pairs:
        rules = StochasticRules(machine, params=params, claim=claim, grid=grid, a=a, b=b)
        exact = _fixed_value(rules, rules.initial(), act_a, act_b)
        batch = play_stochastic_batch(
            rules.machine, rules.protocol_params, claim, prover_a,
            make_strategy("stochastic", "B", b_name), debates=debates, seed=7,
        )  # fmt: skip
        measured = float(np.mean(batch.verdicts))
        sd = max(np.sqrt(exact * (1 - exact) / debates), 1 / debates)
        assert abs(measured - exact) <= 4 * sd, (b_name, measured, exact)
