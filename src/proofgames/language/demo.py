"""The demo debate: a three-step sum, a lie at its middle step, judged one step at a time.

The judge server's demo and its end-to-end tests play this debate on the engine every
transcript debate uses (:func:`~.protocols.cross_examination`): A stands by the lying
transcript, B (honest) disputes its first wrong step, and the judge -- a person through
the judge server, or any :class:`~proofgames.judges.StepJudge` -- is asked one question:
whether that step follows from the task and A's earlier steps.

Example:
    >>> import asyncio
    >>> from proofgames.judges import Judgement
    >>> class Checker:  # a calculator judge for the doctest
    ...     name, kind = "checker", "calculator"
    ...     async def judge(self, question):
    ...         return Judgement(p_yes=float("36" not in question.step))
    >>> out = asyncio.run(demo_debate(Checker()))
    >>> out.winner, out.details["disputed_step"], demo_question().step
    ('B', 1, 'So 7 * 5 = 36.')
"""

from __future__ import annotations

from ..judges.interface import StepJudge, StepQuestion
from ..protocols import Outcome
from .costs import JudgeLedger
from .protocols import cross_examination
from .provers import ReferenceB, ScriptedA
from .transcript import ArgumentStep, StepTranscript

DEMO_TASK = "Compute ((3 + 4) * 5) - 6, one operation per step."


def _transcript(steps: tuple[tuple[str, str], ...]) -> StepTranscript:
    """Each step uses the task and every earlier step (what the judge is shown)."""
    return StepTranscript(
        task=(DEMO_TASK,),
        steps=tuple(
            ArgumentStep(text, tuple(range(t)), (0,), result)
            for t, (text, result) in enumerate(steps)
        ),
        answer=steps[-1][1],
    )


def honest_transcript() -> StepTranscript:
    """The demo task worked out correctly: three steps, answer 29."""
    return _transcript((("First, 3 + 4 = 7.", "7"), ("So 7 * 5 = 35.", "35"),
                        ("So 35 - 6 = 29.", "29")))  # fmt: skip


def lying_transcript() -> StepTranscript:
    """A lie at the middle step, every later step consistent with it: answer 30."""
    return _transcript((("First, 3 + 4 = 7.", "7"), ("So 7 * 5 = 36.", "36"),
                        ("So 36 - 6 = 30.", "30")))  # fmt: skip


def demo_question() -> StepQuestion:
    """The one question the demo debate asks: the lie's middle step, after the first."""
    return lying_transcript().question(1)


async def demo_debate(judge: StepJudge, *, timeout: float = 600.0) -> Outcome:
    """The lying A against the honest B, by cross-examination, judged by ``judge``."""
    lie, truth = lying_transcript(), honest_transcript()
    return await cross_examination(
        DEMO_TASK, ScriptedA(lie, "demo-liar"), ReferenceB(truth, "demo-honest-b"),
        JudgeLedger(judge), timeout=timeout,
    )  # fmt: skip
