"""Stochastic-oracle debate: machines with known oracle probabilities, parameters, harness."""

from .hypothesis import K_DEFINITIONS, hypothesis_lipschitz, machine_params
from .lipschitz import (
    LipschitzBounds,
    acceptance_probability,
    exact_lipschitz,
    lipschitz_bounds,
    require_lipschitz,
)
from .machines import (
    make_stochastic_machine,
    register_stochastic_machine,
    stochastic_machine_names,
)
from .model import StochasticBuilder, StochasticMachine, StochasticStep
from .optimize import OptimizedParams, optimize_params
from .params import StochasticParams, hoeffding_samples, lean_params, paper_params, resolve_params
from .tight import optimize_tight, tight_conditions

__all__ = [
    "K_DEFINITIONS",
    "LipschitzBounds",
    "OptimizedParams",
    "StochasticBuilder",
    "StochasticMachine",
    "StochasticParams",
    "StochasticStep",
    "acceptance_probability",
    "exact_lipschitz",
    "hoeffding_samples",
    "hypothesis_lipschitz",
    "lean_params",
    "lipschitz_bounds",
    "machine_params",
    "make_stochastic_machine",
    "optimize_params",
    "optimize_tight",
    "paper_params",
    "register_stochastic_machine",
    "require_lipschitz",
    "resolve_params",
    "stochastic_machine_names",
    "tight_conditions",
]
