"""Step transcripts: a natural-language argument as typed data.

A :class:`StepTranscript` holds the task (split into parts, e.g. sentences), the steps
and the final answer.  Each :class:`ArgumentStep` has its text, its relevant set I(t)
(the earlier steps it ``uses`` and the ``task_parts`` it reads) and its claimed
``result``.  :meth:`StepTranscript.question` builds the one thing a judge may see about
a step: a :class:`~proofgames.judges.StepQuestion` holding that step, the texts of its
relevant steps and the task parts they use, and nothing else.

Token counts (:func:`count_tokens`) are word-and-symbol counts: every run of letters or
digits and every other non-space character is one token.  They stand for what a person
reading the question would have to read; a model judge also reports its own tokenizer's
count.

Example:
    >>> t = StepTranscript(
    ...     task=("Tom has 3 apples.", "He buys 2 more.", "How many has he?"),
    ...     steps=(ArgumentStep("He has 3 + 2 = <<3+2=5>>5 apples.", task_parts=(0, 1),
    ...                         result="5"),),
    ...     answer="5")
    >>> q = t.question(0)
    >>> q.task, q.premises
    ('Tom has 3 apples. He buys 2 more.', ())
    >>> count_tokens("3 + 2 = 5")
    5
    >>> StepTranscript.from_dict(t.to_dict()) == t
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..errors import TranscriptFormatError
from ..judges.interface import DEFAULT_PROMPT, MAX_TEXT_CHARS, StepQuestion
from ..judges.interface import unreadable_character as hidden_character
from ..judges.text import (
    ANSWER_PROMPT,
    MAX_DIGITS,
    NUMBER,
    WHOLE_PROMPT,
    as_number,
    count_tokens,
    numbers_in,
    question_tokens,
    read_number,
    same_value,
    whole_layout,
)

__all__ = [
    "ANSWER_PROMPT", "MAX_DIGITS", "MAX_STEPS", "NUMBER", "WHOLE_PROMPT", "ArgumentStep",
    "StepTranscript", "TranscriptFormatError", "as_number", "count_tokens", "hidden_character",
    "numbers_in", "question_tokens", "read_number", "relevant_parts", "same_value",
    "split_sentences", "whole_layout",
]  # fmt: skip

MAX_STEPS = 5_000
"""The longest transcript accepted (steps)."""


def _indices(name: str, value: object, limit: int, where: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)):
        raise TranscriptFormatError(f"{where}: {name} must be a list of indices, not {value!r}")
    out = []
    for i in value:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < limit:
            raise TranscriptFormatError(
                f"{where}: {name} holds {i!r}, not an index in [0, {limit})"
            )
        out.append(i)
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class ArgumentStep:
    """One step of an argument.

    Args:
        text: The step as written (with its result).
        uses: Indices of the earlier steps it relies on (part of I(t)).
        task_parts: Indices of the task parts it reads (the rest of I(t)).
        result: The value the step claims (``""`` if it claims none).
    """

    text: str
    uses: tuple[int, ...] = ()
    task_parts: tuple[int, ...] = ()
    result: str = ""


@dataclass(frozen=True)
class StepTranscript:
    """A task, the steps of an argument about it, and its final answer.

    Raises:
        TranscriptFormatError: A step uses a later step or a task part that does not
            exist, a field has the wrong type, or there are no steps or too many.
    """

    task: tuple[str, ...]
    steps: tuple[ArgumentStep, ...]
    answer: str

    def __post_init__(self) -> None:
        if not isinstance(self.task, tuple) or not all(isinstance(p, str) for p in self.task):
            raise TranscriptFormatError(f"task must be a tuple of strings, not {self.task!r}")
        if not isinstance(self.answer, str):
            raise TranscriptFormatError(f"answer must be a string, not {type(self.answer)}")
        _within(self.answer, "the answer")
        if not isinstance(self.steps, tuple) or not 1 <= len(self.steps) <= MAX_STEPS:
            raise TranscriptFormatError(f"a transcript needs 1 to {MAX_STEPS:,} steps")
        for t, step in enumerate(self.steps):
            where = f"step {t + 1}"
            if not isinstance(step, ArgumentStep):
                raise TranscriptFormatError(f"{where} is not an ArgumentStep: {step!r}")
            if not isinstance(step.text, str) or not isinstance(step.result, str):
                raise TranscriptFormatError(f"{where}: text and result must be strings")
            _within(step.text, f"{where} text")
            _within(step.result, f"{where} result")
            _indices("uses", step.uses, t, where)
            _indices("task_parts", step.task_parts, len(self.task), where)

    def __len__(self) -> int:
        return len(self.steps)

    def copy(self) -> StepTranscript:
        """A new transcript equal to this one (what V hands a party: never its own)."""
        return StepTranscript.from_dict(self.to_dict())

    def question(self, t: int, prompt: str = DEFAULT_PROMPT) -> StepQuestion:
        """What a judge sees about step ``t`` (0-based): it, its relevant steps, its task parts."""
        if not 0 <= t < len(self.steps):
            raise TranscriptFormatError(f"no step {t} in a transcript of {len(self.steps)} steps")
        step = self.steps[t]
        parts = sorted(set(step.task_parts))
        return StepQuestion(
            task=" ".join(self.task[i] for i in parts),
            premises=tuple(self.steps[i].text for i in step.uses),
            step=step.text,
            prompt=prompt,
        )

    def whole_question(self) -> StepQuestion:
        """The no-debate baseline: the whole task and every step, then the final answer.

        A task longer than one question field allows is sent as the first premises
        (:func:`whole_layout` reads the question back as task text and steps).
        """
        task = " ".join(self.task)
        chunks: tuple[str, ...] = ()
        if len(task) > MAX_TEXT_CHARS:
            chunks = tuple(_chunks(self.task))
            task = ""
        prompt = WHOLE_PROMPT + (
            f" (The first {len(chunks)} inputs are the task.)" if chunks else ""
        )
        return StepQuestion(
            task=task,
            premises=(*chunks, *(s.text for s in self.steps)),
            step=f"Final answer: {self.answer}",
            prompt=prompt,
        )

    def answer_question(self) -> StepQuestion:
        """The judge-alone baseline: the task and the final answer, and no argument.

        A task longer than one question field allows is sent in chunks as premises.
        """
        task = " ".join(self.task)
        chunks: tuple[str, ...] = ()
        if len(task) > MAX_TEXT_CHARS:
            chunks, task = tuple(_chunks(self.task)), ""
        return StepQuestion(
            task=task, premises=chunks, step=f"The final answer is {self.answer}.",
            prompt=ANSWER_PROMPT,
        )  # fmt: skip

    def answer_supported(self) -> bool:
        """True when the final answer is the last step's claimed result (V checks it)."""
        return same_value(self.steps[-1].result, self.answer)

    def render(self) -> str:
        """The transcript in the format provers are asked to write (see :mod:`.parsers`)."""
        lines = []
        for t, s in enumerate(self.steps):
            uses = ", ".join(str(i + 1) for i in s.uses)
            lines.append(f"Step {t + 1}: {s.text}" + (f" (uses {uses})" if uses else ""))
        lines.append(f"Answer: {self.answer}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON data (round-trips through :meth:`from_dict`)."""
        return {
            "task": list(self.task),
            "steps": [
                {"text": s.text, "uses": list(s.uses), "task_parts": list(s.task_parts),
                 "result": s.result}
                for s in self.steps
            ],
            "answer": self.answer,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> StepTranscript:
        """Rebuild (and check) a transcript from :meth:`to_dict` data."""
        if not isinstance(data, Mapping):
            raise TranscriptFormatError(f"a transcript must be a JSON object, not {data!r}")
        task, steps = data.get("task"), data.get("steps")
        if not isinstance(task, list) or not isinstance(steps, list):
            raise TranscriptFormatError("a transcript needs a 'task' list and a 'steps' list")
        built = []
        for t, s in enumerate(steps):
            if not isinstance(s, Mapping):
                raise TranscriptFormatError(f"step {t + 1} must be a JSON object")
            built.append(
                ArgumentStep(
                    text=_string(s.get("text"), f"step {t + 1} text"),
                    uses=_indices("uses", s.get("uses", []), max(t, 0), f"step {t + 1}"),
                    task_parts=_indices(
                        "task_parts", s.get("task_parts", []), len(task), f"step {t + 1}"
                    ),
                    result=_string(s.get("result", ""), f"step {t + 1} result"),
                )
            )
        return cls(
            task=tuple(_string(p, "task part") for p in task),
            steps=tuple(built),
            answer=_string(data.get("answer"), "answer"),
        )


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TranscriptFormatError(f"{what} must be a string, not {type(value).__name__}")
    return _within(str(value), what)


def _within(text: str, what: str) -> str:
    """``text`` if a judge can read it in one question field (:data:`MAX_TEXT_CHARS`)."""
    if len(text) > MAX_TEXT_CHARS:
        raise TranscriptFormatError(
            f"{what} has {len(text):,} characters, over the limit of {MAX_TEXT_CHARS:,}"
        )
    return text


def split_sentences(text: str) -> tuple[str, ...]:
    """Split a task statement into sentences (its parts).

    Example:
        >>> split_sentences("Tom has 3 apples.  He buys 2 more. How many?")
        ('Tom has 3 apples.', 'He buys 2 more.', 'How many?')
    """
    parts = [p.strip() for p in re.split(r"(?<=[.?!])\s+", text.strip())]
    return tuple(p for p in parts if p)


def relevant_parts(values: Sequence[Fraction], task: Sequence[str]) -> tuple[int, ...]:
    """Indices of the task parts that mention any of ``values``."""
    wanted = set(values)
    return tuple(i for i, part in enumerate(task) if wanted & set(numbers_in(part)))


def _chunks(parts: Sequence[str]) -> list[str]:
    out, current = [], ""
    for part in parts:
        if current and len(current) + 1 + len(part) > MAX_TEXT_CHARS:
            out.append(current)
            current = ""
        current = f"{current} {part}" if current else part
    return [*out, current] if current else out
