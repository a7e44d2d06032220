"""A strategy that raises, times out or sends a malformed message loses, with a reason."""

from __future__ import annotations

import time

import numpy as np
import pytest

from proofgames import Configuration, ProtocolError
from proofgames._registry import Player, StrategySpec
from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.protocols import play_bisection, play_cross_examination
from proofgames.strategies import make_strategy


def custom(player: Player, role: str, protocol: str) -> Player:
    player.spec = StrategySpec(protocol, role, type(player).__name__)
    return player


class Raises(Player):
    def final(self, ctx):
        raise RuntimeError("boom")

    def commit(self, ctx):
        raise RuntimeError("boom")

    def dispute(self, ctx, state, mid):
        raise RuntimeError("boom")

    def challenge(self, ctx, read):
        raise RuntimeError("boom")


class WrongSize(Player):
    def final(self, ctx):
        return Configuration(ctx.machine.program.halt, 0, bytes(ctx.machine.size + 1))


class BadDispute(Player):
    def dispute(self, ctx, state, mid):
        return "both"


class Slow(Player):
    def dispute(self, ctx, state, mid):
        time.sleep(0.6)
        return "first"


class Inconsistent(Player):
    """Answers differently to every copy: a cross-examination violation."""

    def __init__(self):
        self.calls = 0

    def commit(self, ctx):
        pass

    def entries(self, ctx, positions):
        self.calls += 1
        return np.full(len(positions), self.calls % 2, dtype=np.int64)


class OutOfAlphabet(Player):
    def commit(self, ctx):
        pass

    def entries(self, ctx, positions):
        return np.full(len(positions), 10**6, dtype=np.int64)


class ReadsThenChallenges(Player):
    def challenge(self, ctx, read):
        read([3])
        return 3


class BadChallenge(Player):
    def challenge(self, ctx, read):
        return "everywhere"


@pytest.fixture
def bb2():
    return TuringMachine.sized("1RB1LB_1LA1RZ", 6)


def bis(tm, a, b, **kw):
    return play_bisection(tm, 6, 1, a, b, seed=0, **kw)


def test_a_strategy_that_raises_loses_with_the_exception_recorded(bb2):
    out = bis(bb2, custom(Raises(), "A", "bisection"), make_strategy("bisection", "B", "honest"))
    assert out.winner == "B"
    assert "RuntimeError: boom" in out.reason
    out = bis(bb2, make_strategy("bisection", "A", "honest"), custom(Raises(), "B", "bisection"))
    assert out.winner == "A"
    assert "B loses" in out.reason


def test_a_configuration_of_the_wrong_size_forfeits(bb2):
    out = bis(bb2, custom(WrongSize(), "A", "bisection"), make_strategy("bisection", "B", "honest"))
    assert out.winner == "B"
    assert "malformed final configuration" in out.reason and "S = 4" in out.reason


def test_a_malformed_dispute_forfeits(bb2):
    out = bis(
        bb2, make_strategy("bisection", "A", "honest"), custom(BadDispute(), "B", "bisection")
    )
    assert out.winner == "A"
    assert "'both'" in out.reason


def test_a_strategy_over_its_time_limit_loses(bb2):
    out = bis(
        bb2,
        make_strategy("bisection", "A", "honest"),
        custom(Slow(), "B", "bisection"),
        timeout=0.3,
    )
    assert out.winner == "A"
    assert "timed out" in out.reason


def cx(tm, a, b):
    return play_cross_examination(TableauTranscript(tm, 6), 1, a, b, seed=0)


def test_inconsistent_answers_under_cross_examination_lose(bb2):
    a = custom(Inconsistent(), "A", "cross-examination")
    out = cx(bb2, a, custom(ReadsThenChallenges(), "B", "cross-examination"))
    assert out.winner == "B"
    assert "independent copies" in out.reason


def test_entries_outside_the_alphabet_lose(bb2):
    a = custom(OutOfAlphabet(), "A", "cross-examination")
    out = cx(bb2, a, make_strategy("cross-examination", "B", "random"))
    assert out.winner == "B"
    assert "outside the alphabet" in out.reason


def test_a_malformed_challenge_loses(bb2):
    b = custom(BadChallenge(), "B", "cross-examination")
    out = cx(bb2, make_strategy("cross-examination", "A", "honest"), b)
    assert out.winner == "A"
    assert "challenge must be an integer, got a str" in out.reason


def test_a_crashing_commit_loses(bb2):
    out = cx(
        bb2,
        custom(Raises(), "A", "cross-examination"),
        make_strategy("cross-examination", "B", "honest"),
    )
    assert out.winner == "B" and "boom" in out.reason


def test_invalid_protocol_arguments_are_errors(bb2):
    a, b = make_strategy("bisection", "A", "honest"), make_strategy("bisection", "B", "honest")
    with pytest.raises(ProtocolError, match="steps must be a positive"):
        play_bisection(bb2, 0, 1, a, b)
    with pytest.raises(ProtocolError, match="claim must be 0 or 1"):
        play_bisection(bb2, 6, 2, a, b)
