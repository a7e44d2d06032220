"""Judges by name: the specs the command line and the experiments take, and the defaults.

=========================  =================================================================
spec                       judge
=========================  =================================================================
``calculator``             :class:`~.calculator.CalculatorJudge`: every annotation computes
``calculator-grounded``    the same, and every operand appears in the inputs shown
``scripted:E``             :class:`~.scripted.ScriptedJudge`: the grounded calculator's
                           answers, each step wrong with probability E (seeded)
``model`` / ``model:NAME`` :class:`~.model.ModelJudge`: the Inspect model in role ``judge``,
                           or the model NAME (loaded before any debate; ``language`` extra)
``flip:SPEC``              the judge SPEC asked the negated question (:mod:`.controls`)
``swap:SPEC``              the judge SPEC shown a step's premises in reverse order
=========================  =================================================================

A person judges through the judge server (:class:`~.human.HumanJudge`, built with the
server's URL and a token, not by a spec). :func:`default_judge` names the judge a
protocol uses when none is given: the grounded calculator under bisection (V never reads
A's transcript there, see :mod:`.calculator`), the calculator otherwise.

Example:
    >>> default_judge("bisection"), default_judge("cross-examination")
    ('calculator-grounded', 'calculator')
    >>> make_judge("calculator-grounded", seed=0).name
    'calculator'
"""

from __future__ import annotations

from ..errors import OracleError, ProtocolError
from .calculator import CalculatorJudge
from .controls import CONTROLS, controlled
from .interface import StepJudge
from .scripted import ScriptedJudge

DEFAULT_JUDGES = {"bisection": "calculator-grounded"}
"""The judge spec each protocol uses by default; any other protocol: ``calculator``."""


def default_judge(protocol: str) -> str:
    """The judge spec ``protocol`` uses when none is given.

    Example:
        >>> default_judge("consultancy")
        'calculator'
    """
    return DEFAULT_JUDGES.get(protocol, "calculator")


def make_judge(spec: str, seed: int) -> StepJudge:
    """A judge from its spec (see the module doc); ``seed`` seeds a scripted judge.

    Raises:
        ProtocolError: an unknown spec, or an error rate that is not a number.
        OracleError: a named model that cannot be loaded (before any debate).

    Example:
        >>> make_judge("scripted:0.1", seed=0).error_rate
        0.1
    """
    control, _, inner = spec.partition(":")
    if control in CONTROLS:  # flip:SPEC, swap:SPEC (a model or a person only)
        return controlled(control, make_judge(inner, seed))
    if spec in ("calculator", "calculator-grounded"):
        return CalculatorJudge(ground_operands=spec == "calculator-grounded")
    if spec.startswith("scripted:"):
        try:
            rate = float(spec.split(":", 1)[1])
        except ValueError:
            raise ProtocolError(f"judge {spec!r}: the error rate must be a number") from None
        return ScriptedJudge(CalculatorJudge(ground_operands=True), rate, seed=seed)
    if spec == "model" or spec.startswith("model:"):
        from .model import ModelJudge  # needs inspect-ai

        judge = ModelJudge(spec.split(":", 1)[1] if ":" in spec else None)
        if ":" in spec:  # a named model: load it now, so a bad name measures nothing
            try:
                judge.model()
            except Exception as exc:
                raise OracleError(f"judge {spec!r} cannot be used: {exc}") from None
        return judge
    raise ProtocolError(
        f"unknown judge {spec!r}: use calculator, calculator-grounded, scripted:E or "
        "model[:NAME], perhaps under flip: or swap:"
    )
