"""Exceptions raised by proofgames (public: ``from proofgames.errors import ProofgamesError``).

Every error names the offending input; nothing is silently corrected.
"""

from __future__ import annotations


class ProofgamesError(Exception):
    """Base class of every error raised by proofgames."""


class MachineFormatError(ProofgamesError, ValueError):
    """A machine description (text format, table, relevant set) is malformed."""


class ConfigurationError(ProofgamesError, ValueError):
    """A configuration is not well formed for its machine (wrong size, bad symbol, ...)."""


class OracleError(ProofgamesError, ValueError):
    """An oracle misbehaved, e.g. answered something that is not a bit."""


class ProtocolError(ProofgamesError, ValueError):
    """A protocol was invoked with arguments it cannot accept (e.g. ``steps <= 0``)."""


class RegistryError(ProofgamesError, KeyError):
    """A name is not registered, or was registered twice."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


class SpecError(RegistryError, ValueError):
    """A spec (``name:key=value,...``) is malformed or does not fit its factory's signature."""


class PVGError(ProofgamesError, ValueError):
    """A Prover-Verifier Games input is unusable: a setting, a checkpoint, a file, a folder."""


class TrainingStopped(ProofgamesError):
    """A resumable PVG training run was asked to stop (SIGTERM, SIGINT) and saved its state."""
