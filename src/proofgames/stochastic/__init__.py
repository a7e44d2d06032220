"""Stochastic-oracle debate: machines with known oracle probabilities, parameters, harness."""

from .lipschitz import (
    LipschitzBounds,
    acceptance_probability,
    exact_lipschitz,
    lipschitz_bounds,
    require_lipschitz,
)
from .machine import StochasticBuilder, StochasticMachine, StochasticStep
from .machines import (
    make_stochastic_machine,
    register_stochastic_machine,
    stochastic_machine_names,
)
from .params import StochasticParams, hoeffding_samples, lean_params, paper_params, resolve_params

__all__ = [
    "LipschitzBounds",
    "StochasticBuilder",
    "StochasticMachine",
    "StochasticParams",
    "StochasticStep",
    "acceptance_probability",
    "exact_lipschitz",
    "hoeffding_samples",
    "lean_params",
    "lipschitz_bounds",
    "make_stochastic_machine",
    "paper_params",
    "register_stochastic_machine",
    "require_lipschitz",
    "resolve_params",
    "stochastic_machine_names",
]
