"""Judges as oracles: a calculator, a scripted judge with a set error rate, and people.

Every judge implements :class:`proofgames.judging.StepJudge`.  The model judge (any
Inspect model, P[yes] from log-probabilities) is in :mod:`.model_judge`, which needs the
``language`` extra.

* :class:`CalculatorJudge` is exact on calculator annotations ``<<expr=value>>`` and blind
  to reasoning: it says a step follows iff every annotation in it computes (a real but
  weak oracle).  An annotation it cannot check -- not calculator arithmetic (names,
  powers, ``inf``, ``nan``, Python-only literals such as ``0b1``), a division by zero, a
  number too large to work with exactly (beyond :data:`~.transcript.MAX_DIGITS` digits)
  -- does not compute, so the step does not follow: every input gets a verdict, never an
  exception.  With ``ground_operands`` it also demands that every operand appears in the
  inputs shown (the task part or the premises).
* :class:`ScriptedJudge` answers like a reference judge but errs with probability
  ``error_rate`` on every step it reads, from an explicit seed.
* :class:`CallbackJudge` wraps an ``async`` function: the interface a human judge (the
  judge server of the issue "Human judges") implements.

A judge that cannot answer raises :class:`JudgeFailed` (an
:class:`~proofgames.errors.OracleError`): the run stops as ``"judge"``, no party forfeits
and nothing is measured.

:func:`default_judge` names the judge a protocol uses when none is given: the grounded
calculator under bisection, the calculator otherwise.  Under bisection V never reads A's
transcript, so a dishonest A can let its independent copies quietly "fix" the wrong step
(restate it with an operand that makes its arithmetic true but that appears nowhere in
what it reads); the calculator, blind to where operands come from, accepts that step,
and the grounded calculator rejects it.

Example:
    >>> import asyncio
    >>> from proofgames.judging import StepQuestion
    >>> q = StepQuestion(task="Tom has 3 apples. He buys 2 more.", premises=(),
    ...                  step="He has 3 + 2 = <<3+2=6>>6 apples.")
    >>> asyncio.run(CalculatorJudge().judge(q)).p_yes
    0.0
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Awaitable, Callable
from fractions import Fraction

import numpy as np

from ..errors import OracleError
from ..judging import JudgeKind, Judgement, StepQuestion
from .parsers import ANNOTATION
from .transcript import (
    MAX_DIGITS,
    NUMBER,
    TranscriptFormatError,
    numbers_in,
    question_tokens,
    read_number,
    whole_layout,
)

DEFAULT_JUDGES = {"bisection": "calculator-grounded"}
"""The judge spec each protocol uses by default; any other protocol: ``calculator``."""


class JudgeFailed(OracleError):
    """The judge failed (not a verdict): the run stops as ``"judge"``; the message says why."""


def default_judge(protocol: str) -> str:
    """The judge spec ``protocol`` uses when none is given.

    Example:
        >>> default_judge("bisection"), default_judge("cross-examination")
        ('calculator-grounded', 'calculator')
    """
    return DEFAULT_JUDGES.get(protocol, "calculator")


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


class ScriptedJudge:
    """A reference judge's answers, each step wrong with probability ``error_rate``.

    The judge reads every step shown to it as judged (one step for a step question,
    every step for a whole-transcript question) and errs on each independently; it says
    yes iff it accepts every step.  Draws come from ``SeedSequence(seed)``.

    Args:
        reference: The judge whose answers are the truth (e.g. an exact calculator).
        error_rate: Probability in [0, 1/2) of a wrong answer on each step read.
        seed: Seed of the judge's random draws.
        report_probability: Return the exact P[yes] instead of a sampled 0/1 answer
            (as a log-probability model judge does).
    """

    kind: JudgeKind = "scripted"

    def __init__(
        self,
        reference: CalculatorJudge,
        error_rate: float,
        seed: int,
        report_probability: bool = False,
        name: str = "scripted",
    ) -> None:
        if not isinstance(error_rate, (int, float)) or not 0.0 <= error_rate < 0.5:
            raise OracleError(
                f"a scripted judge's error_rate must lie in [0, 0.5), not {error_rate!r}"
            )
        self.reference, self.error_rate = reference, float(error_rate)
        self.report_probability = report_probability
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))
        self.name = name

    def _truths(self, question: StepQuestion) -> list[bool]:
        return [p is None for p in self.reference.problems(question)]

    def probability(self, question: StepQuestion) -> float:
        """P[yes]: each true step accepted w.p. 1 - e, each false one w.p. e."""
        e = self.error_rate
        return float(np.prod([1.0 - e if ok else e for ok in self._truths(question)]))

    async def judge(self, question: StepQuestion) -> Judgement:
        """One answer: a Bernoulli(P[yes]) draw, or P[yes] itself."""
        p = self.probability(question)
        answer = p if self.report_probability else float(self.rng.random() < p)
        return Judgement(
            p_yes=answer,
            input_tokens=question_tokens(question),
            detail={"judge": self.name, "error_rate": self.error_rate},
        )


class CallbackJudge:
    """A judge answering through an ``async`` callback (e.g. people, through a server).

    Args:
        answer: ``async (question) -> Judgement``.
        name: Name recorded in outcomes.
        kind: ``"human"`` by default.

    Example:
        >>> import asyncio
        >>> async def person(q: StepQuestion) -> Judgement:
        ...     return Judgement(p_yes=1.0, human_judgements=1)
        >>> j = CallbackJudge(person)
        >>> asyncio.run(j.judge(StepQuestion(task="", premises=(), step="1 = 1"))).verdict
        True
    """

    def __init__(
        self,
        answer: Callable[[StepQuestion], Awaitable[Judgement]],
        name: str = "human",
        kind: JudgeKind = "human",
    ) -> None:
        self._answer, self.name, self.kind = answer, name, kind

    async def judge(self, question: StepQuestion) -> Judgement:
        """Ask the callback; anything but a :class:`Judgement` is the judge's failure."""
        result = await self._answer(question)
        if not isinstance(result, Judgement):
            raise OracleError(f"judge {self.name!r} answered {result!r}, not a Judgement")
        return result
