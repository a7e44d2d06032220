"""proofgames: interactive-proof games for AI oversight.

The front door: what the README's Python section uses is importable from here, and
loaded only when first used (``import proofgames`` stays light).

Example:
    >>> from proofgames import play
    >>> out = play("bisection", "tm:1RB1LB_1LA1RZ", steps=6, claim=0, a="flip-step", b="honest")
    >>> out.winner, out.forfeit
    ('B', None)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _moved

__version__ = "0.1.0"
_moved.install()

#: ``{public name: the module that defines it}``, imported on first use.
_EXPORTS: dict[str, str] = {
    # playing debates
    "play": "proofgames.harness",
    "play_batch": "proofgames.harness",
    "resolve_instance": "proofgames.instances",
    "Outcome": "proofgames.protocols",
    "Batch": "proofgames.protocols",
    "Instance": "proofgames.protocols",
    "play_bisection": "proofgames.protocols",
    "play_cross_examination": "proofgames.protocols",
    "play_witness": "proofgames.protocols",
    "play_stochastic": "proofgames.protocols",
    "get_protocol": "proofgames.protocols",
    "protocol_names": "proofgames.protocols",
    "register_protocol": "proofgames.protocols",
    # strategies
    "make_strategy": "proofgames.strategies",
    "register_strategy": "proofgames.strategies",
    "strategy_names": "proofgames.strategies",
    # machines and oracles
    "TuringMachine": "proofgames.machines",
    "TableauTranscript": "proofgames.machines",
    "Configuration": "proofgames._configuration",
    "ConfigurationMachine": "proofgames._configuration",
    "CheckpointedRun": "proofgames._configuration",
    "TranscriptMachine": "proofgames._transcript",
    "TranscriptBuilder": "proofgames._transcript",
    "ExplicitTranscriptMachine": "proofgames._transcript",
    "Step": "proofgames._transcript",
    "gates": "proofgames._transcript",
    "Oracle": "proofgames._oracle",
    "OracleLedger": "proofgames._oracle",
    "OracleView": "proofgames._oracle",
    "FunctionOracle": "proofgames._oracle",
    "TableOracle": "proofgames._oracle",
    "BernoulliOracle": "proofgames._oracle",
    # exact analysis and stochastic debate
    "exact_completeness_soundness": "proofgames.analysis.exhaustive",
    "make_stochastic_machine": "proofgames.stochastic.machines",
    "machine_params": "proofgames.stochastic.hypothesis",
    "estimate_acceptance": "proofgames.experiments.montecarlo",
    "optimal_liar": "proofgames.stochastic.optimal",
    # errors
    "ProofgamesError": "proofgames.errors",
    "ConfigurationError": "proofgames.errors",
    "MachineFormatError": "proofgames.errors",
    "OracleError": "proofgames.errors",
    "ProtocolError": "proofgames.errors",
    "RegistryError": "proofgames.errors",
}

__all__ = [
    "__version__",
    "Batch",
    "BernoulliOracle",
    "CheckpointedRun",
    "Configuration",
    "ConfigurationError",
    "ConfigurationMachine",
    "ExplicitTranscriptMachine",
    "FunctionOracle",
    "Instance",
    "MachineFormatError",
    "Oracle",
    "OracleError",
    "OracleLedger",
    "OracleView",
    "Outcome",
    "ProofgamesError",
    "ProtocolError",
    "RegistryError",
    "Step",
    "TableOracle",
    "TableauTranscript",
    "TranscriptBuilder",
    "TranscriptMachine",
    "TuringMachine",
    "estimate_acceptance",
    "exact_completeness_soundness",
    "gates",
    "get_protocol",
    "machine_params",
    "make_stochastic_machine",
    "make_strategy",
    "optimal_liar",
    "play",
    "play_batch",
    "play_bisection",
    "play_cross_examination",
    "play_stochastic",
    "play_witness",
    "protocol_names",
    "register_protocol",
    "register_strategy",
    "resolve_instance",
    "strategy_names",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'proofgames' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ loads them
    from ._configuration import CheckpointedRun, Configuration, ConfigurationMachine
    from ._oracle import (
        BernoulliOracle,
        FunctionOracle,
        Oracle,
        OracleLedger,
        OracleView,
        TableOracle,
    )
    from ._transcript import (
        ExplicitTranscriptMachine,
        Step,
        TranscriptBuilder,
        TranscriptMachine,
        gates,
    )
    from .analysis.exhaustive import exact_completeness_soundness
    from .errors import (
        ConfigurationError,
        MachineFormatError,
        OracleError,
        ProofgamesError,
        ProtocolError,
        RegistryError,
    )
    from .experiments.montecarlo import estimate_acceptance
    from .harness import play, play_batch
    from .instances import resolve_instance
    from .machines import TableauTranscript, TuringMachine
    from .protocols import (
        Batch,
        Instance,
        Outcome,
        get_protocol,
        play_bisection,
        play_cross_examination,
        play_stochastic,
        play_witness,
        protocol_names,
        register_protocol,
    )
    from .stochastic.hypothesis import machine_params
    from .stochastic.machines import make_stochastic_machine
    from .stochastic.optimal import optimal_liar
    from .strategies import make_strategy, register_strategy, strategy_names
