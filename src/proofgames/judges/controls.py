"""Bias controls: the same question asked with its polarity flipped or its inputs swapped.

A judge that reads the question may lean towards "yes", or towards whatever comes first.
Two controls ask it the same thing another way, and the difference between the answers
is its bias:

* :class:`Flipped` (spec ``flip:SPEC``) asks the negated question ("Is this step
  wrong?" for "Does this step follow?") and turns the answer back: its ``p_yes`` is still
  P[the step follows], read as 1 - P[yes to the negated question]. A judge without a
  polarity bias answers both alike; a judge that says "yes" more often than it should
  accepts more under the plain question than under the flipped one.
* :class:`Swapped` (spec ``swap:SPEC``) shows the earlier steps a step relies on in the
  reverse order (for a whole transcript, its premises are the task chunks and every step
  in order, so it is refused there).

Only a judge that reads the question can be controlled: a model or a person. The
calculator and the scripted judges check annotations whatever the question says, so a
control would measure nothing but their blindness: refused.

Example:
    >>> negated("Does this step follow from the inputs shown?")
    'Is this step wrong, given the inputs shown?'
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ProtocolError
from .interface import DEFAULT_PROMPT, JudgeKind, Judgement, StepJudge, StepQuestion
from .text import ANSWER_PROMPT, WHOLE_PROMPT

__all__ = ["CONTROLS", "Flipped", "Swapped", "controlled", "negated"]

NEGATIONS = {
    DEFAULT_PROMPT: "Is this step wrong, given the inputs shown?",
    WHOLE_PROMPT: "Is some step of this argument wrong, or its final answer not right?",
    ANSWER_PROMPT: "Is this final answer to the task wrong?",
}
"""Each question judges are asked, and its negation (answered yes when the step fails)."""

CONTROLS = ("flip", "swap")
"""The controls a spec may name: ``flip:SPEC`` and ``swap:SPEC`` (they compose)."""

READS_THE_QUESTION: tuple[JudgeKind, ...] = ("model", "human")


def negated(prompt: str) -> str:
    """The negation of one of the questions in :data:`NEGATIONS`.

    Raises:
        ProtocolError: a question with no known negation (a custom prompt).
    """
    base = next((p for p in NEGATIONS if prompt.startswith(p)), None)
    if base is None:
        raise ProtocolError(f"no negation is known for the question {prompt[:80]!r}")
    return NEGATIONS[base] + prompt[len(base) :]


class _Control:
    """A judge that reads the question, asked it another way (``spec`` names the way)."""

    spec, what = "", ""

    def __init__(self, judge: StepJudge) -> None:
        if judge.kind not in READS_THE_QUESTION:
            raise ProtocolError(
                f"the {self.what} control needs a judge that reads the question (a model or "
                f"a person), not {judge.name!r}, which checks annotations whatever it is asked"
            )
        self.inner = judge
        self.kind: JudgeKind = judge.kind
        self.name = f"{self.spec}:{judge.name}"


class Flipped(_Control):
    """``judge`` asked the negated question; ``p_yes`` turned back to P[the step follows]."""

    spec, what = "flip", "polarity"

    async def judge(self, question: StepQuestion) -> Judgement:
        """The inner judge's answer to the negated question, turned back."""
        asked = replace(question, prompt=negated(question.prompt))
        j = await self.inner.judge(asked)
        return replace(j, p_yes=1.0 - j.p_yes, detail={**j.detail, "polarity": "flipped"})


class Swapped(_Control):
    """``judge`` shown the premises in the reverse order (a position control)."""

    spec, what = "swap", "position"

    async def judge(self, question: StepQuestion) -> Judgement:
        """The inner judge's answer with the premises reversed."""
        if question.prompt.startswith(WHOLE_PROMPT):
            raise ProtocolError("a whole transcript's steps keep their order: no position swap")
        j = await self.inner.judge(replace(question, premises=question.premises[::-1]))
        return replace(j, detail={**j.detail, "position": "swapped"})


def controlled(control: str, judge: StepJudge) -> StepJudge:
    """``judge`` under ``control`` (``"flip"`` or ``"swap"``)."""
    if control == "flip":
        return Flipped(judge)
    if control == "swap":
        return Swapped(judge)
    raise ProtocolError(f"unknown control {control!r}: use {' or '.join(CONTROLS)}")
