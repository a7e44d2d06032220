"""Transcript events for Inspect: each move, judge call and forfeit of a debate.

The protocols have no per-move hook, so the Inspect solver watches the parties instead
(:func:`watch_prover`, :func:`watch_judge`): each move (``A: transcript``,
``A: step 5``, ``B: dispute``, ``B: half 11``; steps 1-based) and each judge call becomes
an info event of source ``proofgames`` (``{"event": "move", ...}`` with what the party
``sent`` or what it ``raised``; ``{"event": "judge", ...}`` with the question shown,
P[yes], the verdict and the tokens, or the failure).  Calls on the run's event loop (model
provers, judges) run inside a span of that name, so a model's own events nest under the
move.  A forfeit is V's decision, not a move: :func:`log_outcome` reports it, and the
debate's end, from the outcome record after the debate.  See :class:`EventLog` for
provers that the engine runs in threads of their own.

Watching changes nothing V sees: a watched call returns exactly what the party returned
and raises exactly what it raised, and the party keeps its type.  Event data is plain
JSON, every text in it cut to :data:`MAX_EVENT_TEXT` characters, so a party cannot make
the log large.  Outside an Inspect sample the events go to Inspect's default transcript,
which nothing records.

Example:
    >>> event_text("x" * 5000)[-40:]
    'xxxxxxxxxxxxxxxxxxxxxx... (5,000 chars)'
"""

from __future__ import annotations

import contextlib
import inspect
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from inspect_ai.log import transcript
from inspect_ai.util import span

from ..judges.interface import Judgement, StepJudge, StepQuestion
from .provers import ProverReply
from .transcript import ArgumentStep, StepTranscript

__all__ = [
    "MAX_EVENT_TEXT",
    "EventLog",
    "describe",
    "event_text",
    "log_outcome",
    "watch_judge",
    "watch_prover",
]

P = TypeVar("P")
J = TypeVar("J", bound=StepJudge)

#: The longest text an event holds; longer texts are cut and their length noted.
MAX_EVENT_TEXT = 2_000
SOURCE = "proofgames"


def event_text(text: str) -> str:
    """``text``, cut to :data:`MAX_EVENT_TEXT` characters (with its length noted)."""
    if len(text) <= MAX_EVENT_TEXT:
        return text
    return f"{text[:MAX_EVENT_TEXT]}... ({len(text):,} chars)"


def _step(step: ArgumentStep) -> dict[str, Any]:
    return {
        "text": event_text(step.text),
        "uses": list(step.uses[:50]),
        "result": event_text(step.result),
    }


def describe(value: object) -> Any:
    """Plain, bounded JSON describing what a party sent (never the object itself)."""
    try:
        if isinstance(value, ProverReply):
            return {
                "value": describe(value.value),
                "tokens": [describe(value.input_tokens), describe(value.output_tokens)],
            }
        if value is None or isinstance(value, (bool, str)):
            return event_text(value) if isinstance(value, str) else value
        if isinstance(value, (int, np.integer)):
            return int(value) if abs(int(value)) < 2**53 else event_text(str(value))
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, StepTranscript):
            text = "\n".join(s.text for s in value.steps[:200])
            return {"steps": len(value.steps), "answer": event_text(value.answer),
                    "text": event_text(text)}  # fmt: skip
        if isinstance(value, ArgumentStep):
            return _step(value)
        if isinstance(value, Mapping):
            keys = [event_text(str(k)) for k in list(value.keys())[:20]]
            return {"type": type(value).__name__, "keys": keys}
    except Exception as exc:  # a hostile object: say so, never fail the debate here
        return {"type": type(value).__name__, "unreadable": event_text(repr(exc))}
    return {"type": type(value).__name__}


def _exception_text(exc: BaseException) -> str:
    """``Type: message``, cut; a message that cannot be read is said to be so."""
    try:
        message = str(exc)
    except Exception:
        message = "(unreadable message)"
    return event_text(f"{type(exc).__name__}: {message}")


class EventLog:
    """The transcript events of one debate, emitted in the sample's own context.

    Create it in the solver (it remembers that thread and its transcript).  A watched
    call that runs on that thread -- on the run's event loop, as the library's model
    provers and every judge do -- is wrapped in a span and its event is emitted at once;
    one that runs elsewhere (the engine runs untrusted provers in threads of their own,
    where Inspect's transcript is not reachable) is queued, thread-safely, and emitted
    at the next call on the owner thread or at :meth:`close`.  Events queued after
    :meth:`close` (a timed-out prover's thread finishing late) are dropped.
    """

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        self._lock = threading.Lock()
        self._queued: list[dict[str, Any]] = []
        self._open = True

    def _here(self) -> bool:
        return threading.get_ident() == self._owner

    def flush(self) -> None:
        """Emit the queued events (call on the owner thread)."""
        with self._lock:
            queued, self._queued = self._queued, []
        for event in queued:
            transcript().info(event, source=SOURCE)

    def emit(self, event: dict[str, Any]) -> None:
        """Emit ``event`` now (owner thread) or queue it (any other thread)."""
        if self._here():
            self.flush()
            transcript().info(event, source=SOURCE)
            return
        with self._lock:
            if self._open:
                self._queued.append(event)

    def close(self) -> None:
        """Emit what is queued; drop anything that comes later."""
        self.flush()
        with self._lock:
            self._open = False

    async def call(self, name: str, event: dict[str, Any], run: Callable[[], object]) -> object:
        """Run one watched call (``run()``, awaited if it gives an awaitable); record it.

        ``event`` gets ``sent`` (what came back, described) or ``raised``; what the call
        returned is returned and what it raised is raised, unchanged.
        """
        if not self._here():
            return await self._call(event, run)
        self.flush()
        async with span(name, type=str(event["event"])):
            return await self._call(event, run)

    async def _call(self, event: dict[str, Any], run: Callable[[], object]) -> object:
        try:
            value = run()
            if inspect.isawaitable(value):
                value = await value
        except BaseException as exc:
            event["raised"] = _exception_text(exc)
            self.emit(event)
            raise
        if isinstance(value, Judgement):
            event.update(
                p_yes=value.p_yes, verdict=value.verdict, calls=value.calls,
                input_tokens=value.input_tokens, output_tokens=value.output_tokens,
                cost_usd=value.cost_usd,
            )  # fmt: skip
        else:
            event["sent"] = describe(value)
        self.emit(event)
        return value


def _move_name(method: str, args: tuple[object, ...]) -> tuple[str, dict[str, Any]]:
    """``("step 5", {"step": 5})`` for ``step(task, 4)``: 1-based, as the reasons say."""
    if method in ("step", "half") and len(args) >= 2:
        t = args[1]
        if isinstance(t, int) and not isinstance(t, bool):
            return f"{method} {t + 1}", {"step": t + 1}
    return method, {}


def watch_prover(log: EventLog, party: str, prover: P, methods: tuple[str, ...]) -> P:
    """Record each of ``prover``'s ``methods`` calls as a move event; returns ``prover``.

    The methods are replaced on the instance, so the prover keeps its type (the engine
    trusts the library's model provers by their exact type) and every other attribute.
    A prover whose methods cannot be replaced (slots, frozen) plays unrecorded.
    """
    for method in methods:
        original = getattr(prover, method)

        def patched(*args: object, _original: Any = original, _method: str = method) -> Any:
            move, extra = _move_name(_method, args)
            event = {"event": "move", "party": party, "move": move, **extra}
            return log.call(f"{party}: {move}", event, lambda: _original(*args))

        try:
            setattr(prover, method, patched)
        except (AttributeError, TypeError):  # slots or frozen: the moves go unrecorded
            break
    return prover


def watch_judge(log: EventLog, judge: J) -> J:
    """Record each judge call (the question shown, P[yes], tokens, or the failure)."""
    original = judge.judge

    def patched(question: StepQuestion) -> Any:
        event: dict[str, Any] = {
            "event": "judge",
            "judge": event_text(str(judge.name)),
            "question_id": question.question_id,
            "step": event_text(question.step),
            "premises": [event_text(p) for p in question.premises[:20]],
            "task": event_text(question.task),
        }
        return log.call("judge", event, lambda: original(question))

    with contextlib.suppress(AttributeError, TypeError):  # slots or frozen: unrecorded
        setattr(judge, "judge", patched)  # noqa: B010  (an instance attribute, as documented)
    return judge


def log_outcome(log: EventLog, outcome: Mapping[str, Any]) -> None:
    """Record a forfeit (if any) and the debate's end, from its outcome record; close ``log``."""
    log.close()
    if outcome.get("forfeit") is not None:
        transcript().info(
            {
                "event": "forfeit",
                "party": outcome["forfeit"],
                "reason": event_text(str(outcome.get("reason", ""))),
            },
            source=SOURCE,
        )
    transcript().info(
        {
            "event": "outcome",
            "accepted": outcome.get("accepted"),
            "winner": outcome.get("winner"),
            "stopped": outcome.get("stopped"),
            "disputed_step": outcome.get("disputed_step"),
            "reason": event_text(str(outcome.get("reason", ""))),
            "costs": dict(outcome.get("costs") or {}),
        },
        source=SOURCE,
    )
