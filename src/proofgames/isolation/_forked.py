"""What runs in a process the party server forks: a party on V's pipes, or a spare first.

A child the server forks for a request becomes a started party process at once
(:func:`become`): a new session, V's three pipes as its stdin, stdout and stderr, every
other descriptor closed, V's resource limits, folder and environment, then the party
runner.  A *spare* (:func:`spare`) is forked before any request: it starts its own
session, sets up a party for a tiny debate of its own (so that the copy-on-write faults
of the party's code path are taken now, not during a debate), says so to the server with
one byte on its socket, and waits there.  The server hands it exactly one request (the
checked spec, environment, folder and limits, with V's three pipes), waits until the
server closes the socket (once V has the server's answer: woken, the spare would otherwise
take the server's core first), and then becomes that party as above; it is never handed a
second.  A spare whose socket closes before a request came exits.

Every process this module runs ends with :func:`os._exit` and never returns to the
server's code.

Example:
    >>> name_process("pg-doc") in (True, False)   # Linux: the name ps shows
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import resource
import signal
import socket
import sys
import traceback
from typing import NoReturn, cast

from .. import wire

WARMING_NAME = "pg-warming"  #: what ``ps`` (``/proc/PID/comm``) shows for a spare warming up
SPARE_NAME = "pg-spare"  #: and for a warm, idle spare
PARTY_NAME = "pg-party"  #: and for a forked child playing a party
READY = b"r"  #: the byte a spare sends once it is warm
_PR_SET_NAME = 15


def name_process(name: str) -> bool:
    """Set this process's name as ``ps`` shows it (Linux ``prctl``); ``False`` elsewhere."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0) == 0)
    return False


def _reset_signals() -> None:
    """The server's handlers and wake-up pipe are not the child's."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _set_environment(env: dict[str, str]) -> None:
    """Make ``os.environ`` exactly ``env``, touching only the names that differ."""
    for name in [k for k in os.environ if k not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _set_limits(limits: dict[str, list[int]]) -> None:
    for name, (soft, hard) in limits.items():
        which = getattr(resource, name)
        if resource.getrlimit(which) != (soft, hard):
            resource.setrlimit(which, (soft, hard))


def become(
    spec: str,
    fds: list[int],
    env: dict[str, str],
    cwd: str,
    limits: dict[str, list[int]],
    *,
    new_session: bool = True,
) -> NoReturn:
    """Become a started party process on V's pipes ``fds``, play ``spec``, and exit.

    Args:
        spec: the strategy spec.
        fds: V's pipes: the child's stdin, stdout and stderr, in that order.
        env: V's environment for the party.
        cwd: V's working directory.
        limits: V's resource limits, by name (``[soft, hard]``).
        new_session: start a session (a spare has started its own already).
    """
    code = 1
    try:
        if new_session:
            os.setsid()
        name_process(PARTY_NAME)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (for the process)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        if new_session:
            _reset_signals()
        _set_limits(limits)
        os.chdir(cwd)
        _set_environment(env)
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
        sys.path[:0] = extra  # a plugin's folder, as a started process would have it
        sys.argv = ["proofgames.isolation.party", spec]
        from .party import main as party_main

        code = party_main([spec])
    except BaseException:  # the child's own failure: V sees its output close
        with contextlib.suppress(Exception):
            traceback.print_exc(file=sys.stderr)
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _warm() -> None:
    """Build a party for a tiny debate here, so that its code path is this process's own.

    After a fork every page is shared with the server until written, and Python writes
    to every object it touches (reference counts): the first party code to run in a
    child takes a page fault per page.  Taken in a spare (about 3 ms of CPU: a bisection
    A on bb2 set up, run and answering once), these cost nothing on a debate's clock:
    from V's request to the child's ready message takes 1.5 ms instead of 3.5-4 ms.
    """
    from ..instances import resolve_instance
    from .party import Channel, Session

    inst = resolve_instance("bisection", "bb2")
    hello = {"type": "hello", "protocol": "bisection", "role": "A", "claim": 1, "seed": 0,
             "instance": inst.description, "timeout": 1.0, "sampling": "binomial"}  # fmt: skip
    channel = Channel(io.BytesIO(), io.BytesIO())  # never used: no call of this one reads
    session = Session("honest", wire.decode(wire.encode(hello)), channel)
    session.prepare()
    value = session.call("final", [])
    wire.decode(wire.encode({"type": "result", "value": value, **session.costs()}, compress=True))


Request = tuple[str, list[int], dict[str, str], str, dict[str, list[int]]]


def _request(sock: socket.socket) -> Request | None:
    """The server's one request (spec, V's three pipes, environment, folder, limits).

    ``None`` when the socket closed first.  The server checked the request before
    sending it.
    """
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
    buf = bytearray(data)
    while data and b"\n" not in buf:
        data = sock.recv(1 << 16)
        buf += data
    msg = wire.decode(bytes(buf)) if b"\n" in buf else None
    if type(msg) is not dict or len(fds) != 3:
        return None
    env = cast(dict[str, str], msg["env"])
    return str(msg["spec"]), fds, env, str(msg["cwd"]), cast(dict[str, list[int]], msg["limits"])


def spare(sock: socket.socket) -> NoReturn:
    """A spare: warm up, say so on ``sock``, wait for one request, become that party.

    Exits (status 0) when ``sock`` closes before a request came, and with status 1 when
    it cannot get ready or the request is not one the server sends.
    """
    code = 1
    try:
        os.setsid()
        name_process(WARMING_NAME)
        _reset_signals()
        with contextlib.suppress(Exception):  # an optimisation only: it serves either way
            _warm()
        name_process(SPARE_NAME)  # from now on ps shows it as an idle spare
        sock.sendall(READY)
        got = _request(sock)
        while got is not None and sock.recv(64):
            pass  # the server closes the socket once V has its answer: then go on
        if got is None:
            code = 0
        else:
            spec, fds, env, cwd, limits = got
            become(spec, fds, env, cwd, limits, new_session=False)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc(file=sys.stderr)
    finally:
        os._exit(code)
