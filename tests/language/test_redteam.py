"""Hostile provers in transcript debates lose, with a recorded reason (issue 35, holes 1-3, 7).

Each attack was measured to succeed on the code before this file: a lying A that raises
``Forfeit("B", ...)`` won; a 25,000-character step stopped the run instead of losing it;
a prover that blocked (``time.sleep``) was never timed out; a 10 MB exception message
went whole into the reason; negative and NaN money were booked.
"""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from proofgames.errors import DebateStopped
from proofgames.judges import CalculatorJudge
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import bisection, cross_examination
from proofgames.language.provers import ModelFailed, ProverReply, ReferenceB, ScriptedA
from proofgames.language.transcript import ArgumentStep, StepTranscript
from proofgames.protocols import Forfeit
from proofgames.protocols._calls import MAX_SHOWN

PROTOCOLS = {"cross-examination": cross_examination, "bisection": bisection}
ITEM = generate_chain(20, seed=3, error_at=7)


def _play(protocol: str, a: object, b: object | None = None, timeout: float = 10.0):
    b = b if b is not None else ReferenceB(ITEM.reference)
    debate = PROTOCOLS[protocol](
        ITEM.task_text, a, b, JudgeLedger(CalculatorJudge()), timeout=timeout
    )
    return asyncio.run(debate)


class _Raising(ScriptedA):
    """The dishonest A, raising ``error`` from its method ``where``."""

    def __init__(self, error: BaseException, where: str) -> None:
        super().__init__(ITEM.dishonest)
        self.error, self.where = error, where

    async def transcript(self, task: str) -> object:
        if self.where == "transcript":
            raise self.error
        return await super().transcript(task)

    async def step(self, task: str, t: int) -> object:
        if self.where == "step":
            raise self.error
        return await super().step(task, t)


ERRORS = {
    "Forfeit naming B": Forfeit("B", "B cheated, says A"),
    "SystemExit": SystemExit(0),
    "KeyboardInterrupt of its own": KeyboardInterrupt(),
    "ModelFailed of a non-model prover": ModelFailed("my model failed, stop the run"),
    "a 10 MB message": ValueError("x" * 10_000_000),
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("where", ["transcript", "step"])
@pytest.mark.parametrize("error", ERRORS.values(), ids=ERRORS.keys())
def test_whatever_a_lying_a_raises_it_loses_with_a_short_reason(protocol, where, error):
    out = _play(protocol, _Raising(error, where))
    assert (out.winner, out.forfeit, out.verdict) == ("B", "A", 0)
    assert out.reason.startswith("A loses: ") and " raised " in out.reason
    assert len(out.reason) < MAX_SHOWN + 100


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_oversized_step_is_the_senders_forfeit_not_a_stop(protocol):
    steps = list(ITEM.dishonest.steps)
    steps[3] = ArgumentStep("y" * 25_000, steps[3].uses, steps[3].task_parts, steps[3].result)
    big = StepTranscript(ITEM.dishonest.task, tuple(steps[:3]), ITEM.dishonest.answer)

    class Oversized(ScriptedA):
        async def transcript(self, task: str) -> object:  # plain data past the checks
            data = ITEM.dishonest.to_dict()
            data["steps"][3]["text"] = "y" * 25_000
            return data

        async def step(self, task: str, t: int) -> object:
            return {**ITEM.dishonest.to_dict()["steps"][t], "text": "z" * 25_000}

    assert len(big) == 3  # a short transcript stays valid: the cap is per field
    out = _play(protocol, Oversized(ITEM.dishonest))
    assert (out.winner, out.forfeit) == ("B", "A"), out.reason
    assert "over the limit of 20,000" in out.reason


class _Blocking(ScriptedA):
    """A whose commitment blocks the thread (not an await): ``time.sleep``."""

    async def transcript(self, task: str) -> object:
        time.sleep(3)
        return await super().transcript(task)


class _BlockingB(ReferenceB):
    def dispute(self, task: str, transcript: StepTranscript) -> object:  # not even async
        time.sleep(3)
        return 0

    def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        time.sleep(3)
        return "first"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_blocking_prover_is_pre_empted_by_the_timeout(protocol):
    start = time.perf_counter()
    out = _play(protocol, _Blocking(ITEM.dishonest), timeout=0.3)
    assert (out.winner, out.forfeit) == ("B", "A") and "timed out" in out.reason
    out = _play(protocol, ScriptedA(ITEM.reference), _BlockingB(ITEM.reference), timeout=0.3)
    assert (out.winner, out.forfeit) == ("A", "B") and "timed out" in out.reason
    assert time.perf_counter() - start < 5.5  # not the 6 s or more of two sleeps of 3 s


class _Paying(ScriptedA):
    def __init__(self, **reply: object) -> None:
        super().__init__(ITEM.reference)
        self.reply = reply

    async def transcript(self, task: str) -> object:
        return ProverReply(ITEM.reference, **self.reply)


@pytest.mark.parametrize(
    "reply",
    [
        {"cost_usd": -1e6},
        {"cost_usd": math.nan},
        {"cost_usd": math.inf},
        {"cost_usd": "0.01"},
        {"cost_usd": 1e300},
        {"input_tokens": -1},
        {"input_tokens": True},
        {"output_tokens": 10**30},
        {"output_tokens": 1.5},
    ],
    ids=str,
)
def test_money_and_tokens_a_prover_reports_are_validated(reply):
    out = _play("cross-examination", _Paying(**reply))
    assert (out.winner, out.forfeit) == ("B", "A") and "reported a malformed" in out.reason
    assert out.costs.cost_usd is None and out.costs.prover_input_tokens == 0  # none booked
    fine = _play("cross-examination", _Paying(cost_usd=0.25, input_tokens=7, output_tokens=9))
    assert fine.winner == "A" and math.isclose(fine.costs.cost_usd, 0.25)
    assert fine.costs.prover_input_tokens == 7 and fine.costs.prover_output_tokens == 9


class _Slippery:
    """A value whose ``__repr__`` blocks: V must not call it to write a reason."""

    def __repr__(self) -> str:
        time.sleep(30)
        return "never"


class _SlipperyB(ReferenceB):
    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        return _Slippery()


def test_a_reason_never_runs_a_partys_code():
    start = time.perf_counter()
    out = _play("cross-examination", ScriptedA(ITEM.reference), _SlipperyB(ITEM.reference))
    assert out.forfeit == "B" and "a value of type _Slippery" in out.reason
    assert time.perf_counter() - start < 5


def test_b_cannot_change_the_transcript_v_judges():
    """B gets V's record of A's commitment; changing it must not make an honest A lose."""

    class Vandal(ReferenceB):
        async def dispute(self, task: str, transcript: StepTranscript) -> object:
            steps = list(transcript.steps)
            steps[5] = ArgumentStep("a different step", (), (), "12345")
            # rewrite V's copy of the commitment, so that A's copies seem to disagree
            object.__setattr__(transcript, "steps", tuple(steps))
            return 5

    out = _play("cross-examination", ScriptedA(ITEM.reference), Vandal(ITEM.reference))
    assert (out.winner, out.forfeit, out.details["disputed_step"]) == ("A", None, 5), out.reason


class _HostileJudge:
    """A judge that misbehaves in the way ``how`` names."""

    name = "hostile"

    def __init__(self, how: str) -> None:
        self.how = how

    async def judge(self, question: object) -> object:
        if self.how == "hangs":
            await asyncio.sleep(60)
        if self.how == "raises SystemExit":
            raise SystemExit(3)
        if self.how == "raises a 10 MB message":
            raise RuntimeError("y" * 10_000_000)
        if self.how == "answers garbage":
            return {"p_yes": 1.0}
        raise KeyboardInterrupt  # of its own: no signal behind it


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "how",
    ["hangs", "raises SystemExit", "raises a 10 MB message", "answers garbage", "raises Ctrl-C"],
)
def test_a_hostile_judge_stops_its_debate_with_a_short_reason_and_decides_nothing(protocol, how):
    debate = PROTOCOLS[protocol](
        ITEM.task_text, ScriptedA(ITEM.dishonest), ReferenceB(ITEM.reference),
        JudgeLedger(_HostileJudge(how), timeout=0.3),
    )  # fmt: skip
    start = time.perf_counter()
    with pytest.raises(DebateStopped) as stopped:
        asyncio.run(debate)
    assert stopped.value.kind == "judge"
    reason = str(stopped.value)
    assert "judge 'hostile'" in reason and len(reason) < MAX_SHOWN + 200
    assert time.perf_counter() - start < 5


HIDDEN = {
    "right-to-left override": "\u202e",
    "zero-width space": "\u200b",
    "zero-width joiner": "\u200d",
    "byte order mark": "\ufeff",
    "escape": "\x1b",
    "private use": "\ue000",
    "line separator": "\u2028",
    "fullwidth digit": "\uff13",
    "superscript two": "\u00b2",
    "Arabic-Indic digit": "\u0663",
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("where", ["transcript", "step"])
@pytest.mark.parametrize("char", HIDDEN.values(), ids=HIDDEN.keys())
def test_invisible_characters_are_the_senders_forfeit(protocol, where, char):
    """A step a person would read differently from what V checks (e.g. ``7 * 5 = 3<RLO>53``)."""

    class Hiding(ScriptedA):
        async def transcript(self, task: str) -> object:
            data = ITEM.dishonest.to_dict()
            if where == "transcript":
                data["steps"][7]["text"] += char
            return data

        async def step(self, task: str, t: int) -> object:
            restated = ITEM.dishonest.to_dict()["steps"][t]
            return {**restated, "text": restated["text"] + char}

    out = _play(protocol, Hiding(ITEM.dishonest))
    assert (out.winner, out.forfeit, out.verdict) == ("B", "A", 0), out.reason
    assert f"U+{ord(char):04X}" in out.reason
    assert "invisible, control or look-alike character" in out.reason


def test_visible_unicode_and_layout_whitespace_are_no_forfeit():
    data = ITEM.reference.to_dict()
    data["steps"][0]["text"] += "\tcafé — 5 € (≈ 5\u00a0USD)\n"
    out = _play("cross-examination", ScriptedA(StepTranscript.from_dict(data)))
    assert out.forfeit is None and out.winner == "A", out.reason
