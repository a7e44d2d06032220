"""A user's interrupt is never a party's move: SIGINT and SIGTERM while parties play.

The driver turns whatever escapes a call into a party (a prover, a judge) into that
party's loss; a ``KeyboardInterrupt`` a party raises itself is no exception. A *user's*
Ctrl-C or a ``kill`` is something else: it must stop the run, store nothing partial and
decide nothing. So while proofgames calls into parties, :func:`guard` holds handlers for
SIGINT and SIGTERM that record the signal and raise :class:`Interrupted`, which is not a
``KeyboardInterrupt``. The driver lets it through, and :func:`check` raises it after a
call that swallowed it (a party that catches everything cannot hide the user's signal).

The handlers are installed only on the main thread (where Python runs them), only over
the default ones (a process started with SIGINT ignored keeps ignoring it), and the
previous handlers come back when the outermost guard ends. The command line runs every
command inside one guard and exits with ``128 + signal`` (130 for SIGINT, 143 for
SIGTERM) and one line.

Example:
    As a terminal starts Python (a background job of a script starts with SIGINT
    ignored, and :func:`guard` leaves an ignored signal alone):

    >>> import os, signal
    >>> before = signal.signal(signal.SIGINT, signal.default_int_handler)
    >>> _ = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    >>> try:
    ...     with guard():
    ...         os.kill(os.getpid(), signal.SIGINT)
    ... except Interrupted as exc:
    ...     print(exc.exit_code, exc)
    130 interrupted by SIGINT: stopped; nothing unfinished was stored
    >>> signal.getsignal(signal.SIGINT) is signal.default_int_handler
    True
    >>> _ = signal.signal(signal.SIGINT, before)
    >>> import pickle
    >>> pickle.loads(pickle.dumps(Interrupted(signal.SIGTERM))).exit_code
    143
"""

from __future__ import annotations

import importlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (int(signal.SIGINT), int(signal.SIGTERM))
#: :mod:`signal`'s C functions, without its conversions of every handler to an enum (which
#: raise and catch a ValueError per call): a guard costs about 2 us instead of 18 us, once
#: per call into a party.
_raw: Any = importlib.import_module("_signal")


class Interrupted(BaseException):
    """The user stopped the run (SIGINT or SIGTERM): never a party's move.

    A ``BaseException`` (like ``KeyboardInterrupt``, unlike a party's error), so that
    code catching ``Exception`` lets it through.

    Attributes:
        signum: the signal's number.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(
            f"interrupted by {signal.Signals(signum).name}: stopped; nothing unfinished was stored"
        )

    def __reduce__(self) -> tuple[type[Interrupted], tuple[int]]:
        """Pickled by its signal (a pool's worker sends it back to the parent)."""
        return Interrupted, (self.signum,)

    @property
    def exit_code(self) -> int:
        """The shell's status for a process the signal stopped: ``128 + signum``."""
        return 128 + self.signum


_depth = 0
_received: int | None = None
_previous: dict[int, Any] = {}  # the handlers the first guard in replaced
_worker = False


def handler(signum: int, frame: FrameType | None) -> None:
    """The handler :func:`guard` installs: record the signal, raise :class:`Interrupted`.

    In a pool's worker (:func:`worker_mode`) between items, it ends the process quietly
    instead (``SystemExit``), releasing whatever lock the worker waits in.
    """
    global _received
    if _worker and not _depth:
        raise SystemExit(128 + signum)
    _received = signum
    raise Interrupted(signum)


def _ours(signum: int) -> bool:
    """Whether the current handler of ``signum`` is a default one (or ours) to replace."""
    current = _raw.getsignal(signum)
    if current is handler:
        return True
    if signum == signal.SIGINT:
        return current is signal.default_int_handler
    return bool(current == signal.SIG_DFL)


@contextmanager
def guard() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` while the block runs.

    Guards may overlap in any order: the first one in installs the handlers, the last
    one out restores what it found. (Coroutines on one event loop enter and leave their
    guards interleaved, not nested: the first to enter may leave first.) Off the main
    thread this does nothing at all (no signal handler runs there, and a thread that
    outlives the main thread's guard must not leave it counted): :func:`check` and
    :func:`received` there see the main thread's guard.
    """
    global _depth, _received
    if threading.current_thread() is not threading.main_thread():
        yield  # the main thread's guard, if any, stands (a thread must not count: one
        return  # that outlives the guard would leave it counted, and the handlers off)
    if not _depth:
        _previous.clear()
        _previous.update({s: _raw.signal(s, handler) for s in SIGNALS if _ours(s)})
        _received = None
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth:
            for s, old in _previous.items():
                _raw.signal(s, old)
            _previous.clear()


def received() -> int | None:
    """The signal the current guard recorded, if any."""
    return _received if _depth else None


def check() -> None:
    """Raise :class:`Interrupted` if the user's signal arrived in this guard.

    The driver calls it after each call into a party: a party that caught the
    :class:`Interrupted` raised inside it cannot hide the user's signal.
    """
    if _depth and _received is not None:
        raise Interrupted(_received)


def by_user(exc: BaseException) -> bool:
    """Whether ``exc``, escaping a party's call, is the user's interrupt (not the party's).

    Only a signal the guard's handler recorded counts: an :class:`Interrupted` or a
    ``KeyboardInterrupt`` that a party raises itself is that party's move, and it loses.

    Example:
        >>> by_user(Interrupted(2)), by_user(KeyboardInterrupt())
        (False, False)
    """
    return received() is not None


def worker_mode() -> None:
    """In a pool's worker process: a signal stops the item being played, or the worker.

    While the worker plays an item (inside a :func:`guard`), SIGINT and SIGTERM raise
    :class:`Interrupted` as anywhere; between items they end the worker at once and
    quietly. A forked worker also drops the guard it inherited from its parent.
    """
    global _depth, _received, _worker
    _depth, _received, _worker = 0, None, True
    _previous.clear()
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, handler)
