"""proofgames: interactive-proof games for AI oversight."""

from . import _moved
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
from .errors import (
    ConfigurationError,
    MachineFormatError,
    OracleError,
    ProofgamesError,
    ProtocolError,
    RegistryError,
)

__version__ = "0.1.0"
_moved.install()

__all__ = [
    "BernoulliOracle",
    "CheckpointedRun",
    "Configuration",
    "ConfigurationError",
    "ConfigurationMachine",
    "ExplicitTranscriptMachine",
    "FunctionOracle",
    "MachineFormatError",
    "Oracle",
    "OracleError",
    "OracleLedger",
    "OracleView",
    "ProofgamesError",
    "ProtocolError",
    "RegistryError",
    "Step",
    "TableOracle",
    "TranscriptBuilder",
    "TranscriptMachine",
    "__version__",
    "gates",
]
