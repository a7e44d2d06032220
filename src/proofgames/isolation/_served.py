"""V's side of the party server: a prover's process forked by a warm server, not started anew.

When ``PROOFGAMES_PARTY_SERVER`` names the socket of a running party server
(:mod:`proofgames.isolation.server`), a registered strategy's process is not started
with ``python -m proofgames.isolation.party``: V makes the three pipes of the channel
itself, passes their far ends to the server over the socket (``SCM_RIGHTS``), and the
server forks a fresh child from its warm process (imports done, compiled kernels loaded),
which plays on those pipes exactly as a started process does.  :class:`ServedProcess` is
V's handle on that child, with the parts of :class:`subprocess.Popen` that
:class:`~proofgames.isolation._child.ChildProcess` uses.

The server keeps each child unreaped while V's connection for it is open, so the child's
process id (and process group) cannot be reused while V may still kill it; it reports the
exit status on that connection, and reaps the child when V closes it.  If the server
cannot be reached, refuses, or runs other code than V (another source tree or Python), the
launch falls back to starting the process afresh, with one warning: the server is an
optimisation, never a requirement.

Example:
    >>> import os
    >>> launcher(["python", "-m", "proofgames.isolation.party", "honest"], {}) is None
    True
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from .. import wire

ENV = "PROOFGAMES_PARTY_SERVER"  #: the server's socket path (opt-in: unset, no server)
RUNNER = ["-m", "proofgames.isolation.party"]
CONNECT_SECONDS = 10.0  # how long V waits for the server's answer before falling back
#: Resource limits V passes on, so a forked child has the limits a started one inherits.
LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
          "RLIMIT_NPROC", "RLIMIT_STACK", "RLIMIT_CORE")  # fmt: skip
UNKNOWN_EXIT = 255  # the exit status when the server went away before reporting it
REPORT_GRACE = 5.0  # seconds V waits for the server's report once the child has ended

Launch = Callable[[list[str], Mapping[str, str] | None, str | None], Any]


class ServerUnavailable(Exception):
    """The party server could not fork this party (V then starts the process itself)."""


def identity() -> dict[str, str]:
    """What must match between V and the server: the package's folder and the Python."""
    return {"src": str(Path(__file__).resolve().parent.parent), "python": sys.version}


def current_limits() -> dict[str, list[int]]:
    """The resource limits of this process, by name: ``[soft, hard]`` (-1: unlimited)."""
    return {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS}


def launcher(argv: list[str], env: Mapping[str, str] | None, first: bytes = b"") -> Launch | None:
    """How to start ``argv``: through the server, or ``None`` (start it as usual).

    Only the library's own strategy runner (``python -m proofgames.isolation.party
    SPEC``) is served, and only when ``PROOFGAMES_PARTY_SERVER`` is set (in ``env`` or,
    when ``env`` is ``None``, in ours).  ``first`` (the encoded hello) is put into a served
    child's input before the server is asked for the child (see :class:`ServedProcess`).
    """
    path = (os.environ if env is None else env).get(ENV, "")
    if not path or len(argv) != 4 or argv[1:3] != RUNNER:
        return None

    def launch(argv: list[str], env: Mapping[str, str] | None, cwd: str | None) -> Any:
        try:
            return ServedProcess(path, argv[3], env, cwd, first)
        except ServerUnavailable as exc:
            warnings.warn(
                f"party server {path!r} not used ({exc}); the party's process is started anew",
                RuntimeWarning,
                stacklevel=2,
            )
        return subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, env=None if env is None else dict(env), cwd=cwd,
            close_fds=True,
        )  # fmt: skip

    return launch


def _connected(path: str) -> socket.socket:
    """A socket connected to ``path``, waiting up to :data:`CONNECT_SECONDS` for room.

    A Unix socket whose server's queue of unanswered connections is full refuses at once
    (``EAGAIN``) rather than waiting, even with a timeout; the server drains its queue (it
    drops the oldest idle ones), so a burst of other connections only delays V.

    Raises:
        ServerUnavailable: no server at ``path``, or no room in its queue in time.
    """
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect(path)
            return sock
        except BlockingIOError as exc:  # the queue is full for now
            sock.close()
            if time.monotonic() >= deadline:
                raise ServerUnavailable(f"cannot connect: {exc.strerror or exc}") from None
            time.sleep(0.002)
        except OSError as exc:
            sock.close()
            raise ServerUnavailable(f"cannot connect: {exc.strerror or exc}") from None


def _connect(path: str) -> socket.socket:
    if not all(hasattr(socket, x) for x in ("AF_UNIX", "SO_PEERCRED", "send_fds")):
        raise ServerUnavailable("this platform cannot pass pipes to a server (Linux only)")
    sock = _connected(path)
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        uid = struct.unpack("3i", creds)[1]
        if uid != os.getuid():
            raise ServerUnavailable(f"the server runs as user {uid}, not as this user")
    except OSError as exc:
        sock.close()
        raise ServerUnavailable(f"cannot connect: {exc.strerror or exc}") from None
    except ServerUnavailable:
        sock.close()
        raise
    return sock


def read_line(sock: socket.socket, buf: bytearray, limit: int = 1 << 20) -> bytes | None:
    """One line from ``sock`` (its timeout applies), or ``None`` at end of stream."""
    while (i := buf.find(b"\n")) < 0:
        if len(buf) > limit:
            raise ValueError("line too long")
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    line = bytes(buf[: i + 1])
    del buf[: i + 1]
    return line


class ServedProcess:
    """A party's process forked by the party server: the parts of ``Popen`` V uses.

    Args:
        path: the server's socket.
        spec: the strategy spec the child plays.
        env: the environment a started process would get (the child takes it).
        cwd: its working directory (default: ours).
        first: what V writes first (the encoded hello): as much of it as the pipe holds
            is written before the request, so that the child finds it as it starts,
            without waiting for V to have the server's answer; :attr:`unsent` is the rest.

    Raises:
        ServerUnavailable: no server there, or it refused (V then starts the process).
    """

    def __init__(
        self, path: str, spec: str, env: Mapping[str, str] | None, cwd: str | None,
        first: bytes = b"",
    ) -> None:  # fmt: skip
        self.returncode: int | None = None
        self.unsent = first
        self._buf = bytearray()
        self._sock: socket.socket | None = _connect(path)
        theirs: list[int] = []
        try:
            (in_r, in_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
            theirs = [in_r, out_w, err_w]
            self.stdin: BinaryIO = os.fdopen(in_w, "wb", buffering=0)
            self.stdout: BinaryIO = os.fdopen(out_r, "rb", buffering=0)
            self.stderr: BinaryIO = os.fdopen(err_r, "rb", buffering=0)
            if first:
                os.set_blocking(in_w, False)
                with contextlib.suppress(BlockingIOError):
                    self.unsent = first[os.write(in_w, first) :]
            request = {
                "type": "fork", "spec": spec, **identity(), "limits": current_limits(),
                "env": dict(os.environ if env is None else env), "cwd": cwd or os.getcwd(),
            }  # fmt: skip
            socket.send_fds(self._sock, [wire.encode(request)], theirs)
            for fd in theirs:
                os.close(fd)
            theirs = []
            answer = self._answer()
        except (OSError, ValueError, wire.Malformed) as exc:
            self._give_up(theirs)
            raise ServerUnavailable(f"the exchange failed: {exc}") from None
        if type(answer) is not dict or answer.get("type") != "forked":
            self._give_up([])
            said = answer.get("message") if type(answer) is dict else None
            raise ServerUnavailable(f"it refused: {str(said)[:300]}")
        self.pid = wire.as_int(answer.get("pid"), "the server's pid")
        self._pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(self.pid)  # kept valid: the server holds the child
        self._sock.setblocking(False)

    def _answer(self) -> Any:
        assert self._sock is not None
        line = read_line(self._sock, self._buf)
        if line is None:
            raise ValueError("the server closed the connection")
        return wire.decode(line)

    def _give_up(self, fds: list[int]) -> None:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for f in ("stdin", "stdout", "stderr"):
            with contextlib.suppress(AttributeError, OSError):
                getattr(self, f).close()
        self._release()

    def _release(self) -> None:
        """Close the connection: the server reaps the child (and kills it if still alive)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if getattr(self, "_pidfd", None) is not None:
            assert self._pidfd is not None
            os.close(self._pidfd)
            self._pidfd = None

    def _check(self, timeout: float) -> None:
        """Read the server's exit report if one comes within ``timeout`` seconds."""
        if self.returncode is not None or self._sock is None:
            return
        ready, _, _ = select.select([self._sock], [], [], max(0.0, timeout))
        if not ready:
            return
        try:
            chunk = self._sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        self._buf += chunk
        if b"\n" in self._buf:
            msg = wire.decode(bytes(self._buf[: self._buf.find(b"\n") + 1]))
            code = msg.get("code") if type(msg) is dict else None
            self.returncode = code if type(code) is int else UNKNOWN_EXIT
            self._release()
        elif not chunk:  # the server went away: the child is init's now; ask the pidfd
            self._sock.close()
            self._sock = None

    def poll(self) -> int | None:
        """The exit status if the child has ended (as the server reported), else ``None``."""
        self._check(0.0)
        if self.returncode is None and self._sock is None and self._pidfd_ended(0.0):
            self.returncode = UNKNOWN_EXIT
            self._release()
        return self.returncode

    def _pidfd_ended(self, timeout: float) -> bool:
        if self._pidfd is None:
            return True  # nothing left to ask: treat it as gone
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit status; raise ``subprocess.TimeoutExpired`` past ``timeout``.

        A server that does not report within :data:`REPORT_GRACE` seconds of the child's
        end (say, a party stopped it with SIGSTOP) is not waited for: the status is then
        :data:`UNKNOWN_EXIT`, so no party can make V wait here for ever.
        """
        end = None if timeout is None else time.monotonic() + timeout
        ended: float | None = None
        while self.poll() is None:
            left = 1.0 if end is None else end - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(f"party {self.pid}", timeout or 0.0)
            if self._sock is None:
                self._pidfd_ended(min(left, 1.0))
                continue
            self._check(min(left, 0.1))
            if self.returncode is None and self._pidfd_ended(0.0):
                ended = ended or time.monotonic()
                if time.monotonic() - ended > REPORT_GRACE:
                    self.returncode = UNKNOWN_EXIT
                    self._release()
        return self.returncode  # type: ignore[return-value]

    def let_go(self) -> None:
        """Leave the child to the server, which kills and reaps it (V does not wait).

        For the end of a debate: the child, a party runner the server forked, has nothing
        left to do once its input is closed, and the server ends it at once instead of
        V waiting for its exit (about a millisecond per child, on the debate's clock).
        """
        if self._sock is None:  # the server is gone: nobody else would end it
            self.kill()
        if self.returncode is None:
            self.returncode = -signal.SIGKILL
        self._release()

    def kill_group(self) -> None:
        """SIGKILL the child's process group; only the child itself once the server is gone.

        While the connection is open the server has not reaped the child, so its process
        group id still names it; without the server, the pidfd reaches the child alone.
        """
        if self._sock is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the child (through its pidfd when there is one)."""
        if self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        elif self._sock is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
