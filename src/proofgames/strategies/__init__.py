"""Registered strategies for every protocol, built by name with recorded arguments."""

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
from . import bisection as _bisection  # noqa: F401  (registers)
from . import cross_examination as _cross_examination  # noqa: F401  (registers)
from . import stochastic as _stochastic  # noqa: F401  (registers)
from . import stochastic_witness as _stochastic_witness  # noqa: F401  (registers)
from . import witness as _witness  # noqa: F401  (registers)

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
