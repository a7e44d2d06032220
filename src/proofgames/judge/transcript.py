"""A small transcript debate judged one step at a time (the demo and end-to-end test).

Two provers write out a computation step by step. The claimant A stands by its final
answer; the challenger B points at the first step of A's transcript that it disputes.
The verifier never reads the whole argument: it asks its :class:`StepJudge` a single
question, whether A's disputed step follows from the task and A's earlier steps (which
B accepted). A wins if the judge says yes (or if B disputes nothing); B wins otherwise.
With an honest B, a lying A loses at its first false step; with an honest A, a lying
B's dispute is answered "yes" and A wins: one judgement either way.

This uses only :mod:`proofgames.judging`, like the language-debate layer will.

Example:
    >>> import asyncio
    >>> from proofgames.judging import Judgement
    >>> class Checker:  # a calculator judge for the doctest
    ...     name, kind = "checker", "calculator"
    ...     async def judge(self, question):
    ...         return Judgement(p_yes=float("36" not in question.step))
    >>> out = asyncio.run(debate(DEMO_TASK, lying_transcript(), honest_transcript(), Checker()))
    >>> out.winner, out.disputed_step, out.question.step
    ('B', 1, 'So 7 * 5 = 36.')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..judging import Judgement, StepJudge, StepQuestion

DEMO_TASK = "Compute ((3 + 4) * 5) - 6, one operation per step."


def honest_transcript() -> tuple[str, ...]:
    """The demo task worked out correctly: three steps, answer 29."""
    return ("First, 3 + 4 = 7.", "So 7 * 5 = 35.", "So 35 - 6 = 29.")


def lying_transcript() -> tuple[str, ...]:
    """A lie at the middle step, every later step consistent with it: answer 30."""
    return ("First, 3 + 4 = 7.", "So 7 * 5 = 36.", "So 36 - 6 = 30.")


@dataclass(frozen=True)
class DebateOutcome:
    """How a transcript debate ended.

    Attributes:
        winner: ``"A"`` (the claimant's answer stands) or ``"B"``.
        disputed_step: Index of the step the judge was asked about (None: no dispute).
        question: What the judge was shown (None: no dispute).
        judgement: The judge's answer (None: no dispute).
        human_judgements: People's answers the debate used.
    """

    winner: str
    disputed_step: int | None
    question: StepQuestion | None
    judgement: Judgement | None
    human_judgements: int


def first_dispute(claimant: tuple[str, ...], challenger: tuple[str, ...]) -> int | None:
    """The first step where the challenger's transcript differs (None if they agree)."""
    for i, step in enumerate(claimant):
        if i >= len(challenger) or challenger[i] != step:
            return i
    return None


def step_question(task: str, transcript: tuple[str, ...], i: int) -> StepQuestion:
    """The question about step ``i``: the task, the earlier steps, and step ``i`` only."""
    return StepQuestion(task=task, premises=transcript[:i], step=transcript[i])


async def debate(
    task: str, claimant: tuple[str, ...], challenger: tuple[str, ...], judge: StepJudge
) -> DebateOutcome:
    """Run one debate; the judge is asked at most one question."""
    i = first_dispute(claimant, challenger)
    if i is None:
        return DebateOutcome("A", None, None, None, 0)
    question = step_question(task, claimant, i)
    judgement = await judge.judge(question)
    winner = "A" if judgement.verdict else "B"
    return DebateOutcome(winner, i, question, judgement, judgement.human_judgements)
