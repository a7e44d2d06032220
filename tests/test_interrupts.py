"""The user's SIGINT or SIGTERM during a party's call stops the run; a party's own does not.

These run in process (the command line's exit codes: ``tests/cli/test_interrupts.py``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from proofgames import TuringMachine, interrupts, make_strategy, play_batch, play_bisection
from proofgames.interrupts import Interrupted, guard


@pytest.fixture(autouse=True)
def default_handlers() -> Iterator[None]:
    """The interpreter's default handlers, both signals unblocked (as in a terminal).

    A test runner may have set other handlers, and some environments start processes
    with SIGINT blocked: the signals a test sends must arrive while the test runs.
    """
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for s, handler in old.items():
        signal.signal(s, handler)


class Signalled:
    """A prover whose call the user interrupts (the signal comes from outside its code)."""

    def __init__(self, signum: int, swallow: bool = False) -> None:
        self.signum, self.swallow = signum, swallow

    def _interrupted(self) -> object:
        try:
            os.kill(os.getpid(), self.signum)
            time.sleep(5)
        except BaseException:
            if not self.swallow:
                raise
        return None

    def final(self, ctx: object) -> object:
        return self._interrupted()

    def announce(self, r: object, rng: object) -> object:
        return self._interrupted()

    def coin(self, r: object, rng: object) -> object:
        return self._interrupted()


BB2 = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)


def honest_b() -> object:
    return make_strategy("bisection", "B", "honest")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("swallow", [False, True], ids=["raises", "swallows"])
def test_the_users_signal_in_a_call_stops_the_debate_and_is_no_forfeit(signum, swallow):
    with pytest.raises(Interrupted) as caught:
        play_bisection(
            BB2, 6, 1, Signalled(signum, swallow), make_strategy("bisection", "B", "honest")
        )
    assert caught.value.signum == signum and caught.value.exit_code == 128 + signum


def test_the_users_signal_in_a_lockstep_round_stops_the_batch():
    with pytest.raises(Interrupted):
        play_batch("stochastic", "majority:n=3,p=0.8", 1, Signalled(signal.SIGINT), "honest",
                   debates=50, params="lean")  # fmt: skip


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), Interrupted(signal.SIGINT)])
def test_a_party_raising_an_interrupt_itself_still_loses(exc):
    class Raises:
        def final(self, ctx: object) -> object:
            raise exc

    out = play_bisection(BB2, 6, 1, Raises(), honest_b())
    assert (out.winner, out.forfeit) == ("B", "A")


def test_the_guard_restores_the_handlers_it_found():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with guard():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        with guard():  # nested: the outer one's handlers stand
            pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_signal_ignored_at_start_stays_ignored():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with guard():
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_a_thread_that_outlives_the_guard_leaves_it_whole():
    """A party's thread (pre-empted at its timeout) may enter a guard and end after it.

    It must not leave the guard counted: the next guard would install no handler, and
    the user's SIGTERM would kill the process (seen once in CI).
    """
    entered, release = threading.Event(), threading.Event()

    def party() -> None:
        with guard():
            entered.set()
            release.wait(10)

    with guard():
        thread = threading.Thread(target=party, daemon=True)
        thread.start()
        assert entered.wait(10)
    release.set()
    thread.join(10)
    with pytest.raises(Interrupted):
        play_bisection(BB2, 6, 1, Signalled(signal.SIGTERM), honest_b())


def test_guards_left_out_of_order_restore_the_handlers_once():
    """Coroutines on one loop leave their guards interleaved: the first in may leave first.

    Counting them as nested once drove the count to -1, so no later guard installed its
    handlers, and the user's SIGTERM killed the process (the CI run of stop 43 died so).
    """
    first, second = guard(), guard()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert signal.getsignal(signal.SIGINT) is interrupts.handler  # the second still holds
    second.__exit__(None, None, None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with pytest.raises(Interrupted):
        play_bisection(BB2, 6, 1, Signalled(signal.SIGTERM), honest_b())


def test_concurrent_calls_on_one_loop_leave_the_guard_whole():
    """Two parties' calls on one event loop, through the driver's async call."""

    async def both() -> None:
        async def hold(delay: float) -> None:
            with guard():
                await asyncio.sleep(delay)

        first = asyncio.create_task(hold(0.01))
        second = asyncio.create_task(hold(0.05))
        await asyncio.gather(first, second)

    asyncio.run(both())
    assert interrupts.received() is None
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(Interrupted):
        play_bisection(BB2, 6, 1, Signalled(signal.SIGINT), honest_b())
