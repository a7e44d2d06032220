"""The party server: a warm process that forks a fresh child for each isolated prover.

A prover started as ``python -m proofgames.isolation.party SPEC`` pays, before its first
move, a Python start, the imports of proofgames and NumPy, and the load of the engine's
compiled kernels (the C library of :mod:`proofgames._native`, or numba's cache where no
C compiler works: about a second here).  The server pays these once:
it imports the party runner, plays one small debate of each kind to load the kernels, and
then waits on a Unix socket.  For each prover, V (with ``PROOFGAMES_PARTY_SERVER`` set to
the socket, see :mod:`proofgames.isolation._served`) sends the strategy spec with the far
ends of the prover's three pipes; the server forks, and the child -- in a new session,
its stdin, stdout and stderr on those pipes, every other descriptor closed, V's
environment, working directory and resource limits applied -- runs the party runner
exactly as a started process would.  Nothing of a debate ever enters the server: the
hello and every call reach the child on its own pipes, from V.

Spares: the server keeps :data:`SPARES` children forked ahead of any request (``--spares
N``; 0 forks each child on request), each warmed by setting up a party for a tiny debate of
its own (:mod:`~proofgames.isolation._forked`).  A request is handed to a warm spare with
V's pipes, so a prover's process is ready about 4 ms sooner; a spare serves one request
only.  The server forks spares only after :data:`QUIET_BEFORE_SPARES` seconds without a
request or a running child, never while provers simulate; and it drops (kills and reaps) a
spare that another process of the user has stopped or killed instead of handing it a party.

Trust boundary, as with a started process: each prover is its own process (and process
group), V's deadlines and message limits apply unchanged, and a child that crashes, hangs
or writes garbage loses exactly as before.  The children share the server's start-up
state only (imports, compiled code, the hash seed); each gets V's seed in its hello.

Fork safety: the server forks only while it has exactly one OS thread (checked before
each fork from ``/proc/self/task``; otherwise it refuses and V starts the process
anew).  It runs the BLAS libraries with one thread (``OPENBLAS_NUM_THREADS=1`` and the
like, set before NumPy is imported, re-executing itself if they were not), starts no
threads of its own (SIGCHLD arrives through a wake-up pipe), and the engine's kernels
(C, or numba's, compiled without a parallel threading layer) start none, so none is
running when it forks.

Run it with ``proofgames party-server SOCKET`` (or ``python -m
proofgames.isolation.server SOCKET``) and export ``PROOFGAMES_PARTY_SERVER=SOCKET``.
Without the variable, or when the server is gone, provers are started as before.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import wire
from ._forked import SPARE_NAME, WARMING_NAME, become
from ._served import ENV, LIMITS, identity
from ._spares import EVENT, QUIET_BEFORE_SPARES, SPARES, Spares, os_threads

__all__ = [
    "SINGLE_THREADED", "SPARES", "PartyServer", "busy_children", "children_cpu", "main",
    "serving", "warm_up",
]  # fmt: skip

#: Environment that keeps the numerical libraries to one thread (set before NumPy loads).
SINGLE_THREADED = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}  # fmt: skip
MAX_REQUEST = 4 << 20  # bytes of one fork request (the spec and V's environment)
MAX_PENDING = 64  # connections that have not yet asked for a child
MODULE = "proofgames.isolation.server"
USAGE = "usage: python -m proofgames.isolation.server SOCKET-PATH [--spares N]"


def warm_up() -> None:
    """Import what every child needs, so that no child imports it after the fork.

    The party runner; every protocol's and strategy's module (each is otherwise imported
    on its first lookup); the engine's compiled kernels (a bb2 debate each).
    """
    from .._registry import make_strategy, strategy_names
    from ..instances import resolve_instance
    from ..protocols import get_protocol, protocol_names
    from ..protocols._catalog import Options
    from . import party  # noqa: F401  (imported for the children)

    for name in protocol_names():
        for role in "AB":
            strategy_names(name, role)

    for protocol in ("bisection", "cross-examination"):
        a, b = (make_strategy(protocol, role, "honest") for role in "AB")
        out = get_protocol(protocol).run(resolve_instance(protocol, "bb2"), 1, a, b, Options())
        assert out.winner == "A", out.reason


@dataclass
class _Conn:
    """One connection from V: the request being read, then the child it asked for."""

    sock: socket.socket
    buf: bytearray = field(default_factory=bytearray)
    fds: list[int] = field(default_factory=list)
    pid: int | None = None
    reported: bool = False


class PartyServer:
    """Listens on ``path``; forks one party child per request (see the module docstring).

    Args:
        path: the socket's path (created with mode 0600; an old socket there is replaced).
    """

    def __init__(self, path: str, spares: int = SPARES) -> None:
        if type(spares) is not int or not 0 <= spares <= 64:
            raise ValueError(f"spares must be an integer in [0, 64], got {spares!r}")
        self.path = path
        self.spares = spares
        self._sel = selectors.DefaultSelector()
        self._conns: dict[int, _Conn] = {}
        self._spares = Spares(spares, self._sel)
        self._stop = False
        with contextlib.suppress(FileNotFoundError):
            if Path(path).is_socket():
                os.unlink(path)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            self._listener.bind(path)
        finally:
            os.umask(old)
        self._listener.listen(64)
        self._listener.setblocking(False)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel.register(self._listener, selectors.EVENT_READ, "listen")
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")

    def serve_forever(self) -> None:
        """Serve until SIGTERM or SIGINT; then remove the socket (children live on)."""
        signal.set_wakeup_fd(self._wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._request_stop)
        signal.signal(signal.SIGINT, self._request_stop)
        try:
            while not self._stop:
                wait = QUIET_BEFORE_SPARES if self._spares.wanted else 1.0
                for key, _ in self._sel.select(timeout=wait):
                    try:
                        self._event(key.data, key.fileobj)
                    except Exception:  # a bad client never ends the server
                        traceback.print_exc(file=sys.stderr)
                self._reap_reports()
                self.refill()
        finally:
            self.close()

    def _request_stop(self, *_: object) -> None:
        self._stop = True

    def close(self) -> None:
        """Stop listening and remove the socket; forget (not kill) the children."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._listener.close()
        for conn in list(self._conns.values()):
            self._drop(conn, kill=False)
        self._spares.close()

    def refill(self) -> None:
        """Fork spares up to :attr:`spares`, unless a child of a debate is running."""
        if any(c.pid is not None and not c.reported for c in self._conns.values()):
            self._spares.busy()
        if not self._stop:
            self._spares.refill()

    def _event(self, kind: str, fileobj: Any) -> None:
        if kind == "listen":
            self._accept()
        elif kind == "wake":
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake_r, 4096)
        elif kind == EVENT:
            self._spares.said(fileobj)
        else:
            self._readable(self._conns[fileobj.fileno()])

    def _accept(self) -> None:
        try:
            sock, _ = self._listener.accept()
        except BlockingIOError:
            return
        except OSError:  # out of descriptors: let the waiting clients time out and fall back
            time.sleep(0.1)
            return
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            sock.close()  # only this user's processes may ask for a child
            return
        sock.setblocking(False)
        pending = [c for c in self._conns.values() if c.pid is None]
        if len(pending) >= MAX_PENDING:  # a flood of idle connections: the oldest goes
            self._drop(pending[0], kill=False)
        conn = _Conn(sock)
        self._conns[sock.fileno()] = conn
        self._sel.register(sock, selectors.EVENT_READ, "conn")

    def _readable(self, conn: _Conn) -> None:
        if conn.pid is not None:  # V closed (or wrote after the fork): release the child
            with contextlib.suppress(BlockingIOError):
                if conn.sock.recv(4096):
                    return
            self._drop(conn, kill=True)
            return
        try:
            data, fds, _, _ = socket.recv_fds(conn.sock, 65536, 3)
        except BlockingIOError:
            return
        conn.fds += fds
        conn.buf += data
        if not data or len(conn.buf) > MAX_REQUEST or len(conn.fds) > 3:
            self._drop(conn, kill=False)
            return
        if b"\n" in conn.buf:
            self._fork(conn)

    def _fork(self, conn: _Conn) -> None:
        self._spares.busy()
        try:
            request = wire.decode(bytes(conn.buf[: conn.buf.find(b"\n") + 1]))
            spec, env, cwd, limits = _check_request(request, conn.fds)
        except (ValueError, wire.Malformed) as exc:
            self._refuse(conn, str(exc))
            return
        request = {"spec": spec, "env": env, "cwd": cwd, "limits": limits}
        try:
            pid = self._spares.hand_over(request, conn.fds)
            if pid is None:
                if (threads := os_threads()) != 1:
                    said = f"the server has {threads} threads; it forks only with one"
                    self._refuse(conn, said)
                    return
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:  # the child: never returns
                    become(spec, conn.fds, env, cwd, limits)
            for fd in conn.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            conn.fds, conn.pid = [], pid
            with contextlib.suppress(OSError):
                conn.sock.sendall(wire.encode({"type": "forked", "pid": pid}))
        finally:
            self._spares.go()  # V has its answer: now the spare may take the core

    def _refuse(self, conn: _Conn, reason: str) -> None:
        with contextlib.suppress(OSError):
            conn.sock.setblocking(True)
            conn.sock.settimeout(1.0)
            conn.sock.sendall(wire.encode({"type": "refused", "message": reason[:500]}))
        self._drop(conn, kill=False)

    def _reap_reports(self) -> None:
        """Tell V of each child that has ended (left unreaped until V lets go)."""
        for conn in list(self._conns.values()):
            if conn.pid is None or conn.reported:
                continue
            try:
                info = os.waitid(os.P_PID, conn.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None:
                continue
            code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            conn.reported = True
            with contextlib.suppress(OSError):
                conn.sock.sendall(wire.encode({"type": "exit", "code": code}))

    def _drop(self, conn: _Conn, *, kill: bool) -> None:
        """Forget a connection: close its descriptors; kill (if asked) and reap its child."""
        self._conns.pop(conn.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(conn.sock)
        conn.sock.close()
        for fd in conn.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if conn.pid is not None and kill:  # V let go: whatever is left of the child goes
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(conn.pid, signal.SIGKILL)  # the child and what it started
            with contextlib.suppress(ProcessLookupError):  # before its setsid() the group is
                os.kill(conn.pid, signal.SIGKILL)  # not its own: waitpid would wait for ever
            with contextlib.suppress(ChildProcessError):
                os.waitpid(conn.pid, 0)


def _check_request(
    request: object, fds: list[int]
) -> tuple[str, dict[str, str], str, dict[str, list[int]]]:
    """The request's spec, environment, folder and limits; ``ValueError`` if it is not ours."""
    if type(request) is not dict or request.get("type") != "fork" or len(fds) != 3:
        raise ValueError("not a fork request with three pipes")
    mine = identity()
    for key in ("src", "python"):
        if request.get(key) != mine[key]:
            raise ValueError(f"V's {key} is {request.get(key)!r}, the server's {mine[key]!r}")
    spec, env, cwd = request.get("spec"), request.get("env"), request.get("cwd")
    if type(spec) is not str or not spec or spec.startswith("-"):
        raise ValueError("the spec must be a strategy spec")
    if type(env) is not dict or not all(type(v) is str for v in env.values()):
        raise ValueError("the environment must map names to strings")
    if type(cwd) is not str or not os.path.isdir(cwd):
        raise ValueError("the working directory is not a folder")
    limits = request.get("limits")
    if type(limits) is not dict or set(limits) != set(LIMITS):
        raise ValueError("the resource limits are missing")
    for name, pair in limits.items():
        _, hard = resource.getrlimit(getattr(resource, name))
        if type(pair) is not list or len(pair) != 2 or not all(type(x) is int for x in pair):
            raise ValueError(f"the limit {name} is not [soft, hard]")
        if hard != resource.RLIM_INFINITY and (pair[1] == resource.RLIM_INFINITY or pair[1] > hard):
            raise ValueError(f"V's {name} is above what the server may give")
    return spec, env, cwd, limits


@contextlib.contextmanager
def serving(
    path: str | Path, *, timeout: float = 120.0, spares: int = SPARES
) -> Iterator[subprocess.Popen[str]]:
    """Run a party server on ``path`` for the ``with`` block (started, warmed, then stopped).

    Set ``PROOFGAMES_PARTY_SERVER`` to ``path`` for the debates that should use it.
    ``spares`` is the server's ``--spares`` (children kept forked and warm).

    Raises:
        ProofgamesError: it did not say ready within ``timeout`` seconds.
    """
    from ..errors import ProofgamesError

    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                       env.get("PYTHONPATH")]))  # fmt: skip
    argv = [sys.executable, "-m", MODULE, str(path), "--spares", str(spares)]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env | SINGLE_THREADED)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], timeout)
        line = proc.stderr.readline() if ready else ""
        if "ready" not in line:
            raise ProofgamesError(f"the party server did not start: {line.strip()[:300]}")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def busy_children(pid: int) -> list[int]:
    """The children of process ``pid`` (a party server) but its idle spares, from /proc.

    Empty once every prover it forked has been reaped (V let go of them all).
    """
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    busy = []
    for kid in map(int, kids):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{kid}/comm").read_text().strip() in (SPARE_NAME, WARMING_NAME):
                continue
        busy.append(kid)
    return busy


def children_cpu(pid: int) -> float:
    """CPU seconds of the children ``pid`` has reaped (its ``cutime + cstime``), from /proc.

    For a party server, what its forked provers spent, once V has let them go.
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _arguments(args: list[str]) -> tuple[str, int] | None:
    """``SOCKET`` and ``--spares N`` (default :data:`SPARES`), or ``None`` if malformed."""
    spares, rest = SPARES, list(args)
    if "--spares" in rest:
        i = rest.index("--spares")
        value = rest[i + 1] if i + 1 < len(rest) else ""
        if not value.isdigit() or not 0 <= int(value) <= 64:
            return None
        spares = int(value)
        del rest[i : i + 2]
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return rest[0], spares


def main(argv: list[str] | None = None) -> int:
    """``python -m proofgames.isolation.server SOCKET [--spares N]``: warm up, then serve."""
    parsed = _arguments(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        print(USAGE, file=sys.stderr)
        return 2
    path, spares = parsed
    if len(os.fsencode(os.path.abspath(path))) >= 104 and len(os.fsencode(path)) >= 104:
        print(f"error: the socket path {path!r} is too long for a Unix socket", file=sys.stderr)
        return 2
    if any(os.environ.get(k) != v for k, v in SINGLE_THREADED.items()):
        env = os.environ | SINGLE_THREADED  # NumPy may be loaded already: start again
        argv_again = [sys.executable, "-m", MODULE, path, "--spares", str(spares)]
        os.execve(sys.executable, argv_again, env)
    warm_up()
    try:
        server = PartyServer(path, spares)
    except OSError as exc:
        print(f"error: cannot listen on {path!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    server.refill()  # the first spares warm up while the caller reads the line below
    print(f"party server ready on {path} (pid {os.getpid()})", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
