"""What every self-play game provides, whatever the protocol: the rules as pure functions.

A protocol's :class:`Rules` is a small, immutable description of one debate as a
two-player, turn-based game over integer actions: who moves, which actions are legal,
the state after an action (a new value; nothing is changed in place), V's verdict once
the game ends, and a fixed-size observation vector.  The OpenSpiel game
(:mod:`proofgames.selfplay.openspiel`) and the PettingZoo environment
(:mod:`proofgames.selfplay.pettingzoo`) are thin adapters over these functions, and
neither knows which protocol it plays: a protocol joins by registering its rules here
(:func:`register_rules`), beside its ``ProtocolInfo``.

Payoffs are zero-sum: A gets ``+1`` when V accepts and ``-1`` when V rejects, B the
opposite, so ``P[V accepts] = (value_A + 1) / 2``.

An action that is not legal where it is played -- out of range, the wrong kind for the
phase, not an integer at all -- ends the game: the player who played it loses, and the
state records who and why (:attr:`Node.forfeited_by`, :attr:`Node.reason`).  It never
raises.
"""

from __future__ import annotations

import abc
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from .._registry import NameRegistry
from ..errors import ProtocolError

__all__ = [
    "A",
    "B",
    "CHANCE",
    "PLAYERS",
    "TERMINAL",
    "Node",
    "Rules",
    "as_action",
    "get_rules",
    "make_rules",
    "register_rules",
    "rules_names",
]

A, B, TERMINAL = 0, 1, -4  # player ids (TERMINAL is OpenSpiel's kTerminalPlayerId)
CHANCE = -1  # OpenSpiel's kChancePlayerId: a chance node (V's coins, oracle samples)
PLAYERS = ("A", "B")
FloatArray = NDArray[np.float32]


@dataclass(frozen=True)
class Node:
    """The part of a game state every protocol has.

    Attributes:
        phase: the protocol's name for the move due (``"terminal"`` once decided).
        player: ``A``, ``B``, ``CHANCE`` (a chance node) or ``TERMINAL``.
        claim: the output A asserts, or ``None`` while A has yet to choose it.
        verdict: V's verdict (1 accept, 0 reject) once the game is over, else ``None``.
        reason: why the game ended (V's check, or a forfeit).
        forfeited_by: ``"A"`` or ``"B"`` if that player lost by an illegal action, else ``""``.
        moves: actions played so far.

    """

    phase: str
    player: int
    claim: int | None
    verdict: int | None = None
    reason: str = ""
    forfeited_by: str = ""
    moves: int = 0

    @property
    def terminal(self) -> bool:
        """Whether V has decided."""
        return self.verdict is not None

    def __deepcopy__(self, memo: dict[int, Any]) -> Node:
        return self  # immutable: a copy is the same value (OpenSpiel deep-copies to clone)


S = TypeVar("S", bound=Node)


def check_claim(claim: object) -> None:
    """Refuse a claim setting other than -1 (A chooses), 0 or 1.

    Example:
        >>> check_claim(2)
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: claim must be -1 (A chooses), 0 or 1, got 2
    """
    if isinstance(claim, bool) or claim not in (-1, 0, 1):
        raise ProtocolError(f"claim must be -1 (A chooses), 0 or 1, got {claim!r}")


def check_steps(steps: object) -> None:
    """Refuse a number of steps that is not a positive integer."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ProtocolError(f"steps must be a positive integer, got {steps!r}")


def observe_header(phases: tuple[str, ...], state: Node, out: FloatArray) -> int:
    """Zero ``out``, then one-hot the phase, the player to move and the claim.

    The first ``len(phases) + 5`` entries of every protocol's observation; returns the
    index after them. The claim's three entries are "not chosen yet", 0 and 1.
    """
    out[:] = 0.0
    out[phases.index(state.phase)] = 1.0
    i = len(phases)
    if state.player in (A, B):
        out[i + state.player] = 1.0
    i += 2
    out[i + (0 if state.claim is None else 1 + state.claim)] = 1.0
    return i + 3


def as_action(action: object) -> int | None:
    """The action as a Python ``int``, or ``None`` if it is not an integer at all.

    Example:
        >>> as_action(3), as_action(np.int64(2)), as_action(1.5), as_action(True)
        (3, 2, None, None)

    """
    if isinstance(action, bool | np.bool_):
        return None
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        return None


class Rules(abc.ABC, Generic[S]):
    """One debate as a two-player game: the protocol-specific part.

    Attributes:
        protocol: the protocol's registered name.
        num_actions: the size of the shared action space (both players index into it).
        max_length: the most actions one game can take.
        observation_size: the length of :meth:`observe`'s vector.
        max_chance_outcomes: the most outcomes one chance node has (0: no chance nodes).

    """

    protocol: str
    num_actions: int
    max_length: int
    observation_size: int
    max_chance_outcomes: int = 0

    @abc.abstractmethod
    def initial(self) -> S:
        """The state before any move."""

    @abc.abstractmethod
    def legal(self, state: S) -> list[int]:
        """The legal actions of the player to move, ascending (empty once terminal)."""

    @abc.abstractmethod
    def apply(self, state: S, action: object) -> S:
        """The state after the player to move plays ``action`` (an illegal one forfeits)."""

    @abc.abstractmethod
    def observe(self, state: S, out: FloatArray) -> None:
        """Write the observation of ``state`` (the same for both players) into ``out``."""

    @abc.abstractmethod
    def describe(self, state: S) -> str:
        """A string that identifies the state (equal strings: the same game from here on)."""

    @abc.abstractmethod
    def action_name(self, state: S, action: int) -> str:
        """What ``action`` means in ``state``'s phase."""

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """The parameters these rules were made from (``make_rules`` rebuilds them)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Rules[S]:
        return self  # fixed once made: every copy of a game state shares its rules

    def action_features(self) -> NDArray[np.float32] | None:
        """Each action's parts, one row per action (``None``: actions are unrelated atoms).

        A protocol whose action names a composite message (a configuration: state, head,
        cells) gives its parts one-hot here, so that a policy can score the parts and
        sum the scores (:class:`~proofgames.selfplay.learn.Agent`); the game is unchanged.
        """
        return None

    def chance_outcomes(self, state: S) -> list[tuple[int, float]]:
        """At a chance node, ``(outcome, probability)`` pairs (positive, summing to 1)."""
        return []

    def returns(self, state: S) -> tuple[float, float]:
        """``(A's, B's)`` payoff: ``(1, -1)`` if V accepted, ``(-1, 1)`` if it rejected, else 0."""
        if state.verdict is None:
            return (0.0, 0.0)
        a = 1.0 if state.verdict == 1 else -1.0
        return (a, -a)

    def observation(self, state: S) -> FloatArray:
        """A fresh observation vector of ``state``."""
        out = np.zeros(self.observation_size, dtype=np.float32)
        self.observe(state, out)
        return out

    def mask(self, state: S) -> NDArray[np.int8]:
        """1 at each legal action of the player to move."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        m[self.legal(state)] = 1
        return m


@dataclass(frozen=True)
class RulesEntry:
    """A registered protocol's rules: the factory and its parameters with defaults.

    Attributes:
        make: builds the rules from keyword parameters.
        defaults: every parameter and its default (OpenSpiel needs both, typed).
        description: one line for the docs and the game's long name.
        chance: whether the game has chance nodes (OpenSpiel's explicit-stochastic mode).

    """

    make: Callable[..., Rules[Any]]
    defaults: Mapping[str, int | float | str | bool]
    description: str
    chance: bool = False


_RULES: NameRegistry[RulesEntry] = NameRegistry("self-play game")


def register_rules(protocol: str, entry: RulesEntry) -> RulesEntry:
    """Make ``protocol`` playable as a self-play game."""
    return _RULES.add(protocol, entry)


def get_rules(protocol: str) -> RulesEntry:
    """The registered entry for ``protocol`` (a clear error names the registered ones)."""
    return _RULES.get(protocol)


def rules_names() -> list[str]:
    """Every protocol playable as a self-play game."""
    return [name for name, _ in _RULES.items()]


def make_rules(protocol: str, **params: Any) -> Rules[Any]:
    """The rules of ``protocol`` with ``params`` over its defaults.

    Example:
        >>> rules = make_rules("bisection", program="1RB1LB_1LA1RZ", space=1, steps=3)
        >>> rules.protocol, rules.num_actions
        ('bisection', 8)

    """
    entry = get_rules(protocol)
    unknown = sorted(set(params) - set(entry.defaults))
    if unknown:
        raise ProtocolError(
            f"{protocol}: unknown parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(entry.defaults)}"
        )
    return entry.make(**{**entry.defaults, **params})
