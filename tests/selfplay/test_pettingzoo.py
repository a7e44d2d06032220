"""The PettingZoo environment: conformance, seeds, rewards and forfeits."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test

from proofgames.errors import ProtocolError
from proofgames.selfplay import StochasticFamily, TuringFamily
from proofgames.selfplay.pettingzoo import DebateEnv

FAMILY = TuringFamily(space=3, max_steps=16)


# api_test's advice, not failures: a dict observation (the action-mask convention of
# PettingZoo's own classic games) and agents named A and B rather than player_0/player_1
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
@pytest.mark.parametrize("claim", [-1, 0, 1])
def test_the_environment_passes_pettingzoo_api_and_seed_tests(protocol: str, claim: int) -> None:
    api_test(DebateEnv(protocol, FAMILY, claim=claim), num_cycles=300)
    seed_test(lambda: DebateEnv(protocol, FAMILY, claim=claim), num_cycles=300)


def _play(env: DebateEnv, seed: int, policy_seed: int) -> list[tuple[str, int]]:
    env.reset(seed=seed)
    rng, moves = np.random.default_rng(policy_seed), []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        moves.append((agent, action))
        env.step(action)
    return moves


def test_the_reset_seed_decides_the_instance_and_the_episode() -> None:
    env = DebateEnv("bisection", FAMILY)
    first = _play(env, seed=4, policy_seed=0)
    inst = env.instance
    assert _play(env, seed=4, policy_seed=0) == first and env.instance == inst
    drawn = set()
    for seed in range(20):
        env.reset(seed=seed)
        drawn.add(env.instance)
    assert len(drawn) > 15


def test_rewards_are_zero_sum_and_match_v_s_verdict() -> None:
    env = DebateEnv("bisection", FAMILY)
    for seed in range(30):
        _play(env, seed=seed, policy_seed=seed)
        assert env.agents == []
        verdict = env.node.verdict
        assert env.rules.returns(env.node) == ((1.0, -1.0) if verdict == 1 else (-1.0, 1.0))


def test_honest_a_wins_every_held_out_instance_against_every_b() -> None:
    _, held_out = FAMILY.split(seed=0, train=10, test=10)
    env = DebateEnv("bisection", FAMILY, instances=held_out)
    for seed in range(20):
        env.reset(seed=seed)
        tm, inst = env.rules.machine, env.instance
        assert inst in held_out
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent]:
                env.step(None)
                continue
            node = env.node
            if node.phase == "claim":
                action = inst.truth
            elif agent == "B":
                action = seed % 2
            else:
                t = inst.steps if node.phase == "final" else node.dispute.midpoint_time
                action = env.rules.action_of(tm.advance(tm.initial(), t))
            env.step(action)
            if env.node.terminal:
                assert env.rewards == {"A": 1.0, "B": -1.0}, env.node.reason


@pytest.mark.parametrize("agent", ["A", "B"])
@pytest.mark.parametrize("bad", [10**6, -3, 0.5, "first", None])
def test_an_illegal_action_is_the_agent_s_loss_never_a_crash(agent: str, bad: object) -> None:
    env = DebateEnv("bisection", FAMILY, claim=0)
    seed = 0
    env.reset(seed=seed)
    while env.instance is None or env.instance.steps == 1:  # B moves only when T > 1
        seed += 1
        env.reset(seed=seed)
    if agent == "B":
        env.step(0)  # A's final configuration (all 0: state A, head 0, blank tape)
        env.step(0)  # A's first midpoint
    assert env.agent_selection == agent
    env.step(bad)
    loser, winner = agent, "B" if agent == "A" else "A"
    assert env.rewards == {loser: -1.0, winner: 1.0}
    assert all(env.terminations.values())
    info = env.infos[winner]
    assert info["forfeited_by"] == loser and info == env.infos[loser]
    assert info["reason"].startswith(f"{loser} loses: {loser} played {bad!r} as its ")
    assert env.infos[loser]["verdict"] == (0 if loser == "A" else 1)


def test_a_cross_examination_episode_ends_with_v_s_check_of_b_s_challenge() -> None:
    env = DebateEnv("cross-examination", FAMILY, claim=-1)
    env.reset(seed=2)
    inst, rules = env.instance, env.rules
    truth = rules.machine.run().tolist()
    for action in [inst.truth, *truth]:
        assert env.agent_selection == "A"
        env.step(action)
    assert env.agent_selection == "B" and env.observe("B")["action_mask"].sum() == rules.length
    env.step(rules.length)  # one past the last position: B forfeits
    assert env.rewards == {"A": 1.0, "B": -1.0} and env.infos["A"]["forfeited_by"] == "B"


def test_an_instance_outside_the_family_is_refused() -> None:
    other = TuringFamily(space=2, max_steps=4).instance(0)
    env = DebateEnv("bisection", FAMILY, instances=[other])
    with pytest.raises(ProtocolError, match="does not belong"):
        env.reset(seed=0)
    with pytest.raises(ProtocolError, match="render_mode"):
        DebateEnv("bisection", FAMILY, render_mode="human")


def test_render_shows_the_state() -> None:
    env = DebateEnv("bisection", FAMILY, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.rules.describe(env.node)
    assert DebateEnv("bisection", FAMILY).render() is None


# ----------------------------------------------------------- the stochastic protocol
STOCHASTIC = StochasticFamily(grid=20)


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably")
@pytest.mark.filterwarnings("ignore:We recommend agents to be named")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("claim", [-1, 0, 1])
def test_the_stochastic_environment_passes_api_and_seed_tests(claim: int) -> None:
    api_test(DebateEnv("stochastic", STOCHASTIC, claim=claim), num_cycles=300)
    seed_test(lambda: DebateEnv("stochastic", STOCHASTIC, claim=claim), num_cycles=300)


def test_stochastic_episodes_replay_from_the_seed_chance_included() -> None:
    env = DebateEnv("stochastic", STOCHASTIC, claim=1)
    runs = {}
    for seed in range(30):
        moves = _play(env, seed, policy_seed=seed)
        reason = env.node.reason
        assert moves == _play(env, seed, policy_seed=seed)  # chance too: the same episode
        assert env.node.reason == reason
        runs[seed] = (env.instance, reason.split(":")[0], tuple(moves))
    assert {r[1][:9] for r in runs.values()} == {"B aborted", "no abort"}
    assert len({r[0] for r in runs.values()}) == len(STOCHASTIC.machines)


@pytest.mark.parametrize("agent", ["A", "B"])
@pytest.mark.parametrize("bad", [10**6, -3, 0.5, "abort", None])
def test_an_illegal_stochastic_move_is_the_agent_s_loss(agent: str, bad: object) -> None:
    env = DebateEnv("stochastic", STOCHASTIC, claim=1)
    env.reset(seed=1)
    if agent == "B":
        env.step(20)  # A announces 1.0; Lean: B moves next
    assert env.agent_selection == agent
    env.step(bad)
    other = "B" if agent == "A" else "A"
    assert env.rewards == {agent: -1.0, other: 1.0}
    assert env.infos[agent]["forfeited_by"] == agent
    assert env.infos[agent]["reason"].startswith(f"{agent} loses: {agent} played {bad!r}")
