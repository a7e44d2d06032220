"""Judges as oracles: a calculator, a scripted judge with a set error rate, and people.

Every judge implements :class:`proofgames.judging.StepJudge`.  The model judge (any
Inspect model, P[yes] from log-probabilities) is in :mod:`.model_judge`, which needs the
``language`` extra.

* :class:`CalculatorJudge` is exact on calculator annotations ``<<expr=value>>`` and blind
  to reasoning: it says a step follows iff every annotation in it computes (a real but
  weak oracle).  With ``ground_operands`` it also demands that every operand appears in
  the inputs shown (the task part or the premises).
* :class:`ScriptedJudge` answers like a reference judge but errs with probability
  ``error_rate`` on every step it reads, from an explicit seed.
* :class:`CallbackJudge` wraps an ``async`` function: the interface a human judge (the
  judge server of the issue "Human judges") implements.

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
from collections.abc import Awaitable, Callable
from fractions import Fraction

import numpy as np

from ..errors import OracleError
from ..judging import JudgeKind, Judgement, StepQuestion
from .parsers import ANNOTATION
from .transcript import as_number, numbers_in, question_tokens, whole_layout

_OPS: dict[type[ast.AST], Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
MAX_EXPR = 200


def evaluate(expr: str) -> Fraction:
    """Evaluate calculator arithmetic (numbers, + - * /, parentheses) exactly.

    Raises:
        OracleError: Anything else (names, calls, powers, division by zero, too long).

    Example:
        >>> evaluate("(16 - 3) * 2 / 4")
        Fraction(13, 2)
    """
    if len(expr) > MAX_EXPR:
        raise OracleError(f"expression longer than {MAX_EXPR} characters")
    try:
        tree = ast.parse(expr.replace(",", "").replace("x", "*").strip(), mode="eval")
    except SyntaxError as exc:
        raise OracleError(f"not arithmetic: {expr!r}") from exc
    return _eval(tree.body, expr)


def _eval(node: ast.AST, expr: str) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, expr)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left, expr), _eval(node.right, expr)
        if isinstance(node.op, ast.Div) and right == 0:
            raise OracleError(f"division by zero in {expr!r}")
        return _OPS[type(node.op)](left, right)
    raise OracleError(f"not calculator arithmetic: {expr!r}")


def annotation_holds(expr: str, value: str) -> bool:
    """True when ``expr`` computes ``value`` (to the decimals ``value`` is written with)."""
    try:
        exact = evaluate(expr)
    except OracleError:
        return False
    claimed = as_number(value)
    if claimed is None:
        return False
    decimals = len(value.split(".")[1]) if "." in value else 0
    tolerance = Fraction(1, 2 * 10**decimals) if decimals else Fraction(0)
    if "." in value and abs(exact - claimed) <= tolerance:
        return True
    return exact == claimed


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
        """The first problem with ``step`` given ``inputs``, or ``None`` if none."""
        return self._check(step, _shown(inputs) if self.ground_operands else set())

    def _check(self, step: str, shown: set[Fraction]) -> str | None:
        for expr, value in ANNOTATION.findall(step):
            if not annotation_holds(expr, value):
                return f"{expr} = {value} is false"
            if self.ground_operands:
                missing = [x for x in numbers_in(expr.replace("-", " ")) if x not in shown]
                if missing:
                    return f"operand {missing[0]} of {expr} is not in the inputs shown"
        return None

    def problems(self, question: StepQuestion) -> list[str | None]:
        """Per step judged, its first problem or ``None`` (every step for a whole question)."""
        layout = whole_layout(question)
        if layout is None:
            return [self.check(question.step, " ".join((question.task, *question.premises)))]
        task, steps = layout
        shown = _shown(task)
        out = []
        for text in steps:  # each step may use the task and every earlier step
            out.append(self._check(text, shown))
            shown |= _shown(text)
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
