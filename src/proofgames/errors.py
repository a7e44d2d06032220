"""Exceptions raised by proofgames (public: ``from proofgames.errors import ProofgamesError``).

Every error names the offending input; nothing is silently corrected.
"""

from __future__ import annotations


class ProofgamesError(Exception):
    """Base class of every error raised by proofgames.

    Example:
        Catch it to handle any bad input to proofgames in one place:

        >>> from proofgames import ProofgamesError, TuringMachine, play
        >>> for attempt in (lambda: play("nonsense"), lambda: TuringMachine.sized("1RZ", 1)):
        ...     try:
        ...         attempt()
        ...     except ProofgamesError as exc:
        ...         print(type(exc).__name__, "-", exc)  # doctest: +ELLIPSIS
        ProofgamesError - unknown protocol 'nonsense'; choose one of bisection, ...
        MachineFormatError - state A's group '1RZ' gives 1 symbol(s) ...
    """


class MachineFormatError(ProofgamesError, ValueError):
    """A machine description (text format, table, relevant set) is malformed.

    Example:
        >>> from proofgames import TuringMachine
        >>> TuringMachine.sized("nonsense", 3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.MachineFormatError: state A's group 'nonsense' has 8 characters; ...
    """


class ConfigurationError(ProofgamesError, ValueError):
    """A configuration is not well formed for its machine (wrong size, bad symbol, ...).

    Example:
        A configuration of 3 cells, checked against a machine whose window is 4 cells:

        >>> from proofgames import Configuration, TuringMachine
        >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
        >>> tm.validate(Configuration(state=0, head=1, tape=bytes(3)))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ConfigurationError: configuration has 3 tape cells; ... uses S = 4
    """


class OracleError(ProofgamesError, ValueError):
    """An oracle misbehaved, e.g. answered something that is not a bit.

    Example:
        >>> from proofgames import FunctionOracle
        >>> judge = FunctionOracle(lambda z: 2, name="judge")
        >>> judge.answer(bytes([0]), None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.OracleError: oracle 'judge' answered 2 to query [0]; an answer must ...
    """


class ProtocolError(ProofgamesError, ValueError):
    """A protocol was invoked with arguments it cannot accept (e.g. ``steps <= 0``).

    Example:
        >>> from proofgames import TuringMachine
        >>> TuringMachine.sized("1RB1LB_1LA1RZ", steps=0)
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: steps T must be positive, got 0
    """


class RegistryError(ProofgamesError, KeyError):
    """A name is not registered, or was registered twice.

    Example:
        It is also a ``KeyError``, with a readable message naming what is registered:

        >>> from proofgames import make_strategy
        >>> try:
        ...     make_strategy("bisection", "A", "nobody")
        ... except KeyError as exc:
        ...     print(type(exc).__name__, "-", exc)  # doctest: +ELLIPSIS
        RegistryError - no strategy 'nobody' for bisection prover A; registered: honest, ...
    """

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


class SpecError(RegistryError, ValueError):
    """A spec (``name:key=value,...``) is malformed or does not fit its factory's signature."""


class TranscriptFormatError(ProofgamesError, ValueError):
    """A step transcript (or text meant to be one, or a number in it) is malformed.

    Example:
        >>> from proofgames.judges.text import read_number
        >>> read_number("twelve")
        Traceback (most recent call last):
        ...
        proofgames.errors.TranscriptFormatError: 'twelve' is not a number
    """


class PVGError(ProofgamesError, ValueError):
    """A Prover-Verifier Games input is unusable: a setting, a checkpoint, a file, a folder."""


class TrainingStopped(ProofgamesError):
    """A resumable PVG training run was asked to stop (SIGTERM, SIGINT) and saved its state."""


class DebateStopped(OracleError):
    """A debate ended with no verdict, and no one forfeits.

    Its judge failed, the judge budget is spent, or the model behind one of the
    library's own provers failed. A batch counts it and goes on (a spent budget ends the
    batch).

    Attributes:
        kind: ``"judge"``, ``"budget"`` or ``"model"``.
        costs: what the debate had cost when it stopped (a :class:`DebateCosts`).

    Example:
        >>> exc = DebateStopped("budget", "judge budget spent: 1 of 1 calls")
        >>> exc.kind, str(exc)
        ('budget', 'run stopped: judge budget spent: 1 of 1 calls')
    """

    def __init__(self, kind: str, reason: str, costs: object = None) -> None:
        super().__init__(f"run stopped: {reason}")
        self.kind, self.costs = kind, costs


def require_type(what: str, value: object, kind: type, example: str) -> None:
    """Raise :class:`ProtocolError` unless ``value`` is a ``kind``.

    A protocol's function given something else (a number for a machine, say) would
    otherwise fail deep inside with a bare ``AttributeError``.

    Example:
        >>> require_type("machine", 42, str, "'bb4'")
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: machine must be a str (for example 'bb4'), got int 42
    """
    if not isinstance(value, kind):
        shown = repr(value)[:60]
        raise ProtocolError(
            f"{what} must be a {kind.__name__} (for example {example}), "
            f"got {type(value).__name__} {shown}"
        )
