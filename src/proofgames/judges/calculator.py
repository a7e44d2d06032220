"""The calculator judge: exact on calculator annotations, blind to reasoning.

:class:`CalculatorJudge` says a step follows iff every annotation ``<<expr=value>>`` in
it computes (a real but weak oracle). An annotation it cannot check -- not calculator
arithmetic (names, powers, ``inf``, ``nan``, Python-only literals such as ``0b1``), a
division by zero, a number too large to work with exactly (beyond
:data:`~.text.MAX_DIGITS` digits) -- does not compute, so the step does not follow: every
input gets a verdict, never an exception. With ``ground_operands`` (the
``calculator-grounded`` judge) it also demands that every operand appears in the inputs
shown (the task part or the premises): under bisection V never reads A's transcript, so
a dishonest A can let its copies quietly "fix" the wrong step with an operand that
appears nowhere in what they read; the calculator accepts that step, the grounded one
rejects it.

Example:
    >>> import asyncio
    >>> from proofgames.judges import StepQuestion
    >>> q = StepQuestion(task="Tom has 3 apples. He buys 2 more.", premises=(),
    ...                  step="He has 3 + 2 = <<3+2=6>>6 apples.")
    >>> asyncio.run(CalculatorJudge().judge(q)).p_yes
    0.0
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Callable
from fractions import Fraction

from ..errors import OracleError, TranscriptFormatError
from .interface import JudgeKind, Judgement, StepQuestion
from .text import (
    ANNOTATION,
    MAX_DIGITS,
    NUMBER,
    numbers_in,
    question_tokens,
    read_number,
    whole_layout,
)

_OPS: dict[type[ast.AST], Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
MAX_EXPR = 200
_MAX_BITS = int(MAX_DIGITS * 3.33)  # about MAX_DIGITS decimal digits


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else f"{text[:30]}...{text[-6:]}")


def evaluate(expr: str) -> Fraction:
    """Evaluate calculator arithmetic (decimal numbers, + - * /, parentheses) exactly.

    A number may carry a power of ten (``2.5e3``) and is read exactly, never as a float.

    Raises:
        OracleError: Anything else: names (``inf``, ``nan``), calls, powers (``**``),
            literals only Python reads (``0b1``, ``1_000``), division by zero, a number
            or result of more than :data:`~.transcript.MAX_DIGITS` digits, or an
            expression longer than :data:`MAX_EXPR` characters.

    Example:
        >>> evaluate("(16 - 3) * 2 / 4"), evaluate("1e3 + 1e-3")
        (Fraction(13, 2), Fraction(1000001, 1000))
        >>> evaluate("1e999999")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.OracleError: the number '1e999999' is too large to read ...
    """
    if not isinstance(expr, str):
        raise OracleError(f"an expression must be text, not {type(expr).__name__}")
    if len(expr) > MAX_EXPR:
        raise OracleError(f"expression longer than {MAX_EXPR} characters")
    source = expr.replace(",", "").replace("x", "*").strip()
    try:
        with warnings.catch_warnings():  # e.g. "invalid decimal literal" on 1e5e
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise OracleError(f"not arithmetic: {_short(expr)}") from None
    return _eval(tree.body, source, expr)


def _literal(node: ast.Constant, source: str, expr: str) -> Fraction:
    text = ast.get_source_segment(source, node) or ""
    if type(node.value) not in (int, float) or NUMBER.fullmatch(text) is None:
        raise OracleError(f"{_short(text)} is not a calculator number in {_short(expr)}")
    try:
        return read_number(text)
    except TranscriptFormatError as exc:
        raise OracleError(str(exc)) from None


def _eval(node: ast.AST, source: str, expr: str) -> Fraction:
    if isinstance(node, ast.Constant):
        return _literal(node, source, expr)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, source, expr)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left, source, expr), _eval(node.right, source, expr)
        if isinstance(node.op, ast.Div) and right == 0:
            raise OracleError(f"division by zero in {_short(expr)}")
        value = _OPS[type(node.op)](left, right)
        if max(abs(value.numerator).bit_length(), value.denominator.bit_length()) > _MAX_BITS:
            raise OracleError(f"a result in {_short(expr)} has more than {MAX_DIGITS:,} digits")
        return value
    raise OracleError(f"not calculator arithmetic: {_short(expr)}")


def annotation_problem(expr: str, value: str) -> str | None:
    """Why the annotation ``<<expr=value>>`` does not hold, or ``None`` when it does.

    It holds when ``expr`` computes the first number written in ``value`` exactly, or to
    the decimals that number is written with.  An expression or a value that cannot be
    checked (see :func:`evaluate`) does not hold; this function never raises.

    Example:
        >>> annotation_problem("10/3", "3.33") is None, annotation_problem("2+2", "5")
        (True, "'2+2' = '5' is false")
        >>> annotation_problem("1e999", "6")
        "'1e999' = '6' is false"
        >>> annotation_problem("inf", "6")
        "'inf' = '6' cannot be checked: not calculator arithmetic: 'inf'"
    """
    try:
        exact = evaluate(expr)
        found = NUMBER.search(value) if isinstance(value, str) else None
        if found is None:
            return f"{_short(expr)} = {_short(str(value))} claims no number"
        claimed = read_number(found.group(0))
    except (OracleError, TranscriptFormatError) as exc:
        return f"{_short(expr)} = {_short(str(value))} cannot be checked: {exc}"
    mantissa, _, power = found.group(0).lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) - int(power or 0)  # as written, <= MAX_DIGITS
    rounded = decimals > 0 and abs(exact - claimed) * 2 * 10**decimals <= 1
    if exact == claimed or rounded:
        return None
    return f"{_short(expr)} = {_short(value)} is false"


def annotation_holds(expr: str, value: str) -> bool:
    """True when ``expr`` computes ``value`` (see :func:`annotation_problem`); never raises.

    Example:
        >>> annotation_holds("2*0.5", "1.0"), annotation_holds("1/0", "1")
        (True, False)
    """
    return annotation_problem(expr, value) is None


def _shown(inputs: str) -> set[Fraction]:
    return set(numbers_in(ANNOTATION.sub(r" \2 ", inputs)))


class CalculatorJudge:
    """Exact on ``<<expr=value>>`` annotations, blind to reasoning.

    Args:
        ground_operands: Also demand that each operand is written in the inputs shown.
        name: Name recorded in outcomes.
    """

    kind: JudgeKind = "calculator"

    def __init__(self, ground_operands: bool = False, name: str = "calculator") -> None:
        self.ground_operands = ground_operands
        self.name = name

    def check(self, step: str, inputs: str) -> str | None:
        """The first problem with ``step`` given ``inputs``, or ``None`` if none.

        Never raises: what cannot be checked is a problem (see the module doc).
        """
        try:
            return self._check(step, _shown(inputs) if self.ground_operands else set())
        except TranscriptFormatError as exc:  # a number too large to read, when grounding
            return f"cannot be checked: {exc}"

    def _check(self, step: str, shown: set[Fraction]) -> str | None:
        for expr, value in ANNOTATION.findall(step):
            problem = annotation_problem(expr, value)
            if problem is not None:
                return problem
            if self.ground_operands:
                missing = [x for x in numbers_in(expr.replace("-", " ")) if x not in shown]
                if missing:
                    return f"operand {missing[0]} of {_short(expr)} is not in the inputs shown"
        return None

    def problems(self, question: StepQuestion) -> list[str | None]:
        """Per step judged, its first problem or ``None`` (every step for a whole question)."""
        layout = whole_layout(question)
        if layout is None:
            return [self.check(question.step, " ".join((question.task, *question.premises)))]
        task, steps = layout
        try:
            shown = _shown(task) if self.ground_operands else set()
            out = []
            for text in steps:  # each step may use the task and every earlier step
                out.append(self._check(text, shown))
                if self.ground_operands:
                    shown |= _shown(text)
        except TranscriptFormatError as exc:  # a number too large to read, when grounding
            return [f"cannot be checked: {exc}"] * len(steps)
        return out

    async def judge(self, question: StepQuestion) -> Judgement:
        """Check the step's annotations (every step's, for a whole-transcript question)."""
        problem = next((p for p in self.problems(question) if p is not None), None)
        return Judgement(
            p_yes=0.0 if problem else 1.0,
            input_tokens=question_tokens(question),
            detail={"judge": self.name, "problem": problem or ""},
        )
