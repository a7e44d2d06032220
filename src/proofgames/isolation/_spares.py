"""The party server's spares: children forked and warmed ahead of the requests they serve.

:class:`Spares` is the pool a :class:`~proofgames.isolation.server.PartyServer` keeps.  A
spare is forked with one end of a socket pair, warms up (:func:`._forked.spare`) and
says so with one byte; a request is then handed to it with V's three pipes
(:meth:`Spares.hand_over`), and it becomes that party.  The pool forks only when told the
server is quiet (:meth:`Spares.refill`), and drops (kills and reaps) a spare that has died,
sent anything but its one byte, or been stopped by another process; after spares that died
before they were ready it waits longer and longer (up to :data:`MAX_BACKOFF`) before it
forks the next ones, so that a spare that cannot start never becomes a loop of forks.

Example:
    >>> import selectors
    >>> pool = Spares(0, selectors.DefaultSelector())
    >>> pool.refill(), pool.hand_over({"spec": "honest"}, [])
    (None, None)
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import wire
from ._forked import READY, WARMING_NAME, name_process, spare

SPARES = 2  #: children forked and warmed ahead of requests (one debate's two provers)
QUIET_BEFORE_SPARES = 0.05  # seconds without requests or running children before a refill
MAX_BACKOFF = 60.0  # seconds: the longest pause in forking after spares died unready
HAND_OVER_MAX = 1 << 16  # bytes of a request a spare is handed (a longer one: a fresh fork)
EVENT = "spare"  #: the selector data of a spare's socket


def os_threads() -> int:
    """How many OS threads this process has (1 when it is safe to fork)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def runnable(pid: int) -> bool:
    """Whether process ``pid`` exists and is neither stopped nor a zombie (``/proc``)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("T", "t", "Z", "X")


@dataclass
class _Spare:
    """A child forked ahead of any request, on its own socket; ``ready`` once it is warm."""

    pid: int
    sock: socket.socket
    ready: bool = False


class Spares:
    """Up to ``target`` spares, their sockets registered with ``selector`` (data ``"spare"``).

    Args:
        target: how many to keep (0: none).
        selector: the server's selector, which reports a spare's byte or its end.
    """

    def __init__(self, target: int, selector: selectors.BaseSelector) -> None:
        self.target = target
        self._sel = selector
        self._spares: dict[int, _Spare] = {}
        self._handed: list[socket.socket] = []  # handed a request, not yet let go (go())
        self._quiet_since = -float("inf")  # the first ones are forked at once
        self._backoff, self._not_before = 0.0, 0.0  # after spares that died before ready
        try:
            self._name: str | None = Path("/proc/self/comm").read_text().strip()
        except OSError:
            self._name = None

    @property
    def wanted(self) -> bool:
        """Whether the pool is short of its target."""
        return len(self._spares) < self.target

    def busy(self) -> None:
        """Note a request or a running child: the server is not quiet from now."""
        self._quiet_since = time.monotonic()

    def refill(self) -> None:
        """Fork spares up to the target once the server has been quiet a while.

        Quiet: :meth:`busy` not called for :data:`QUIET_BEFORE_SPARES` seconds.  A
        spare's fork and warm-up take a few milliseconds of CPU; done while provers
        simulate, or while the next debate of a series starts, they would take them from
        a prover's core.  A request that finds no warm spare gets a child forked for it,
        as with no spares at all.
        """
        now = time.monotonic()
        if not self.wanted or now - self._quiet_since < QUIET_BEFORE_SPARES:
            return
        if now < self._not_before:  # spares have been dying before they were ready
            return
        while self.wanted and os_threads() == 1:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            sys.stdout.flush()
            sys.stderr.flush()
            if self._name is not None:  # born with its name: ps never shows it as the server
                name_process(WARMING_NAME)
            pid = os.fork()
            if pid == 0:  # the spare: never returns
                os.dup2(theirs.fileno(), 3)
                os.closerange(4, os.sysconf("SC_OPEN_MAX"))
                spare(socket.socket(fileno=3))
            if self._name is not None:
                name_process(self._name)
            theirs.close()
            ours.setblocking(False)
            self._spares[ours.fileno()] = _Spare(pid, ours)
            self._sel.register(ours, selectors.EVENT_READ, EVENT)

    def said(self, fileobj: Any) -> None:
        """A spare's socket is readable: it is warm (its one byte), or gone (anything else)."""
        sp = self._spares.get(fileobj.fileno())
        if sp is None:
            return
        try:
            said = sp.sock.recv(16)
        except BlockingIOError:
            return
        except OSError:
            said = b""
        if said == READY and not sp.ready:
            sp.ready = True
            self._backoff = 0.0
            return
        if not sp.ready:  # it died getting ready: fork the next ones later, and later
            self._backoff = min(MAX_BACKOFF, max(0.1, 2 * self._backoff))
            self._not_before = time.monotonic() + self._backoff
        self._drop(sp)

    def hand_over(self, request: dict[str, Any], fds: list[int]) -> int | None:
        """Give the request and V's pipes to a warm spare: its pid, or ``None`` (fork one)."""
        for gone in [x for x in self._spares.values() if x.ready and not runnable(x.pid)]:
            self._drop(gone)  # stopped (SIGSTOP from another process) or dead
        sp = next((x for x in self._spares.values() if x.ready), None)
        if sp is None:
            return None
        line = wire.encode(request)
        if len(line) > HAND_OVER_MAX:
            return None
        try:
            sp.sock.setblocking(True)
            sp.sock.settimeout(1.0)
            socket.send_fds(sp.sock, [line[:4096]], fds)
            if len(line) > 4096:  # (an empty send to a spare already gone raises EPIPE)
                sp.sock.sendall(line[4096:])
        except OSError:
            self._drop(sp)
            return None
        self._forget(sp)
        self._handed.append(sp.sock)  # closed by go(), once V has the server's answer
        return sp.pid

    def go(self) -> None:
        """Let the spares just handed a request start: close their sockets.

        A spare waits for this after reading its request, so that the server, which it
        would otherwise pre-empt on its core (a woken process that has slept long runs
        first), answers V before the spare sets itself up: V has its answer about 2 ms
        sooner.
        """
        for sock in self._handed:
            sock.close()
        self._handed.clear()

    def close(self) -> None:
        """Kill and reap every spare (those just handed a request start)."""
        self.go()
        for sp in list(self._spares.values()):
            self._drop(sp)

    def _forget(self, sp: _Spare) -> None:
        """Take a spare out of the pool (its socket stays open)."""
        self._spares.pop(sp.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(sp.sock)

    def _drop(self, sp: _Spare) -> None:
        """Forget a spare: close its socket, kill and reap it."""
        self._forget(sp)
        sp.sock.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(sp.pid, signal.SIGKILL)  # once it has its own session
        with contextlib.suppress(ProcessLookupError):
            os.kill(sp.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(sp.pid, 0)
