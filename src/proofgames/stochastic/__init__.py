"""Stochastic-oracle debate: machines with known oracle probabilities, parameters, harness.

Each public name is imported from its submodule on first use, so importing one submodule
(the lockstep simulator needs only :mod:`.model` and :mod:`.params`) does not load the rest.

Example:
    >>> from proofgames.stochastic import StochasticParams
    >>> StochasticParams.__module__
    'proofgames.stochastic.params'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: ``{public name: the submodule that defines it}``, imported on first use.
_EXPORTS: dict[str, str] = {
    "K_DEFINITIONS": "hypothesis",
    "hypothesis_lipschitz": "hypothesis",
    "machine_params": "hypothesis",
    "LipschitzBounds": "lipschitz",
    "acceptance_probability": "lipschitz",
    "exact_lipschitz": "lipschitz",
    "lipschitz_bounds": "lipschitz",
    "require_lipschitz": "lipschitz",
    "make_stochastic_machine": "machines",
    "register_stochastic_machine": "machines",
    "stochastic_machine_names": "machines",
    "StochasticBuilder": "model",
    "StochasticMachine": "model",
    "StochasticStep": "model",
    "OptimizedParams": "optimize",
    "optimize_params": "optimize",
    "StochasticParams": "params",
    "hoeffding_samples": "params",
    "lean_params": "params",
    "paper_params": "params",
    "resolve_params": "params",
    "optimize_tight": "tight",
    "tight_conditions": "tight",
}

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


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ loads them
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
    from .params import (
        StochasticParams,
        hoeffding_samples,
        lean_params,
        paper_params,
        resolve_params,
    )
    from .tight import optimize_tight, tight_conditions
