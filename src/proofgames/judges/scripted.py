"""Judges with a set error rate, and judges that answer through a callback.

* :class:`ScriptedJudge` answers like a reference judge (an exact calculator) but errs
  with probability ``error_rate`` on every step it reads, from an explicit seed: the
  stochastic oracle of Figure 1 with a known P[yes].
* :class:`CallbackJudge` wraps an ``async`` function: what a person answering through a
  server (:class:`~.human.HumanJudge`) or any external judge implements.

Example:
    >>> import asyncio
    >>> from proofgames.judges import CalculatorJudge, StepQuestion
    >>> j = ScriptedJudge(CalculatorJudge(), 0.1, seed=0, report_probability=True)
    >>> asyncio.run(j.judge(StepQuestion(task="", premises=(), step="<<1+1=2>>2"))).p_yes
    0.9
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import numpy as np

from ..errors import OracleError
from .calculator import CalculatorJudge
from .interface import JudgeKind, Judgement, StepQuestion
from .text import question_tokens


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
