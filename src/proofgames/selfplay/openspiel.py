"""The self-play rules as OpenSpiel games, and their exact values from OpenSpiel's solver.

Each protocol with registered rules (:func:`proofgames.selfplay.rules.rules_names`) is
registered with OpenSpiel as ``proofgames_<protocol>`` (``-`` becomes ``_``), with the
rules' parameters as the game's parameters.  The deterministic protocols are sequential,
perfect-information, zero-sum games with terminal rewards and no chance nodes.

:func:`solve` computes the exact minimax value with OpenSpiel's own
``MinimaxSolver``: it memoizes by the state's string, which (:meth:`Rules.describe`)
names the disputed stretch and nothing of the path to it, so positions reached by
different move orders are solved once.

Example:
    >>> game = load_game("bisection", program="1RB1LB_1LA1RZ", space=1, steps=3, claim=0)
    >>> game.num_distinct_actions(), game.get_type().short_name
    (8, 'proofgames_bisection')
    >>> solve(game)  # A's value: +1, V accepts the (true) claim whatever B does
    1.0

"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms.minimax_solver import MinimaxSolver
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from .rules import CHANCE, TERMINAL, Node, Rules, get_rules, make_rules, rules_names

__all__ = [
    "expected_values",
    "game_name",
    "load_game",
    "position_values",
    "root_action_values",
    "solve",
]

_PREFIX = "proofgames_"


def game_name(protocol: str) -> str:
    """The OpenSpiel short name of ``protocol``'s game."""
    return _PREFIX + protocol.replace("-", "_")


# OpenSpiel's game strings split on "," and "=", which a stochastic machine spec
# ("padded-query:t=2,p=0.8") contains: in the game's parameters they are "~" and ";".
_SAFE, _PLAIN = str.maketrans({"=": "~", ",": ";"}), str.maketrans({"~": "=", ";": ","})


def _parameters(params: dict[str, Any]) -> dict[str, Any]:
    """OpenSpiel's parameters: numpy values made plain, strings made safe in a game string."""
    out = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in params.items()}
    return {k: (v.translate(_SAFE) if isinstance(v, str) else v) for k, v in out.items()}


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """The rules' parameters back from OpenSpiel's (the inverse of :func:`_parameters`)."""
    return {k: (v.translate(_PLAIN) if isinstance(v, str) else v) for k, v in params.items()}


class DebateGame(pyspiel.Game):  # type: ignore[misc]
    """A debate protocol's rules as an OpenSpiel game (see the module docstring)."""

    def __init__(self, game_type: Any, params: dict[str, Any] | None = None) -> None:
        protocol = game_type.short_name[len(_PREFIX) :]
        entry = get_rules(_protocol_of(protocol))
        values = _parameters({**entry.defaults, **(params or {})})
        self.rules: Rules[Any] = make_rules(_protocol_of(protocol), **_plain(values))
        info = pyspiel.GameInfo(
            num_distinct_actions=self.rules.num_actions,
            max_chance_outcomes=self.rules.max_chance_outcomes,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.rules.max_length,
        )
        super().__init__(game_type, info, values)

    def new_initial_state(self) -> DebateState:
        """The state before A's first move."""
        return DebateState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The public (= full) observation, or OpenSpiel's history observer for info states."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _Observer(self.rules, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class DebateState(pyspiel.State):  # type: ignore[misc]
    """One debate in progress: a thin wrapper over an immutable rules state."""

    def __init__(self, game: DebateGame) -> None:
        super().__init__(game)
        self.rules = game.rules
        self.node: Node = self.rules.initial()

    def current_player(self) -> int:
        """``0`` (A), ``1`` (B), ``pyspiel.PlayerId.CHANCE`` or ``pyspiel.PlayerId.TERMINAL``."""
        if self.node.player == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        if self.node.player == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        return self.node.player

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(outcome, probability)`` pairs at a chance node (the rules' exact probabilities)."""
        return self.rules.chance_outcomes(self.node)

    def _legal_actions(self, player: int) -> list[int]:
        return [] if player != self.node.player else self.rules.legal(self.node)

    def _apply_action(self, action: int) -> None:
        self.node = self.rules.apply(self.node, action)

    def _action_to_string(self, player: int, action: int) -> str:
        who = "chance" if player == int(pyspiel.PlayerId.CHANCE) else "AB"[player]
        return f"{who}: {self.rules.action_name(self.node, action)}"

    def is_terminal(self) -> bool:
        """Whether V has decided."""
        return self.node.terminal

    def returns(self) -> list[float]:
        """``[A's, B's]``: ``[1, -1]`` if V accepted, ``[-1, 1]`` if it rejected, 0 before."""
        return list(self.rules.returns(self.node))

    def __str__(self) -> str:
        mover = {TERMINAL: "-", CHANCE: "C"}.get(self.node.player) or "AB"[self.node.player]
        return f"{mover} {self.rules.describe(self.node)}"


class _Observer:
    """The observation vector of :meth:`Rules.observe` (both players see everything)."""

    def __init__(self, rules: Rules[Any], params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        self.rules = rules
        self.tensor = np.zeros(rules.observation_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: DebateState, player: int) -> None:
        self.rules.observe(state.node, self.tensor)

    def string_from(self, state: DebateState, player: int) -> str:
        return str(state)


def _protocol_of(suffix: str) -> str:
    for name in rules_names():
        if name.replace("-", "_") == suffix:
            return name
    raise KeyError(suffix)


_CLASSES: dict[str, type] = {}


def _register(protocol: str) -> None:
    entry = get_rules(protocol)
    game_type = pyspiel.GameType(
        short_name=game_name(protocol),
        long_name=f"proofgames {protocol}: {entry.description}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if entry.chance
            else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameters(dict(entry.defaults)),
    )

    def __init__(self: DebateGame, params: dict[str, Any] | None = None) -> None:
        DebateGame.__init__(self, game_type, params)

    # a class per protocol, as OpenSpiel's own Python games register (a plain closure as
    # the factory aborts the interpreter at exit: it is freed without the GIL)
    cls = type(f"DebateGame_{protocol.replace('-', '_')}", (DebateGame,), {"__init__": __init__})
    _CLASSES[protocol] = cls
    pyspiel.register_game(game_type, cls)


def load_game(protocol: str, **params: Any) -> DebateGame:
    """``protocol``'s OpenSpiel game with ``params`` over its defaults.

    Args:
        protocol: a protocol with self-play rules (``"bisection"``).
        **params: the rules' parameters (an instance's :meth:`~TuringInstance.params`,
            ``claim``, ``horizon``).

    """
    game: DebateGame = pyspiel.load_game(game_name(protocol), _parameters(params))
    return game


def solve(game: DebateGame) -> float:
    """A's exact minimax value (``+1``: V accepts whatever B does; ``-1``: B can refute).

    OpenSpiel's ``MinimaxSolver`` searches every legal action of both players, memoizing
    positions by their string.  ``P[V accepts] = (value + 1) / 2``.  A game with chance
    nodes (the stochastic protocol) is solved by :func:`expected_values` instead.
    """
    if game.get_type().chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC:
        return expected_values(game)[0]
    return float(_solver(game).values_from_string(str(game.new_initial_state())))


def position_values(game: DebateGame) -> dict[str, float]:
    """A's exact value at every position the solver reached, keyed by the state's string.

    The strings start with the player to move (``A`` or ``B``) and the phase, so e.g. the
    positions whose string starts with ``"B challenge"`` and whose value is +1 are A's
    winning commitments in cross-examination.
    """
    table = _solver(game)._table
    return {key: (1.0 if key[0] == "A" else -1.0) * e.value for key, e in table.items()}


def root_action_values(game: DebateGame) -> dict[int, float]:
    """A's value after each of its legal first moves (its exact best responses)."""
    solver = _solver(game)
    root = game.new_initial_state()
    values = solver.action_values_from_state(root)
    return {a: float(values[a]) for a in root.legal_actions()}


class _Solver(MinimaxSolver):  # type: ignore[misc]
    """OpenSpiel's ``MinimaxSolver`` on a game object.

    Its constructor loads the game from its string, and OpenSpiel reads a string parameter
    that starts with ``-`` (a program such as ``------``) as a malformed number; this sets
    the same fields from the game itself.
    """

    def __init__(self, game: DebateGame) -> None:
        self._game_string, self._game, self._epsilon = str(game), game, 0.0
        self._table: dict[str, Any] = {}
        self._default_utility = game.min_utility() - 1
        self._num_distinct_actions = game.num_distinct_actions()


def _solver(game: DebateGame) -> Any:
    solver = _Solver(game)
    solver.solve()
    return solver


def expected_values(game: DebateGame) -> tuple[float, dict[str, tuple[float, int | None]]]:
    """A's exact value by expectiminimax, and each position's value and best action.

    For games with chance nodes (OpenSpiel's ``MinimaxSolver`` refuses them, and its
    ``expectiminimax`` searches the tree without memoizing): A maximizes, B minimizes and a
    chance node averages its outcomes with their exact probabilities; positions are memoized
    by the state's string (:meth:`Rules.describe`), so a position reached by different
    moves is solved once.  The table maps each position's string to A's value there and,
    at a player's position, the first best action (the lowest, among those within
    ``1e-12`` of the best); ``None`` at chance nodes.
    """
    table: dict[str, tuple[float, int | None]] = {}

    def value(state: DebateState) -> float:
        if state.is_terminal():
            return float(state.returns()[0])
        key = str(state)
        known = table.get(key)
        if known is not None:
            return known[0]
        best: int | None = None
        if state.is_chance_node():
            v = sum(q * value(state.child(o)) for o, q in state.chance_outcomes())
        else:
            sign = 1.0 if state.current_player() == 0 else -1.0
            actions = state.legal_actions()
            signed = [sign * value(state.child(a)) for a in actions]
            top = max(signed)
            best = next(a for a, w in zip(actions, signed, strict=True) if w >= top - 1e-12)
            v = sign * top
        table[key] = (v, best)
        return v

    return value(game.new_initial_state()), table


for _name in rules_names():
    _register(_name)
