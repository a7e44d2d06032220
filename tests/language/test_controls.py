"""Bias controls: a scripted model judge with a known yes-bias, and the controls that find it.

The mock judge believes a step follows with t = 0.9 (its annotations hold) or 0.1, and
leans towards "yes" by b = 0.2: to "does it follow?" it says yes with t + b(1 - t), to
"is it wrong?" with (1 - t) + b t. Flipped back, the second reads t(1 - b), so the plain
minus the flipped P[the step follows] is b exactly, on every question.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

from inspect_ai.model import get_model

from proofgames.errors import ProtocolError
from proofgames.judges import annotation_holds, make_judge
from proofgames.judges.controls import Flipped, Swapped, negated
from proofgames.judges.model import ModelJudge
from proofgames.language.compare import biases, with_controls
from proofgames.language.costs import JudgeLedger
from proofgames.language.experiments import generated_games
from proofgames.language.generated import generate_chain

from .test_inspect import fresh_cache, reply  # noqa: F401

BIAS = 0.2


def yes_leaning(messages: list[Any], *args: Any) -> Any:
    """The mock judge model of the module doc."""
    prompt = messages[-1].text
    step = prompt.split("Step to check:")[1].split("\n")[0]
    ok = all(annotation_holds(e, v) for e, v in re.findall(r"<<([^<>=]*)=([^<>]*)>>", step))
    t = 0.9 if ok else 0.1
    p_yes = (1 - t) + BIAS * t if "wrong" in prompt.split("\n")[-1] else t + BIAS * (1 - t)
    return reply("yes" if p_yes >= 0.5 else "no", p_yes)


def judge() -> ModelJudge:
    return ModelJudge(get_model("mockllm/model", custom_outputs=yes_leaning, memoize=False),
                      cache=False)  # fmt: skip


def test_the_flipped_judge_reads_the_negated_answer_back():
    item = generate_chain(10, seed=0, error_at=4)
    plain, flipped = judge(), Flipped(judge())
    for q, t in ((item.reference.question(4), 0.9), (item.dishonest.question(4), 0.1)):
        assert asyncio.run(plain.judge(q)).p_yes == pytest.approx(t + BIAS * (1 - t))
        j = asyncio.run(flipped.judge(q))
        assert j.p_yes == pytest.approx(t * (1 - BIAS))
        assert j.detail["polarity"] == "flipped"


def test_the_swapped_judge_sees_the_premises_reversed():
    seen = []

    class Recorder:
        name, kind = "recorder", "human"

        async def judge(self, question):
            seen.append(question.premises)
            return await judge().judge(question)

    q = generate_chain(10, seed=0, error_at=4).reference.question(5)
    asyncio.run(Swapped(Recorder()).judge(q))
    assert seen == [q.premises[::-1]]


def test_the_bias_of_a_yes_leaning_judge_is_measured_exactly(monkeypatch):
    def make(spec: str, seed: int) -> Any:
        inner = judge()
        return Flipped(inner) if spec.startswith("flip:") else inner

    monkeypatch.setattr("proofgames.language.experiments.make_judge", make)
    rows = []
    for spec in ("model:mock", "flip:model:mock"):
        played = asyncio.run(generated_games(10, 4, seed=1, protocol="cross-examination",
                                             judge=spec))  # fmt: skip
        rows += [{"protocol": "cross-examination", "judge": spec, **r} for r in played]
    (found,) = biases(rows)
    assert (found["judge"], found["control"]) == ("model:mock", "flip")
    assert found["bias"] == pytest.approx(BIAS)


def test_controls_are_refused_for_judges_that_do_not_read_the_question():
    with pytest.raises(ProtocolError, match="reads the question"):
        make_judge("flip:scripted:0.1", 0)
    with pytest.raises(ProtocolError, match="no negation"):
        negated("Is this poem good?")
    assert with_controls(["calculator", "model:x"]) == [
        "calculator", "model:x", "flip:model:x", "swap:model:x"
    ]  # fmt: skip
    assert isinstance(JudgeLedger(Flipped(judge())).judge, Flipped)


def test_the_reliability_curve_of_a_known_judge(monkeypatch):
    """The yes-leaning judge says 0.92 on every step that follows and 0.28 on every one that
    does not: its curve has those two bins, followed 1 and 0 (over-cautious at 0.92)."""
    from proofgames.language.compare import reliability

    monkeypatch.setattr("proofgames.language.experiments.make_judge", lambda s, seed: judge())
    played = asyncio.run(generated_games(10, 4, seed=1, protocol="cross-examination",
                                         judge="model:mock"))  # fmt: skip
    rows = [{"protocol": "cross-examination", "judge": "model:mock", **r} for r in played]
    curve = {c["bin"]: c for c in reliability(rows)}
    assert set(curve) == {(0.2, 0.4), (0.8, 1.0)}
    assert curve[(0.8, 1.0)]["mean_p_yes"] == pytest.approx(0.9 + BIAS * 0.1)
    assert curve[(0.8, 1.0)]["followed"] == 1.0
    assert curve[(0.2, 0.4)]["mean_p_yes"] == pytest.approx(0.1 + BIAS * 0.9)
    assert curve[(0.2, 0.4)]["followed"] == 0.0
    assert sum(c["judgements"] for c in curve.values()) == sum(len(r["judgements"]) for r in rows)
