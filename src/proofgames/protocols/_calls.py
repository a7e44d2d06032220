"""How the driver calls a party: described without trusting it, pre-empted when it blocks.

:meth:`~._common.Party.call` (synchronous parties, the simulator's strategies) and
:meth:`~._common.Party.acall` (a party whose moves may be coroutines or may block, as
language-model and scripted provers of step transcripts are) share what is here:

* :func:`describe_exception` and :func:`shown` put a party's exception or value into a
  reason without calling its code (a ``__repr__`` could block or raise), cut to
  :data:`MAX_SHOWN` characters;
* :func:`run_move` runs one move of an untrusted party in a daemon thread of its own,
  so that a timeout pre-empts a blocking call as well as a slow coroutine (V stops
  waiting; the thread is abandoned and whatever it returns later is dropped);
* :func:`check_reply` validates the costs a move reports (:class:`ProverReply`);
* :class:`SetUp` runs a party's set-up hook (``prepare(ctx)``) in a thread of its own,
  beside V and the other party, as an isolated party's process runs it beside theirs.

Example:
    >>> shown("x" * 10**7)[-31:], shown(object())
    ('... (9,999,702 more characters)', 'a value of type object')
    >>> shown_exception(ValueError("no"))
    'ValueError: no'
"""

from __future__ import annotations

import contextlib
import inspect
import math
import threading
from collections.abc import Callable
from typing import Any

from ._outcome import ProverReply

#: The most characters of a party's words (an exception's message, a value it sent) that
#: go into a recorded reason.
MAX_SHOWN = 300
#: The most tokens a prover may report for one move, and the most money (USD).
MAX_REPORTED_TOKENS = 10**9
MAX_REPORTED_USD = 10**6
#: The most model calls a prover may report for one move.
MAX_REPORTED_CALLS = 10**6


def _cut(text: str) -> str:
    cut = len(text) - MAX_SHOWN
    return text if cut <= 0 else f"{text[:MAX_SHOWN]}... ({cut:,} more characters)"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` for a party's exception, without trusting its code (uncut)."""
    try:
        name = type.__getattribute__(type(exc), "__name__")
        text = BaseException.__str__(exc)
        out = f"{name}: {text}" if text else str(name)
        return out if isinstance(out, str) else "an exception"
    except BaseException:  # a hostile __str__ or __name__
        return "an exception that could not be described"


def shown_exception(exc: BaseException) -> str:
    """:func:`describe_exception`, cut to :data:`MAX_SHOWN` characters."""
    return _cut(describe_exception(exc))


def shown(value: object) -> str:
    """A party's value in a reason: the ``repr`` of a plain value, else its type's name."""
    if type(value) in (int, float, str, bool, bytes) or value is None:
        text = repr(value) if type(value) is not int or value.bit_length() < 4000 else "a huge int"
    else:
        try:
            name = type.__getattribute__(type(value), "__name__")
        except Exception:
            name = "?"
        text = f"a value of type {name if type(name) is str else '?'}"
    return _cut(text)


class Raised(Exception):
    """Carries what a party's thread raised (a ``SystemExit`` would stop the event loop)."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


def _invoke(player: object, method: str, args: tuple[object, ...]) -> object:
    """Call the method in this thread; run a coroutine it returns to its end."""
    value = getattr(player, method)(*args)
    if inspect.isawaitable(value):
        import asyncio  # only a coroutine move needs it

        async def finish() -> object:
            return await value

        value = asyncio.run(finish())
    return value


class SetUp:
    """A party's ``prepare(ctx)``, started in a daemon thread of its own.

    What it raises is dropped: the party's calls then do (or fail at) the work, as in a
    party's own process (:meth:`proofgames.isolation.party.Session.prepare`).  A hook
    whose heavy work runs outside the GIL (the compiled engine does) runs on its own core,
    beside V and the other party's.

    Example:
        >>> seen = []
        >>> class P:
        ...     def prepare(self, ctx): seen.append(ctx)
        >>> s = SetUp(P().prepare, "ctx", "A")
        >>> s.wait(5.0), seen
        (True, ['ctx'])
    """

    def __init__(self, hook: Callable[[Any], object], ctx: object, party: str) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(hook, ctx), name=f"proofgames-set-up-{party}", daemon=True
        )
        self._thread.start()

    @staticmethod
    def _run(hook: Callable[[Any], object], ctx: object) -> None:
        with contextlib.suppress(BaseException):
            hook(ctx)

    def wait(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds (``None``: until it ends); ``True`` once it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


#: The run length (``ctx.steps``) from which the driver runs a party's set-up, in a thread
#: of its own; below it a thread costs more than it saves (its start, and the GIL passed
#: back and forth at every checkpoint of the engine's run), and the party's calls do the
#: work.  Honest A against honest B on bb5 cut short, medians of 9 alternated debates: at
#: 2^20 steps 9.5 ms with threads against 8.7 ms without, at 2^21 16.9 against 16.0 ms,
#: at 3 * 2^20 16.1 against 24.5 ms and at 2^22 18.4 against 30.1 ms (docs/performance.md).
THREADED_STEPS = 1 << 21


async def run_move(player: object, method: str, args: tuple[object, ...]) -> object:
    """Run one untrusted move in a daemon thread; the caller's timeout pre-empts it.

    Raises:
        Raised: carrying whatever the move raised (its own ``SystemExit`` or
            ``KeyboardInterrupt`` included: a user's signal reaches the main thread only).
    """
    import asyncio  # already imported by the running loop's owner

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
            value, error = _invoke(player, method, args), None
        except BaseException as exc:
            value, error = None, Raised(exc)
        with contextlib.suppress(RuntimeError):  # the run's loop closed: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name=f"party-{method}", daemon=True).start()
    return await done


def check_reply(reply: ProverReply) -> str | None:
    """What is wrong with the costs a move reports, or ``None`` when they can be counted.

    Example:
        >>> check_reply(ProverReply("x", 10, 2, 0.5)) is None
        True
        >>> check_reply(ProverReply("x", cost_usd=float("nan")))
        'reported a malformed cost nan (USD)'
    """
    tokens = (reply.input_tokens, reply.output_tokens)
    if not all(type(x) is int and 0 <= x <= MAX_REPORTED_TOKENS for x in tokens):
        return (
            f"reported a malformed token count (input {shown(tokens[0])}, output "
            f"{shown(tokens[1])}; each an int in [0, {MAX_REPORTED_TOKENS:,}])"
        )
    if not (type(reply.calls) is int and 0 <= reply.calls <= MAX_REPORTED_CALLS):
        return f"reported a malformed call count {shown(reply.calls)}"
    money = reply.cost_usd
    if money is not None and not (
        type(money) in (int, float) and math.isfinite(money) and 0 <= money <= MAX_REPORTED_USD
    ):
        return f"reported a malformed cost {shown(money)} (USD)"
    return None
