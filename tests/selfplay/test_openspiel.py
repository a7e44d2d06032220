"""The OpenSpiel games: conformance, and exact values equal to proofgames.exhaustive."""

import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from proofgames.analysis.exhaustive import (  # noqa: E402
    bisection_value,
    cross_examination_value,
    surviving_transcripts,
)
from proofgames.machines import TableauTranscript  # noqa: E402
from proofgames.selfplay import TuringFamily, TuringInstance  # noqa: E402
from proofgames.selfplay.openspiel import (  # noqa: E402
    game_name,
    load_game,
    position_values,
    root_action_values,
    solve,
)


def test_the_game_declares_a_perfect_information_zero_sum_game() -> None:
    game = load_game("bisection", program="1RB1LB_1LA1RZ", space=2, steps=5)
    t, info = game.get_type(), game
    assert t.short_name == game_name("bisection") == "proofgames_bisection"
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert info.num_distinct_actions() == (2 + 2) * 2 * 2**2  # states + HALT, OVERFLOW
    assert info.max_game_length() == 2 + 2 * 3  # claim, final, then (midpoint, dispute) x 3
    assert (info.min_utility(), info.max_utility(), info.utility_sum()) == (-1.0, 1.0, 0.0)
    again = pyspiel.load_game(str(game))  # from its string
    assert again.get_parameters() == game.get_parameters()
    assert again.num_distinct_actions() == info.num_distinct_actions()


@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
@pytest.mark.parametrize("claim", [-1, 0, 1])
def test_random_simulation_passes_openspiel_checks(protocol: str, claim: int) -> None:
    for inst in TuringFamily(space=3, max_steps=64).split(claim + 10, 3, 0)[0]:
        game = load_game(protocol, **inst.params(), claim=claim, horizon=64)
        pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_observations_come_through_openspiel() -> None:
    game = load_game("bisection", program="1RB1LB_1LA1RZ", space=2, steps=5)
    state = game.new_initial_state()
    obs = np.asarray(state.observation_tensor(0))
    assert obs.shape == tuple(game.observation_tensor_shape())
    assert obs.tolist() == state.observation_tensor(1)  # perfect information
    assert state.observation_string(0) == str(state) == state.observation_string(1)
    state.apply_action(1)
    assert state.information_state_string(0) != ""


def test_an_illegal_action_through_openspiel_is_the_mover_s_loss() -> None:
    game = load_game("bisection", program="1RB1LB_1LA1RZ", space=1, steps=4, claim=0)
    state = game.new_initial_state()
    state.apply_action(123)
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    assert "A loses: A played 123 as its final" in str(state)
    game = load_game("cross-examination", program="1RB1LB_1LA1RZ", space=1, steps=1, claim=0)
    state = game.new_initial_state()
    for entry in (0, 0, 0):
        state.apply_action(entry)
    state.apply_action(-5)  # B's challenge
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert "B loses: B played -5 as its challenge" in str(state)


# --------------------------------------------------------------- exact solutions
# OpenSpiel's solver tries every configuration as A's final claim and each midpoint, so the
# exact families are small: every one-state machine on 2 cells with T <= 2 (256 instances,
# 24 configurations), and two-state machines on 2 cells with T <= 4 (32 configurations).


def _agree(inst: TuringInstance) -> int:
    """Solve both claims with OpenSpiel and compare with proofgames.exhaustive; the truth."""
    tm = inst.machine()
    for claim in (0, 1):
        exact = bisection_value(tm, inst.steps, claim)
        game = load_game("bisection", **inst.params(), claim=claim)
        values = root_action_values(game)
        winning = [a for a, v in values.items() if v == 1.0]  # A's best final claims
        assert max(values.values()) == 2 * exact.value - 1  # P[accept] = (value + 1) / 2
        assert len(winning) == exact.winning
        assert exact.value == float(claim == exact.truth)  # the theorem: 1 if true, else 0
        if claim == exact.truth:  # the one winning final claim is the true configuration
            true_final = tm.advance(tm.initial(), inst.steps)
            assert winning == [game.rules.action_of(true_final)]
    return exact.truth


@pytest.mark.slow
def test_game_values_equal_the_exhaustive_values_on_every_instance_of_a_family() -> None:
    family = TuringFamily(space=2, max_steps=2, states=1).every()
    truths = [_agree(inst) for inst in family]
    assert len(family) == 256 and 0 < sum(truths) < len(truths)


@pytest.mark.slow
def test_game_values_equal_the_exhaustive_values_on_two_state_machines() -> None:
    train, held_out = TuringFamily(space=2, max_steps=4).split(seed=3, train=2, test=2)
    assert {_agree(inst) for inst in train + held_out} == {0, 1}
    inst = held_out[0]
    assert solve(load_game("bisection", **inst.params(), claim=-1)) == 1.0  # A may choose


def test_solver_and_exhaustive_agree_on_tiny_instances() -> None:
    for steps in (1, 2):
        for program in ("1RZ0LA", "1LZ1RA"):
            _agree(TuringInstance(program, space=2, origin=0, steps=steps))


# Cross-examination: A commits to any of alphabet ** length tableaux, so only the
# tableaux of 1 cell and T <= 2 are solved (alphabet 8 or 10, 3 or 4 entries).
TABLEAUX = [("------", 1), ("------", 2), ("1RB1LB_1LA1RZ", 1), ("1RB1LB_1LA1RZ", 2),
            ("1RZ0LA", 1), ("0RA---", 2)]  # fmt: skip


def _agree_cross(inst: TuringInstance) -> int:
    """Both claims solved by OpenSpiel and by proofgames.exhaustive; the truth."""
    tableau = TableauTranscript(inst.machine(), inst.steps)
    for claim in (0, 1):
        exact = cross_examination_value(tableau, claim)
        game = load_game("cross-examination", **inst.params(), claim=claim)
        values = position_values(game)
        root = values[str(game.new_initial_state())]
        winning = sorted(
            [int(e) for e in k.split("entries=")[1].split(",")]
            for k, v in values.items()
            if k.startswith("B challenge") and v == 1.0
        )
        assert root == 2 * exact.value - 1 and len(winning) == exact.winning
        assert winning == surviving_transcripts(tableau, claim).tolist()  # the same ones
        assert exact.value == float(claim == exact.truth)
    return exact.truth


def test_cross_examination_values_equal_the_exhaustive_values_on_tiny_tableaux() -> None:
    tiny = [TuringInstance(p, 1, 0, 1) for p in ("------", "1RB1LB_1LA1RZ")]
    assert {_agree_cross(inst) for inst in tiny} == {0, 1}


@pytest.mark.slow
def test_cross_examination_values_equal_the_exhaustive_values_on_every_small_tableau() -> None:
    truths = {_agree_cross(TuringInstance(p, 1, 0, t)) for p, t in TABLEAUX}
    one_state = TuringFamily(space=1, max_steps=1, states=1).every()  # 64 machines, T = 1
    truths |= {_agree_cross(inst) for inst in one_state}
    assert truths == {0, 1}


def test_a_true_claim_has_value_one_and_a_false_claim_value_zero() -> None:
    params = {"program": "1RB1LB_1LA1RZ", "space": 1, "origin": 0}
    for steps, truth in [(1, 0), (3, 0)]:
        assert solve(load_game("bisection", **params, steps=steps, claim=truth)) == 1.0
        assert solve(load_game("bisection", **params, steps=steps, claim=1 - truth)) == -1.0


def test_importing_proofgames_imports_neither_openspiel_nor_pettingzoo() -> None:
    code = (
        "import sys, proofgames, proofgames.selfplay, proofgames.selfplay.bisection\n"
        "print(sorted(m for m in ('pyspiel', 'open_spiel', 'pettingzoo', 'gymnasium')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
