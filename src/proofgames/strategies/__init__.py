"""Registered strategies for every protocol, built by name with recorded arguments.

Each protocol's strategies live in a module of their own, imported when a strategy of that
protocol is first looked up (:mod:`proofgames._builtins`): building a bisection prover
never imports the stochastic ones.

Example:
    >>> from proofgames.strategies import make_strategy
    >>> make_strategy("bisection", "A", "flip-step:at=0.3").spec.label
    'flip-step(at=0.3)'
"""

from .._registry import (
    Player,
    StrategySpec,
    check_instance,
    is_honest,
    make_strategy,
    parse_strategy,
    register_strategy,
    strategy_description,
    strategy_names,
)

__all__ = [
    "Player",
    "check_instance",
    "StrategySpec",
    "is_honest",
    "make_strategy",
    "parse_strategy",
    "register_strategy",
    "strategy_description",
    "strategy_names",
]
