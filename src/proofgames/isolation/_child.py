r"""One party's OS process and the line channel to it, every wait bounded by a deadline.

:class:`ChildProcess` starts a program in its own process group (its own session), talks
to it in the wire format of :mod:`proofgames.wire` (one JSON object per line on its
stdin and stdout), keeps only the last :data:`STDERR_TAIL` bytes of its stderr, and kills
the whole group on :meth:`~ChildProcess.kill`.  Reads and writes never block past the
deadline they are given: a party that stops answering, stops reading, or never ends its
line is killed, and the wait raises.  This module is the mechanism only; what the
messages mean is :mod:`proofgames.isolation`'s business.

Example:
    >>> import sys, time
    >>> from proofgames.isolation._child import ChildProcess
    >>> echo = "import sys\nfor line in sys.stdin: sys.stdout.write(line); sys.stdout.flush()"
    >>> child = ChildProcess([sys.executable, "-c", echo], "echo")
    >>> child.send({"type": "ping", "n": 1}, time.monotonic() + 30)
    >>> child.receive(time.monotonic() + 30, 30.0, "the echo")
    {'type': 'ping', 'n': 1}
    >>> child.close(grace=5.0)
    >>> child.alive
    False
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import wire

STDERR_TAIL = 64 * 1024  # bytes of a party's stderr kept for error messages
_CHUNK = 1 << 20


class ChildFailed(Exception):
    """A party's process broke the channel: it died, closed a pipe or sent an over-long line."""


class ChildProcess:
    """A program run as a party, with a deadline on every exchange.

    Args:
        argv: the command.
        label: who it is, for messages (``"A"``, ``"prover B"``).
        env: its environment (default: ours).
        cwd: its working directory (default: ours).
        launch: what starts it, if not :class:`subprocess.Popen` (the party server's
            launcher, :func:`proofgames.isolation._served.launcher`): called with
            ``(argv, env, cwd)``, it returns a process with ``Popen``'s pipes and methods.
        first: bytes to write first (an encoded message), within ``startup`` seconds;
            the part a launched process has already taken (its ``unsent``) is skipped.
        startup: the seconds ``first`` may take to write.

    Raises:
        OSError: if the program cannot be started.
    """

    def __init__(
        self,
        argv: Sequence[str],
        label: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        launch: Callable[[list[str], Mapping[str, str] | None, str | None], Any] | None = None,
        first: bytes = b"",
        startup: float = 60.0,
    ) -> None:
        self.label = label
        self.started = time.monotonic()
        self._buf = bytearray()
        self._scan = 0
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._killed = False
        self.compress = False  # the peer reads compressed bytes (its ready said so)
        self.proc: Any  # a Popen, or what ``launch`` returned
        if launch is not None:
            self.proc = launch(list(argv), env, cwd)
        else:
            self.proc = self._popen(argv, env, cwd)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._writable, self._readable = select.poll(), select.poll()  # made once, not per call
        self._writable.register(self._in, select.POLLOUT)
        self._readable.register(self._out, select.POLLIN)
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        pending = getattr(self.proc, "unsent", first)  # a served child may have it already
        if pending:
            self._write(memoryview(pending), self.started + startup)

    @staticmethod
    def _popen(
        argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: kill() reaches its children
            env=None if env is None else dict(env),
            cwd=cwd,
            close_fds=True,
        )

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def send(self, message: object, deadline: float) -> None:
        """Write one message; raise ``TimeoutError`` (after killing it) if it stops reading."""
        self._write(memoryview(wire.encode(message, compress=self.compress)), deadline)

    def _write(self, data: memoryview, deadline: float) -> None:
        while data:  # try at once: a line that fits the pipe needs no wait
            try:
                n = os.write(self._in, data[:_CHUNK])
            except BlockingIOError:
                self._wait(self._writable, deadline, None, "reading its input")
                continue
            except OSError:
                msg = f"{self.label}'s process closed its input{self.status()}"
                raise ChildFailed(msg) from None
            data = data[n:]

    def receive(self, deadline: float, limit: float, what: str) -> Any:
        """The next message, decoded; raise ``TimeoutError`` (after a kill) past ``deadline``.

        Args:
            deadline: ``time.monotonic()`` by which the line must be complete.
            limit: the seconds that deadline stands for (for the message).
            what: what is awaited (for the message).

        Raises:
            TimeoutError: the deadline passed; the process group was killed.
            ChildFailed: the process closed its output, or sent a line over ``wire.MAX_LINE``.
            wire.Malformed: the line is not a message of the wire format.
        """
        while True:
            i = self._buf.find(b"\n", self._scan)
            if i >= 0:
                line = bytes(self._buf[: i + 1])
                del self._buf[: i + 1]
                self._scan = 0
                return wire.decode(line)
            self._scan = len(self._buf)
            if len(self._buf) > wire.MAX_LINE:
                self.kill()
                raise ChildFailed(
                    f"{self.label} sent a line longer than {wire.MAX_LINE} bytes; "
                    "its process was killed"
                )
            self._wait(self._readable, deadline, limit, what)
            try:
                chunk = os.read(self._out, _CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                raise ChildFailed(
                    f"{self.label}'s process closed its output while {what} "
                    f"was awaited{self.status()}"
                )
            self._buf += chunk

    def _wait(self, pipe: select.poll, deadline: float, limit: float | None, what: str) -> None:
        """Block until the pipe is ready; past the deadline, kill the group and raise."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                shown = f" after {limit:.3g} s" if limit is not None else ""
                raise TimeoutError(
                    f"{self.label} timed out{shown} ({what}); its process was killed"
                )
            if pipe.poll(math.ceil(min(left, 3600.0) * 1000)):  # milliseconds, rounded up
                return

    def status(self) -> str:
        """``" (exit code N; stderr: ...)"`` for messages, once the process has ended."""
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return ""
        tail = self.stderr_tail().strip().splitlines()
        last = f"; stderr: {tail[-1][-200:]}" if tail else ""
        return f" (exit code {code}{last})"

    def stderr_tail(self) -> str:
        """The last bytes the process wrote to stderr (at most :data:`STDERR_TAIL`)."""
        with self._lock:
            return self._tail.decode("utf-8", "replace")

    def _drain(self, stream: Any) -> None:
        """Keep the tail of the party's stderr until it ends; then close the pipe (ours)."""
        try:
            while True:
                chunk = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
                if not chunk:
                    return
                with self._lock:
                    self._tail += chunk
                    del self._tail[: max(0, len(self._tail) - STDERR_TAIL)]
        except (OSError, ValueError):  # the pipe was closed under us
            return
        finally:
            with contextlib.suppress(OSError):
                stream.close()

    def kill(self) -> None:
        """SIGKILL the process group, reap the process and close the pipes (idempotent)."""
        if self._killed:
            return
        self._killed = True
        kill_group = getattr(self.proc, "kill_group", None)  # a served process kills its own
        if kill_group is not None:
            kill_group()
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def close(self, grace: float = 0.0) -> None:
        """Close its input (a well-behaved party then exits), wait up to ``grace`` s, kill.

        A process forked by the party server is not waited for: the server kills and
        reaps it as V lets go of it (:meth:`~._served.ServedProcess.let_go`).
        """
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        let_go = getattr(self.proc, "let_go", None)
        if let_go is not None and not self._killed:
            self._killed = True
            let_go()
            with contextlib.suppress(OSError):
                self.proc.stdout.close()
            return
        if grace > 0:  # woken by the exit itself, not by polling every 10 ms
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
        self.kill()
