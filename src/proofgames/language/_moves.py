"""The trust boundary for transcript debates: calling provers, copying what they send.

V never trusts a prover's object: each move is awaited with a timeout, anything raised is
the prover's forfeit, and the value is canonicalized (a transcript is rebuilt from plain
data and checked; a step index must be an in-range ``int``) before V looks at it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import interrupts
from ..protocols._common import describe_exception
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


#: The most characters of a party's words (an exception's message, a value it sent) that
#: go into a recorded reason.
MAX_SHOWN = 300
#: The most tokens a prover may report for one move, and the most money (USD).
MAX_REPORTED_TOKENS = 10**9
MAX_REPORTED_USD = 10**6


def shown(value: object) -> str:
    """A party's value in a reason: the ``repr`` of a plain value, else its type's name.

    Never calls the party's own code (a ``__repr__`` could block or raise), and cut to
    :data:`MAX_SHOWN` characters.

    Example:
        >>> shown(3), shown("x" * 10**7)[-31:], shown(object())
        ('3', '... (9,999,702 more characters)', 'a value of type object')
    """
    if type(value) in (int, float, str, bool, bytes) or value is None:
        text = repr(value) if type(value) is not int or value.bit_length() < 4000 else "a huge int"
    else:
        try:
            name = type.__getattribute__(type(value), "__name__")
        except Exception:
            name = "?"
        text = f"a value of type {name if type(name) is str else '?'}"
    cut = len(text) - MAX_SHOWN
    return text if cut <= 0 else f"{text[:MAX_SHOWN]}... ({cut:,} more characters)"


def _trusted(prover: object) -> bool:
    """The library's model-backed provers: their ``ModelFailed`` stops the run.

    They run on the run's own event loop (their model client lives there).  Every other
    prover is untrusted: it runs in a thread of its own, so that a blocking call is
    pre-empted by the timeout, and whatever it raises is its forfeit.
    """
    from .model_provers import ModelProverA, ModelProverB

    return type(prover) in (ModelProverA, ModelProverB)


class _Raised(Exception):
    """Carries what a party's thread raised (a ``SystemExit`` would stop the event loop)."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


def _invoke(prover: object, method: str, args: tuple[object, ...]) -> object:
    """Call the method in this thread; run a coroutine it returns to its end."""
    value = getattr(prover, method)(*args)
    if inspect.isawaitable(value):

        async def finish() -> object:
            return await value

        value = asyncio.run(finish())
    return value


async def _in_thread(prover: object, method: str, args: tuple[object, ...]) -> object:
    """Run one untrusted move in a daemon thread; V stops waiting at the timeout."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[object] = loop.create_future()

    def settle(value: object, error: BaseException | None) -> None:
        if done.done():  # V stopped waiting (timeout): the result is dropped
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def run() -> None:
        try:
            value, error = _invoke(prover, method, args), None
        except BaseException as exc:  # the party's own (a user's signal reaches the main
            value, error = None, _Raised(exc)  # thread only): its forfeit, whatever it is
        with contextlib.suppress(RuntimeError):  # the run's loop closed: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name=f"prover-{method}", daemon=True).start()
    return await done


async def move(
    party: str, prover: object, method: str, args: tuple[object, ...], timeout: float,
    costs: DebateCosts,
) -> object:  # fmt: skip
    """One prover move ``prover.method(*args)``; a raise or a timeout is the party's forfeit.

    Whatever escapes the move is ``party``'s forfeit -- a ``Forfeit`` naming the other
    side, a ``SystemExit`` or a ``KeyboardInterrupt`` it raises included -- except a
    user's SIGINT or SIGTERM (:mod:`proofgames.interrupts`), which stops the run, and a
    :class:`~.provers.ModelFailed` from the library's own model provers (their model
    failed: the run stops, no one forfeits).  The timeout pre-empts blocking code too:
    an untrusted prover runs in a thread of its own, abandoned at the timeout.
    """
    trusted = _trusted(prover)
    try:
        with interrupts.guard():
            if trusted:
                call = getattr(prover, method)(*args)
                value = await asyncio.wait_for(call, timeout)
            else:
                value = await asyncio.wait_for(_in_thread(prover, method, args), timeout)
            interrupts.check()
    except asyncio.TimeoutError:
        raise Forfeit(party, f"timed out after {timeout:g} s") from None
    except _Raised as carried:
        raise Forfeit(party, f"raised {shown_exception(carried.raised)}") from None
    except BaseException as exc:
        if interrupts.by_user(exc) or (trusted and isinstance(exc, ModelFailed)):
            raise
        raise Forfeit(party, f"raised {shown_exception(exc)}") from None
    if isinstance(value, ProverReply):
        _book(party, value, costs)
        return value.value
    return value


def shown_exception(exc: BaseException) -> str:
    """``Type: message`` of a party's exception, cut to :data:`MAX_SHOWN` characters."""
    text = describe_exception(exc)
    cut = len(text) - MAX_SHOWN
    return text if cut <= 0 else f"{text[:MAX_SHOWN]}... ({cut:,} more characters)"


def _book(party: str, reply: ProverReply, costs: DebateCosts) -> None:
    """Add what a move reports it cost; a count or amount out of range is a forfeit."""
    tokens = (reply.input_tokens, reply.output_tokens)
    if not all(type(x) is int and 0 <= x <= MAX_REPORTED_TOKENS for x in tokens):
        raise Forfeit(
            party,
            f"reported a malformed token count (input {shown(tokens[0])}, output "
            f"{shown(tokens[1])}; each an int in [0, {MAX_REPORTED_TOKENS:,}])",
        )
    money = reply.cost_usd
    if money is not None and not (
        type(money) in (int, float) and math.isfinite(money) and 0 <= money <= MAX_REPORTED_USD
    ):
        raise Forfeit(party, f"reported a malformed cost {shown(money)} (USD)")
    costs.prover_input_tokens += tokens[0]
    costs.prover_output_tokens += tokens[1]
    if money is not None:
        costs.add_money(float(money))


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
        raise Forfeit("B", f"named {shown(value)}, not a step index")
    if not 0 <= int(value) < length:
        raise Forfeit("B", f"named step {int(value)}, outside [0, {length})")
    return int(value)
