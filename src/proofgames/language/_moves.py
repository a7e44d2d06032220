"""What V makes of a prover's move on a step transcript: its own checked copy, or a refusal.

The driver (:meth:`proofgames.protocols.Debate` and its ``Party.acall``) calls the
prover, pre-empts it at the timeout and turns whatever it raises into its forfeit; these
functions are the ``parse`` step after that. Each builds V's own value from plain data
(a transcript is rebuilt and checked; a step index must be an in-range ``int``) and
raises :class:`~proofgames.wire.Malformed` for anything else, which is the sender's
forfeit, never a stop of the run.

Example:
    >>> as_index(3, 5), as_index(None, 5)
    (3, None)
    >>> as_index(True, 5)
    Traceback (most recent call last):
    ...
    proofgames.wire.Malformed: named True, not a step index
"""

from __future__ import annotations

import numpy as np

from ..protocols._calls import shown
from ..wire import Malformed
from .parsers import parse_model_output
from .transcript import (
    ArgumentStep,
    StepTranscript,
    TranscriptFormatError,
    _indices,
    _string,
    hidden_character,
)


def as_transcript(value: object, task: str) -> StepTranscript:
    """A's commitment: a transcript V owns, about ``task``."""
    try:
        if isinstance(value, str):
            return _about(parse_model_output(task, value), task)
        if type(value) is StepTranscript:
            value = value.to_dict()
        if type(value) is not dict:  # plain data only: a party's Mapping runs its code
            raise TranscriptFormatError(f"sent {shown(value)}, not a transcript")
        transcript = StepTranscript.from_dict(value)
    except TranscriptFormatError as exc:
        raise Malformed(str(exc)) from None
    return _about(transcript, task)


def _about(transcript: StepTranscript, task: str) -> StepTranscript:
    if " ".join(transcript.task) != task:
        raise Malformed("the transcript is about a different task")
    _visible(transcript.answer, "the answer")
    for t, step in enumerate(transcript.steps):
        _visible(step.text, f"step {t + 1} text")
        _visible(step.result, f"step {t + 1} result")
    return transcript


def _visible(text: str, what: str) -> None:
    """Refuse text with a character a reader cannot see (a zero-width or bidi control)."""
    hidden = hidden_character(text)
    if hidden is not None:
        raise Malformed(f"{what} has an invisible, control or look-alike character {hidden}")


def as_step(value: object, t: int, parts: int) -> ArgumentStep:
    """A copy's restatement of step ``t`` (0-based) of a task in ``parts`` parts."""
    if type(value) is ArgumentStep:
        value = {"text": value.text, "uses": list(value.uses),
                 "task_parts": list(value.task_parts), "result": value.result}  # fmt: skip
    try:
        if type(value) is not dict:
            raise TranscriptFormatError(f"sent {shown(value)}, not a step")
        step = ArgumentStep(
            text=_string(value.get("text"), "text"),
            uses=_indices("uses", list(value.get("uses", [])), t, f"step {t + 1}"),
            task_parts=_indices("task_parts", list(value.get("task_parts", [])), parts, "step"),
            result=_string(value.get("result", ""), "result"),
        )
    except (TranscriptFormatError, TypeError) as exc:
        raise Malformed(f"step {t + 1}: {exc}") from None
    _visible(step.text, f"step {t + 1} text")
    _visible(step.result, f"step {t + 1} result")
    return step


def as_index(value: object, length: int) -> int | None:
    """B's disputed step: ``None`` (B concedes) or an int in ``[0, length)``."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Malformed(f"named {shown(value)}, not a step index")
    if not 0 <= int(value) < length:
        raise Malformed(f"named step {int(value)}, outside [0, {length})")
    return int(value)


def as_half(value: object) -> str:
    """B's answer in a bisection round: ``"first"`` or ``"second"``."""
    if type(value) is not str or value not in ("first", "second"):
        raise Malformed(f"answered {shown(value)}, not 'first' or 'second'")
    return str(value)
