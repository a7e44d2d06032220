"""The party server's pool of spares: what it drops, and how it keeps from a loop of forks."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time

import pytest

from proofgames.isolation import _spares
from proofgames.isolation._forked import READY
from proofgames.isolation._spares import Spares, runnable

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the party server is Linux only")


def _fake_spare(pool: Spares) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """A sleeping process entered in the pool as a spare; the spare's end of its socket."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    pool._spares[ours.fileno()] = _spares._Spare(proc.pid, ours)
    pool._sel.register(ours, selectors.EVENT_READ, _spares.EVENT)
    return proc, theirs


def _gone(proc: subprocess.Popen[bytes]) -> bool:
    """Killed and reaped (by the pool: no longer a process, not even a zombie)."""
    try:
        os.kill(proc.pid, 0)
    except ProcessLookupError:
        proc.poll()  # (its status is the pool's now: Popen records 0 and lets it be)
        return True
    return False


def _said(pool: Spares) -> None:
    for key, _ in pool._sel.select(timeout=5):
        pool.said(key.fileobj)


def test_spares_that_die_unready_make_the_pool_wait_longer_each_time() -> None:
    pool = Spares(2, selectors.DefaultSelector())
    waits = []
    for _ in range(3):
        proc, theirs = _fake_spare(pool)
        theirs.close()  # it died before it was warm
        _said(pool)
        assert _gone(proc)  # killed and reaped by the pool
        waits.append(pool._not_before - time.monotonic())
        assert not pool._spares
        pool.refill()  # backing off: nothing is forked (a fork here would show up)
        assert not pool._spares
    assert 0 < waits[0] < waits[1] < waits[2] <= _spares.MAX_BACKOFF

    proc, theirs = _fake_spare(pool)
    theirs.sendall(READY)  # a spare that gets ready ends the backing off
    _said(pool)
    assert pool._backoff == 0.0 and next(iter(pool._spares.values())).ready
    theirs.sendall(b"anything else")  # and one that then says more is dropped at once
    _said(pool)
    assert not pool._spares and _gone(proc)
    assert pool._backoff == 0.0  # (it had been ready: no backing off for that)
    theirs.close()


def test_a_request_goes_only_to_a_warm_runnable_spare() -> None:
    pool = Spares(2, selectors.DefaultSelector())
    proc, theirs = _fake_spare(pool)
    assert pool.hand_over({"spec": "honest"}, []) is None  # not warm yet
    theirs.sendall(READY)
    _said(pool)
    os.kill(proc.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 5
    while runnable(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.hand_over({"spec": "honest"}, []) is None  # stopped: dropped instead
    assert not pool._spares and _gone(proc)
    theirs.close()


def test_runnable_reads_the_process_state() -> None:
    assert runnable(os.getpid())
    proc = subprocess.Popen(["sleep", "60"])
    try:
        assert runnable(proc.pid)
        proc.kill()
        deadline = time.monotonic() + 5
        while runnable(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not runnable(proc.pid)  # a zombie until reaped
    finally:
        proc.wait()
    assert not runnable(proc.pid)  # gone
