"""The bisection rules against the protocol's own play, V's verdicts and forfeits."""

import itertools
from typing import Any

import numpy as np
import pytest

from proofgames._configuration import Configuration
from proofgames.errors import ProtocolError
from proofgames.protocols import play_bisection
from proofgames.selfplay import TuringFamily, make_rules
from proofgames.selfplay.bisection import BisectionNode, BisectionRules
from proofgames.selfplay.rules import TERMINAL


class _ScriptedA:
    def __init__(self, configs: list[Configuration]) -> None:
        self.configs = iter(configs)

    def final(self, ctx: Any) -> Configuration:
        return next(self.configs)

    def midpoint(self, ctx: Any, state: Any) -> Configuration:
        return next(self.configs)


class _ScriptedB:
    def __init__(self, halves: list[str]) -> None:
        self.halves = iter(halves)

    def dispute(self, ctx: Any, state: Any, midpoint: Any) -> str:
        return next(self.halves)


def _random_game(rules: BisectionRules, rng: np.random.Generator) -> list[int]:
    """Legal actions at random until V decides; returns them."""
    s, actions = rules.initial(), []
    while not s.terminal:
        a = int(rng.choice(rules.legal(s)))
        actions.append(a)
        s = rules.apply(s, a)
    return actions


@pytest.mark.parametrize("seed", range(6))
def test_every_random_game_ends_as_play_bisection_decides_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for inst in TuringFamily(space=2, max_steps=9).split(seed, 15, 0)[0]:
        rules = BisectionRules(**inst.params(), claim=int(rng.integers(2)))
        for _ in range(4):
            actions = _random_game(rules, rng)
            s = rules.initial()
            for a in actions:
                s = rules.apply(s, a)
            configs = [rules.configuration(a) for a in actions[:1] + actions[1::2]]
            halves = ["first" if a == 0 else "second" for a in actions[2::2]]
            out = play_bisection(rules.machine, inst.steps, rules.claim,
                                 _ScriptedA(configs), _ScriptedB(halves))  # fmt: skip
            assert (s.verdict, s.reason) == (out.verdict, out.reason)
            assert s.dispute is not None and s.dispute.round == out.costs.rounds


def _honest_game(rules: BisectionRules, b: str) -> BisectionNode:
    tm, s = rules.machine, rules.initial()
    if s.phase == "claim":
        s = rules.apply(s, tm.accepts(tm.advance(tm.initial(), rules.steps)))
    s = rules.apply(s, rules.action_of(tm.advance(tm.initial(), rules.steps)))
    while not s.terminal:
        assert s.dispute is not None
        s = rules.apply(s, rules.action_of(tm.advance(tm.initial(), s.dispute.midpoint_time)))
        s = rules.apply(s, {"first": 0, "second": 1, "alternate": s.moves % 2}[b])
    return s


@pytest.mark.parametrize("b", ["first", "second", "alternate"])
def test_an_honest_a_wins_every_instance_whatever_b_disputes(b: str) -> None:
    for inst in TuringFamily(space=4, max_steps=64).split(1, 40, 0)[0]:
        s = _honest_game(BisectionRules(**inst.params(), claim=-1), b)
        assert (s.verdict, s.claim, s.forfeited_by) == (1, inst.truth, "")
        assert s.moves <= BisectionRules(**inst.params()).max_length


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (-1, "-1"),
        (8, "8"),
        (2.0, "2.0"),
        (True, "True"),
        (None, "None"),
        ("first", "'first'"),
    ],
)
def test_an_illegal_action_is_a_loss_with_its_reason(bad: object, shown: str) -> None:
    rules = BisectionRules("1RB1LB_1LA1RZ", space=1, origin=0, steps=4, claim=0)
    s = rules.apply(rules.initial(), bad)  # A's final configuration: 0..7 are legal
    assert (s.verdict, s.forfeited_by, s.player) == (0, "A", TERMINAL)
    assert s.reason == f"A loses: A played {shown} as its final, not an action in 0..7"
    assert rules.returns(s) == (-1.0, 1.0)
    s = rules.apply(rules.apply(rules.initial(), 0), 0)  # ... midpoint: B's dispute is due
    assert s.phase == "dispute"
    s = rules.apply(s, 2 if bad == 8 else bad)
    assert (s.verdict, s.forfeited_by, rules.returns(s)) == (1, "B", (1.0, -1.0))
    assert "B played" in s.reason and "dispute, not an action in 0..1" in s.reason
    with pytest.raises(ProtocolError, match="the game is over"):
        rules.apply(s, 0)


def test_a_final_configuration_against_the_claim_loses_at_once() -> None:
    rules = BisectionRules("1RB1LB_1LA1RZ", space=1, origin=0, steps=4, claim=1)
    halted = Configuration(rules.machine.program.halt, 0, b"\x00")
    s = rules.apply(rules.initial(), rules.action_of(Configuration(0, 0, b"\x00")))
    assert (s.verdict, s.forfeited_by) == (0, "")  # V's rule, not an illegal action
    assert s.reason == "A loses: A's final configuration has output 0, not its claim 1"
    assert rules.apply(rules.initial(), rules.action_of(halted)).phase == "midpoint"


def test_actions_enumerate_configurations_in_the_exhaustive_order() -> None:
    rules = BisectionRules("1RB1LB_1LA1RZ", space=3, origin=1, steps=5)
    p = rules.machine.program
    order = [Configuration(q, h, bytes(t)) for q, h, t in itertools.product(
        range(p.states + 2), range(3), itertools.product(range(2), repeat=3))]  # fmt: skip
    assert [rules.configuration(a) for a in range(rules.n_configs)] == order
    assert [rules.action_of(c) for c in order] == list(range(rules.n_configs))
    assert all(rules.machine.validate(c) == c for c in order)


def test_action_features_are_each_configurations_parts_and_tell_them_apart() -> None:
    rules = BisectionRules("1RB1LB_1LA1RZ", space=3, origin=1, steps=5)
    feats = rules.action_features()
    n = rules.n_states
    assert feats.shape == (rules.num_actions, n + 3 + 3 * 2)
    for a in range(rules.n_configs):
        c = rules.configuration(a)
        assert np.flatnonzero(feats[a]).tolist() == [
            c.state,
            n + c.head,
            *(n + 3 + 2 * j + sym for j, sym in enumerate(c.tape)),
        ]
    assert len({row.tobytes() for row in feats}) == rules.n_configs


def test_observations_have_the_declared_size_and_range_and_differ_by_phase() -> None:
    rules = BisectionRules("1RB1LB_1LA1RZ", space=2, origin=0, steps=7, horizon=8)
    rng = np.random.default_rng(0)
    seen = set()
    s = rules.initial()
    while True:
        obs = rules.observation(s)
        assert obs.shape == (rules.observation_size,) and obs.dtype == np.float32
        assert obs.min() >= 0.0 and obs.max() <= 1.0
        seen.add(obs.tobytes())
        assert np.flatnonzero(rules.mask(s)).tolist() == rules.legal(s)
        if s.terminal:
            break
        s = rules.apply(s, int(rng.choice(rules.legal(s))))
    assert len(seen) == s.moves + 1


def test_make_rules_refuses_unknown_parameters_and_bad_values() -> None:
    with pytest.raises(ProtocolError, match="unknown parameter"):
        make_rules("bisection", width=3)
    with pytest.raises(ProtocolError, match="claim"):
        make_rules("bisection", claim=2)
    with pytest.raises(ProtocolError, match="steps"):
        make_rules("bisection", steps=0)
