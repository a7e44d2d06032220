"""The trust boundary for transcript debates: calling provers, copying what they send.

V never trusts a prover's object: each move is awaited with a timeout, anything raised is
the prover's forfeit, and the value is canonicalized (a transcript is rebuilt from plain
data and checked; a step index must be an in-range ``int``) before V looks at it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .costs import DebateCosts
from .parsers import parse_model_output
from .provers import ModelFailed, ProverReply
from .transcript import ArgumentStep, StepTranscript, TranscriptFormatError, _indices, _string


class Forfeit(Exception):
    """A party lost by misbehaving; ``party`` and ``reason`` are recorded."""

    def __init__(self, party: str, reason: str) -> None:
        super().__init__(f"{party} forfeits: {reason}")
        self.party, self.reason = party, reason


@dataclass
class LanguageOutcome:
    """How one debate on a transcript ended.

    Attributes:
        protocol: The protocol's name.
        accepted: V accepts A's answer (``None``: the run stopped, e.g. budget spent).
        winner: ``"A"``, ``"B"``, or ``None`` when the run stopped.
        reason: Why, in words.
        answer: A's final answer, if A committed one.
        disputed_step: The 0-based step the judge was asked about (if one).
        forfeit: The party that forfeited, if any.
        stopped: Why the run stopped (``accepted`` is ``None``): ``"budget"`` (the judge
            budget is spent), ``"judge"`` (the judge failed) or ``"model"`` (a prover's
            model failed); ``None`` otherwise.
        costs: Judge calls, tokens, money.
        judgements: P[yes] of each judge call, in order.
    """

    protocol: str
    accepted: bool | None
    winner: str | None
    reason: str
    answer: str | None = None
    disputed_step: int | None = None
    forfeit: str | None = None
    costs: DebateCosts = field(default_factory=DebateCosts)
    stopped: str | None = None
    judgements: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON data."""
        return {
            "protocol": self.protocol, "accepted": self.accepted, "winner": self.winner,
            "reason": self.reason, "answer": self.answer, "disputed_step": self.disputed_step,
            "forfeit": self.forfeit, "stopped": self.stopped, "costs": self.costs.to_dict(),
            "judgements": list(self.judgements),
        }  # fmt: skip


async def move(party: str, call: Awaitable[object], timeout: float, costs: DebateCosts) -> object:
    """Await one prover move; a raise or a timeout is the party's forfeit.

    A :class:`~.provers.ModelFailed` (the model behind the prover failed) passes through:
    it stops the run.
    """
    try:
        value = await asyncio.wait_for(call, timeout)
    except asyncio.TimeoutError:
        raise Forfeit(party, f"timed out after {timeout:g} s") from None
    except (Forfeit, ModelFailed):
        raise
    except Exception as exc:
        raise Forfeit(party, f"raised {type(exc).__name__}: {exc}") from None
    if isinstance(value, ProverReply):
        ok = all(isinstance(x, int) and x >= 0 for x in (value.input_tokens, value.output_tokens))
        if not ok:
            raise Forfeit(party, "reported malformed token counts")
        costs.prover_input_tokens += value.input_tokens
        costs.prover_output_tokens += value.output_tokens
        if isinstance(value.cost_usd, (int, float)):
            costs.add_money(float(value.cost_usd))
        return value.value
    return value


def as_transcript(value: object, task: str) -> StepTranscript:
    """Canonicalize A's commitment (a copy V owns); malformed data is A's forfeit."""
    try:
        if isinstance(value, str):
            return parse_model_output(task, value)
        if isinstance(value, StepTranscript):
            value = value.to_dict()
        if not isinstance(value, Mapping):
            raise TranscriptFormatError(f"sent {type(value).__name__}, not a transcript")
        transcript = StepTranscript.from_dict(value)
    except TranscriptFormatError as exc:
        raise Forfeit("A", f"malformed transcript: {exc}") from None
    if " ".join(transcript.task) != task:
        raise Forfeit("A", "the transcript is about a different task")
    return transcript


def as_step(value: object, t: int, parts: int) -> ArgumentStep:
    """Canonicalize a copy's restated step ``t``; malformed data is A's forfeit."""
    if isinstance(value, ArgumentStep):
        value = {"text": value.text, "uses": list(value.uses),
                 "task_parts": list(value.task_parts), "result": value.result}  # fmt: skip
    try:
        if not isinstance(value, Mapping):
            raise TranscriptFormatError(f"sent {type(value).__name__}, not a step")
        return ArgumentStep(
            text=_string(value.get("text"), "text"),
            uses=_indices("uses", list(value.get("uses", [])), t, f"step {t + 1}"),
            task_parts=_indices("task_parts", list(value.get("task_parts", [])), parts, "step"),
            result=_string(value.get("result", ""), "result"),
        )
    except (TranscriptFormatError, TypeError) as exc:
        raise Forfeit("A", f"malformed step {t + 1} from a copy: {exc}") from None


def as_index(value: object, length: int) -> int | None:
    """B's disputed step: ``None`` (concede) or an int in range; else B forfeits."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Forfeit("B", f"named {value!r}, not a step index")
    if not 0 <= int(value) < length:
        raise Forfeit("B", f"named step {int(value)}, outside [0, {length})")
    return int(value)
