"""One conformance suite over every transcript-debate protocol, judge and prover (issue 35).

The checks the core protocols pass (``tests/protocols/test_conformance.py``), asked of the
language layer: honest A wins against every B, honest B wins against every lying A, each
with a recorded reason; the same seed gives the same outcome record; a forfeit names the
party that misbehaved and never stops the run. Protocols come from
``experiments.PROTOCOLS``: a protocol added there is tested here.
"""

from __future__ import annotations

import asyncio

import pytest

from proofgames.language.costs import JudgeLedger
from proofgames.language.experiments import PROTOCOLS, make_judge, play
from proofgames.language.generated import generate_chain
from proofgames.language.provers import (
    CheckerB,
    ContrarianB,
    InconsistentA,
    ReferenceB,
    ScriptedA,
)
from proofgames.language.transcript import StepTranscript
from proofgames.protocols import Forfeit

TWO_SIDED = ("cross-examination", "bisection")
EXACT_JUDGES = ("calculator", "calculator-grounded")
ITEM = generate_chain(30, seed=5, error_at=11)


class _RaisingB(ReferenceB):
    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        raise Forfeit("A", "B says A cheated")

    async def half(self, task: str, t: int, claimed: object) -> object:
        raise SystemExit(1)


class _GarbageB(ReferenceB):
    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        return "the third one"

    async def half(self, task: str, t: int, claimed: object) -> object:
        return 2


class _WrongAnswerA(ScriptedA):
    """Commits to the reference steps with another final answer."""

    async def transcript(self, task: str) -> object:
        data = ITEM.reference.to_dict()
        data["answer"] = str(int(float(data["answer"])) + 1)
        return data


def _bs() -> dict[str, object]:
    return {
        "reference": ReferenceB(ITEM.reference),
        "contrarian": ContrarianB(7),
        "checker": CheckerB(),
        "raising": _RaisingB(ITEM.reference),
        "garbage": _GarbageB(ITEM.reference),
    }


def _liars() -> dict[str, object]:
    return {
        "planted error": ScriptedA(ITEM.dishonest),
        "inconsistent copies": InconsistentA(ITEM.dishonest, changed=ITEM.error_at),
        "answer not its last step": _WrongAnswerA(ITEM.reference),
        "not a transcript": _NotATranscript(ITEM.reference),
    }


class _NotATranscript(ScriptedA):
    async def transcript(self, task: str) -> object:
        return ["a", "list"]


def _play(protocol: str, a: object, b: object, judge: str, seed: int = 0):
    ledger = JudgeLedger(make_judge(judge, seed))
    return asyncio.run(play(protocol, ITEM.task_text, a, b, ledger, seed))


@pytest.mark.parametrize("judge", EXACT_JUDGES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_honest_a_wins_against_every_b(protocol, judge):
    for name, b in _bs().items():
        out = _play(protocol, ScriptedA(ITEM.reference), b, judge)
        assert (out.verdict, out.winner) == (1, "A"), (name, out.reason)
        assert out.reason and out.forfeit in (None, "B")


@pytest.mark.parametrize("judge", EXACT_JUDGES)
@pytest.mark.parametrize("protocol", [*TWO_SIDED, "whole-transcript"])
def test_honest_b_wins_against_every_lying_a(protocol, judge):
    for name, a in _liars().items():
        out = _play(protocol, a, ReferenceB(ITEM.reference), judge)
        assert (out.verdict, out.winner) == (0, "B"), (name, out.reason)
        assert out.reason and out.forfeit in (None, "A")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_same_seed_gives_the_same_outcome_record(protocol):
    def record(seed: int) -> dict[str, object]:
        out = _play(protocol, ScriptedA(ITEM.dishonest), ContrarianB(seed), "scripted:0.2", seed)
        record = out.to_dict()
        record.pop("seconds")
        return record

    assert record(3) == record(3)
    if protocol != "whole-transcript":  # B's or V's draws show in the record
        assert any(record(3) != record(s) for s in range(4, 12))


@pytest.mark.parametrize("protocol", TWO_SIDED)
def test_a_forfeit_names_the_party_that_misbehaved(protocol):
    out = _play(protocol, ScriptedA(ITEM.reference), _RaisingB(ITEM.reference), "calculator")
    if out.forfeit is not None:  # bisection asks B nothing when A's transcript is honest...
        assert out.forfeit == "B" and out.reason.startswith("B loses")
    out = _play(protocol, ScriptedA(ITEM.dishonest), _RaisingB(ITEM.reference), "calculator")
    assert (out.forfeit, out.winner) == ("B", "A") and out.reason.startswith("B loses")
