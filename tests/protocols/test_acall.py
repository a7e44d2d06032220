"""``Party.acall``: the driver's one seam for parties whose moves are coroutines or block.

The same forfeit rule as ``Party.call`` (the loser is read from V's record), with the
timeout pre-empting blocking code, reported costs checked, and only a trusted type's
declared errors passing through.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from proofgames.protocols import Debate, Forfeit
from proofgames.protocols._calls import MAX_SHOWN
from proofgames.protocols._common import ProverReply


class Trusted:
    """Stands for the library's own model prover."""

    async def move(self) -> object:
        raise LookupError("the model's API is down")


class Player:
    """A party whose move does what ``how`` says."""

    def __init__(self, how: str) -> None:
        self.how = how

    def move(self) -> object:
        if self.how == "blocks":
            time.sleep(30)
        if self.how == "raises Forfeit naming B":
            raise Forfeit("B", "B cheated, says A")
        if self.how == "raises SystemExit":
            raise SystemExit(0)
        if self.how == "raises 10 MB":
            raise ValueError("x" * 10_000_000)
        if self.how == "pays NaN":
            return ProverReply(1, cost_usd=float("nan"))
        if self.how == "pays -1 tokens":
            return ProverReply(1, input_tokens=-1)
        if self.how == "claims 1.5 calls":
            return ProverReply(1, calls=1.5)  # type: ignore[arg-type]
        return ProverReply(7, input_tokens=3, output_tokens=2, cost_usd=0.25, calls=2)


class AsyncPlayer(Player):
    async def move(self) -> object:  # type: ignore[override]
        if self.how == "blocks":
            await asyncio.sleep(30)
        return super().move()


def _debate(a: object, trusted: tuple[type, ...] = ()) -> Debate:
    return Debate("test", a, None, None, 0, 0.5, trusted=trusted, stop_on=(LookupError,))


def _move(d: Debate) -> object:
    async def go() -> object:
        try:
            return await d.parties["A"].acall("move", "move", parse=int)
        except Forfeit:
            return d.blamed

    return asyncio.run(go())


@pytest.mark.parametrize("kind", [Player, AsyncPlayer])
@pytest.mark.parametrize(
    "how",
    ["blocks", "raises Forfeit naming B", "raises SystemExit", "raises 10 MB", "pays NaN",
     "pays -1 tokens", "claims 1.5 calls"],
)  # fmt: skip
def test_a_misbehaving_party_loses_with_a_short_reason(kind, how):
    d = _debate(kind(how))
    blamed = _move(d)
    assert isinstance(blamed, tuple) and blamed[0] == "A", blamed
    assert len(blamed[1]) < MAX_SHOWN + 100
    if how == "blocks":  # pre-empted at the 0.5 s limit, not waited for (30 s)
        assert blamed[1] == "move timed out after 0.5 s", blamed


def test_a_reply_is_unwrapped_and_its_costs_tallied():
    d = _debate(Player("pays"))
    assert _move(d) == 7
    assert (d.tally.prover_input_tokens, d.tally.prover_output_tokens) == (3, 2)
    assert d.tally.cost_usd == 0.25 and d.blamed is None
    assert d.tally.prover_calls == {"A": 2, "B": 0}  # the model calls the move reported


def test_only_a_trusted_type_stops_the_run_with_its_declared_error():
    with pytest.raises(LookupError):
        _move(_debate(Trusted(), trusted=(Trusted,)))

    class Imitator(Trusted):  # a subclass is not the trusted type
        pass

    d = _debate(Imitator(), trusted=(Trusted,))
    assert _move(d) == ("A", "move raised LookupError: the model's API is down")


def test_a_malformed_message_is_the_senders_forfeit():
    class Sends:
        async def move(self) -> object:
            return "seven"

    d = _debate(Sends())
    party, reason = _move(d)  # type: ignore[misc]
    assert party == "A" and reason.startswith("sent a malformed move")
