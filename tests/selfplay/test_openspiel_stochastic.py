"""The stochastic protocol as an OpenSpiel game: conformance, and exact values.

The exact values are checked against ``stochastic.optimal`` (see docs/selfplay.md):

* honest A against a playing B is ``optimal_disputer``'s value;
* a playing A against honest B is ``liar_policy_value`` of the announcements the solver
  picks, and at most ``optimal_liar``'s value (A's announcements are on a grid);
* with both playing, the value lies between the two, so the theorem's bounds hold for it.
"""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms.minimax import expectiminimax  # noqa: E402

from proofgames.selfplay.openspiel import (  # noqa: E402
    expected_values,
    game_name,
    load_game,
    solve,
)
from proofgames.selfplay.rules import A  # noqa: E402
from proofgames.selfplay.stochastic import StochasticNode  # noqa: E402
from proofgames.stochastic.optimal import (  # noqa: E402
    liar_policy_value,
    optimal_disputer,
    optimal_liar,
)


def test_the_game_declares_explicit_chance_and_loads_from_its_string() -> None:
    game = load_game("stochastic", machine="padded-query:t=2,p=0.8", claim=1, grid=10)
    t = game.get_type()
    assert t.short_name == game_name("stochastic") == "proofgames_stochastic"
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert game.num_distinct_actions() == 12 and game.max_game_length() == 11
    assert game.max_chance_outcomes() == game.rules.max_chance_outcomes > 2
    again = pyspiel.load_game(str(game))  # "," and "=" of the spec travel as ";" and "~"
    assert "machine=padded-query:t~2;p~0.8" in str(game)
    assert again.rules.params() == game.rules.params()
    assert again.rules.spec == "padded-query:t=2,p=0.8"


@pytest.mark.parametrize("claim", [-1, 0, 1])
@pytest.mark.parametrize("machine", ["single-query:p=0.8", "copy-chain:t=2,p=0.3"])
def test_random_simulation_passes_openspiel_checks(machine: str, claim: int) -> None:
    for params in ("lean", "paper"):
        game = load_game("stochastic", machine=machine, params=params, claim=claim, grid=10)
        pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_an_illegal_action_through_openspiel_is_the_mover_s_loss() -> None:
    game = load_game("stochastic", machine="single-query:p=0.8", claim=1, grid=10)
    state = game.new_initial_state()
    state.apply_action(12)
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    assert "A loses: A played 12 as its announce" in str(state)
    state = game.new_initial_state()
    state.apply_action(8)
    state.apply_action(7)  # B's continue/abort
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert "B loses: B played 7 as its abort" in str(state)


def test_the_memoized_solver_equals_openspiel_s_expectiminimax() -> None:
    for claim, b in ((1, "player"), (0, "honest")):
        game = load_game("stochastic", machine="single-query:p=0.8", claim=claim, grid=4, b=b)
        ours, _ = expected_values(game)
        theirs, _ = expectiminimax(game.new_initial_state(), 10, None, 0)
        assert abs(ours - theirs) < 1e-12


# --------------------------------------------------------------- exact solutions
# (machine, claim, whether the claim is true: P[M = claim] >= 2/3, or false: <= 1/3)
CASES = [
    ("single-query:p=0.8", 1, True),
    ("single-query:p=0.8", 0, False),
    ("padded-query:t=2,p=0.8", 1, True),
    ("copy-chain:t=2,p=0.3", 0, True),
    ("copy-chain:t=2,p=0.3", 1, False),
]


GRID = 40  # announcements k / 40: B's Lean window (0.035 / K) holds one or two of them


def _value(machine: str, claim: int, a: str, b: str) -> tuple[float, dict]:
    game = load_game("stochastic", machine=machine, claim=claim, grid=GRID, a=a, b=b)
    value, table = expected_values(game)
    return (value + 1) / 2, table  # P[V accepts]


def _announcements(rules, claim: int, table: dict) -> list[np.ndarray] | None:
    """The solver's announcement at each history, or None if it announces honestly somewhere
    at a sampled step (a random announcement, which liar_policy_value cannot take)."""
    out = []
    for t in range(rules.steps):
        row = np.empty(1 << t)
        for h in range(1 << t):
            node = StochasticNode("announce", A, claim, round=t, history=h)
            p, known = rules.probability(node)
            entry = table.get("A " + rules.describe(node))
            best = rules.honest_action if entry is None else entry[1]  # None: unreachable
            if best == rules.honest_action and not known and entry is not None:
                return None
            row[h] = p if best == rules.honest_action else best / rules.grid
        out.append(row)
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("machine", "claim", "true"), CASES)
def test_game_values_agree_with_the_exact_optimal_adversaries(
    machine: str, claim: int, true: bool
) -> None:
    rules = load_game("stochastic", machine=machine, claim=claim, grid=GRID).rules
    m, par = rules.machine, rules.protocol_params
    disputer, liar = optimal_disputer(m, par, claim), optimal_liar(m, par, claim)
    tol = disputer.gap + liar.gap + 1e-12
    # honest A against the best B: exactly optimal_disputer's value
    honest_a, _ = _value(machine, claim, "honest", "player")
    assert abs(honest_a - disputer.value) <= tol
    # the best grid A against honest B: exactly its policy's value, at most the optimum
    grid_liar, table = _value(machine, claim, "player", "honest")
    policy = _announcements(rules, claim, table)
    assert policy is not None
    assert abs(grid_liar - liar_policy_value(m, par, claim, policy)) <= tol
    assert grid_liar <= liar.value + tol
    # both playing: between the two one-sided values (each side may play honestly)
    both, _ = _value(machine, claim, "player", "player")
    assert disputer.value - tol <= both <= grid_liar + tol
    # the theorem: a true claim is accepted w.p. >= 3/5, a false one w.p. <= 2/5
    if true:
        assert both >= disputer.value - tol >= 3 / 5
    else:
        assert both <= liar.value + tol <= 2 / 5


@pytest.mark.slow
def test_when_a_chooses_its_claim_it_takes_the_better_one() -> None:
    spec = "copy-chain:t=2,p=0.3"
    fixed = [solve(load_game("stochastic", machine=spec, claim=c, grid=GRID)) for c in (0, 1)]
    chosen = load_game("stochastic", machine=spec, claim=-1, grid=GRID)
    value, table = expected_values(chosen)
    assert solve(chosen) == value == max(fixed)
    root = "A " + chosen.rules.describe(chosen.rules.initial())
    assert table[root][1] == int(np.argmax(fixed)) == 0  # P[M = 0] = 0.7: claim 0
