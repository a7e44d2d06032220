"""In-process set-ups: each prover's ``prepare(ctx)`` runs in a thread, beside the other's.

The driver (``Debate.context`` and ``Party``) starts a party's set-up in a thread when it
makes the party's context (on runs from ``THREADED_STEPS`` steps; the tests lower it),
waits for it before the party's next call (inside the call's time and timeout) and before
the verdict.  What a set-up raises is dropped; one that overruns the timeout is its
party's forfeit; the user's progress callback is called by one party at a time; and
outcomes do not depend on the threads' timing.  On shorter runs there is no set-up.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import asdict

import pytest

from proofgames import TuringMachine, play, play_bisection
from proofgames.protocols import Debate, _common
from proofgames.strategies import make_strategy

BB4 = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", steps=107)


def honest(role: str, prepare=None):
    """The registered honest bisection prover, its ``prepare`` wrapped by ``prepare``."""
    player = make_strategy("bisection", role, "honest")
    if prepare is not None:
        own = player.prepare
        player.prepare = lambda ctx: prepare(own, ctx)
    return player


@pytest.fixture
def threaded(monkeypatch) -> None:
    monkeypatch.setattr(_common, "THREADED_STEPS", 0)


def timeless(out) -> dict:
    d = asdict(out)
    d["costs"].pop("seconds")
    return d


def test_both_set_ups_run_at_once(threaded):
    meet = threading.Barrier(2, timeout=10)
    met: dict[str, bool] = {}

    def waiting(role):
        def prepare(own, ctx):
            try:
                meet.wait()  # each waits for the other: only concurrent set-ups pass
                met[role] = True
            except threading.BrokenBarrierError:
                met[role] = False
            own(ctx)

        return prepare

    out = play_bisection(BB4, 107, 1, honest("A", waiting("A")), honest("B", waiting("B")))
    assert met == {"A": True, "B": True}
    assert out.winner == "A" and out.costs.prover_steps["B"] >= 107  # B ran M at set-up


def test_a_short_run_has_no_set_up():
    ran = []

    def noting(own, ctx):
        ran.append(ctx)
        own(ctx)

    assert _common.THREADED_STEPS > 107
    out = play_bisection(BB4, 107, 1, honest("A", noting), honest("B", noting))
    assert ran == [] and out.winner == "A"  # the calls did the work


@pytest.mark.parametrize(
    ("protocol", "a", "b", "claim"),
    [("bisection", "honest", "honest", 1), ("bisection", "random-step", "honest", 0),
     ("cross-examination", "honest", "honest", 1), ("cross-examination", "flip-step", "honest", 0)],
)  # fmt: skip
def test_outcomes_do_not_depend_on_the_threads(threaded, protocol, a, b, claim):
    outs = [timeless(play(protocol, "bb4", claim=claim, a=a, b=b, seed=5)) for _ in range(6)]
    assert all(o == outs[0] for o in outs)


def test_a_set_up_changes_no_move(monkeypatch):
    default = _common.THREADED_STEPS

    def play_with(threshold):
        monkeypatch.setattr(_common, "THREADED_STEPS", threshold)
        ran = []
        b = honest("B", lambda own, ctx: (ran.append(ctx), own(ctx)))
        out = play_bisection(BB4, 107, 0, make_strategy("bisection", "A", "flip-step"), b)
        return out, len(ran)

    (with_set_up, ran), (without, not_ran) = play_with(0), play_with(default)
    assert (ran, not_ran) == (1, 0)
    assert with_set_up.messages == without.messages and with_set_up.reason == without.reason


def test_a_set_up_that_raises_is_dropped(threaded):
    def raises(own, ctx):
        raise RuntimeError("set-up failed")

    out = play_bisection(BB4, 107, 1, honest("A", raises), honest("B", raises))
    assert out.winner == "A" and out.forfeit is None  # the calls did the work instead
    assert out.costs.prover_steps["A"] >= 107


def test_a_set_up_past_the_timeout_is_that_partys_forfeit(threaded):
    def slow(own, ctx):
        time.sleep(1.0)
        own(ctx)

    t0 = time.perf_counter()
    out = play_bisection(BB4, 107, 1, honest("A"), honest("B", slow), timeout=0.3)
    assert out.winner == "A" and out.forfeit == "B"
    assert "dispute timed out (its set-up ran past 0.3s)" in out.reason
    assert time.perf_counter() - t0 < 0.9  # V stopped waiting at the timeout


def test_v_waits_for_a_set_up_before_its_verdict(threaded):
    class RaisesAtFinal:
        def final(self, ctx):
            raise RuntimeError("no")

    class SlowSetUp:
        work = 0

        def prepare(self, ctx):
            time.sleep(0.2)
            self.work = 7

    out = play_bisection(BB4, 107, 1, RaisesAtFinal(), SlowSetUp())
    assert out.winner == "B" and out.costs.prover_steps["B"] == 7


def test_a_hostile_prepare_attribute_is_no_set_up():
    class Hostile:
        @property
        def prepare(self):
            raise RuntimeError("touch me not")

        def dispute(self, ctx, state, midpoint):
            return "second"

    out = play_bisection(BB4, 107, 1, honest("A"), Hostile())
    assert out.winner == "A" and out.forfeit is None


def test_progress_is_called_by_one_party_at_a_time(threaded):
    state = {"busy": False, "overlaps": 0, "steps": 0}

    def progress(n):
        if state["busy"]:
            state["overlaps"] += 1
        state["busy"] = True
        time.sleep(0.0005)  # gives the GIL away mid-call
        state["steps"] += n
        state["busy"] = False

    class Reporting:
        work = 0

        def prepare(self, ctx):
            for _ in range(40):
                ctx.progress(1)

        def final(self, ctx):
            raise RuntimeError("done")

        def dispute(self, ctx, state, midpoint):
            return "second"

    play_bisection(BB4, 107, 1, Reporting(), Reporting(), progress=progress)
    assert state["overlaps"] == 0 and state["steps"] == 80


def test_acall_waits_for_the_set_up_within_its_timeout(threaded):
    class Party:
        def __init__(self, pause):
            self.pause, self.ready = pause, False

        def prepare(self, ctx):
            time.sleep(self.pause)
            self.ready = True

        def move(self):
            return self.ready

    async def go(pause, timeout):
        d = Debate("bisection", Party(pause), None, None, 0, timeout)
        d.context("A", BB4, 107, 1, None)
        try:
            return await d.parties["A"].acall("move", "move")
        except Exception:
            return d.blamed

    assert asyncio.run(go(0.05, 5.0)) is True
    assert asyncio.run(go(1.0, 0.2)) == ("A", "move timed out (its set-up ran past 0.2 s)")


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_from_the_threshold_on_both_honest_provers_run_m_at_set_up(isolation):
    steps = _common.THREADED_STEPS
    out = play(
        "bisection", "bb5", claim=0, a="honest", b="honest", isolation=isolation, steps=steps
    )
    assert out.winner == "A" and min(out.costs.prover_steps.values()) >= steps


def test_one_object_playing_both_roles_gets_no_set_up_beside_its_calls(threaded):
    class Both:
        """Honest A and honest B in one object: a set-up in a thread would race its calls."""

        def __init__(self):
            self.a = make_strategy("bisection", "A", "honest")
            self.b = make_strategy("bisection", "B", "honest")
            self.prepared = 0

        def prepare(self, ctx):
            self.prepared += 1

        def final(self, ctx):
            return self.a.final(ctx)

        def midpoint(self, ctx, state):
            return self.a.midpoint(ctx, state)

        def dispute(self, ctx, state, midpoint):
            return self.b.dispute(ctx, state, midpoint)

    both = Both()
    out = play_bisection(BB4, 107, 1, both, both)
    assert out.winner == "A" and both.prepared == 0
    other = Both()
    play_bisection(BB4, 107, 1, other, Both())
    assert other.prepared == 1  # two objects: each sets up
