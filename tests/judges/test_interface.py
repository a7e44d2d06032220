"""The step-judge schema: questions round-trip as plain data, bad fields are refused."""

from __future__ import annotations

import asyncio

import pytest

from proofgames.errors import OracleError
from proofgames.judges import Judgement, StepJudge, StepQuestion


def _question() -> StepQuestion:
    return StepQuestion(task="Ann has 4 pens.", premises=("She gives 1 away.",), step="4 - 1 = 3")


def test_question_round_trips_and_id_depends_on_every_field() -> None:
    q = _question()
    assert StepQuestion.from_dict(q.to_dict()) == q
    others = [
        StepQuestion(task="Ann has 5 pens.", premises=q.premises, step=q.step),
        StepQuestion(task=q.task, premises=(), step=q.step),
        StepQuestion(task=q.task, premises=q.premises, step="4 - 1 = 2"),
        StepQuestion(task=q.task, premises=q.premises, step=q.step, prompt="Is it true?"),
    ]
    assert len({q.question_id, *(o.question_id for o in others)}) == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task": 3}, "'task' must be a string"),
        ({"premises": "x"}, "premises must be a list"),
        ({"premises": [1]}, "'premises[0]' must be a string"),
        ({"step": "x" * 20_001}, "the limit is 20,000"),
        ({"question_id": "0" * 64}, "does not match its content"),
        ({"extra": 1}, "unknown fields ['extra']"),
    ],
)
def test_malformed_question_data_is_refused_by_name(
    change: dict[str, object], message: str
) -> None:
    data = {**_question().to_dict(), **change}
    with pytest.raises(OracleError, match=message.replace("[", r"\[").replace("]", r"\]")):
        StepQuestion.from_dict(data)


def test_missing_field_and_non_object_are_refused() -> None:
    data = _question().to_dict()
    del data["step"]
    with pytest.raises(OracleError, match="missing 'step'"):
        StepQuestion.from_dict(data)
    with pytest.raises(OracleError, match="JSON object"):
        StepQuestion.from_dict([])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"p_yes": float("nan")},
        {"p_yes": 1.5},
        {"p_yes": True},
        {"p_yes": 1.0, "calls": -1},
        {"p_yes": 1.0, "calls": 1, "human_judgements": 2},
        {"p_yes": 1.0, "input_tokens": 2.5},
    ],
)
def test_impossible_judgements_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(OracleError):
        Judgement(**kwargs)  # type: ignore[arg-type]


def test_a_class_with_async_judge_is_a_step_judge() -> None:
    class Always:
        name = "always"
        kind = "scripted"

        async def judge(self, question: StepQuestion) -> Judgement:
            return Judgement(p_yes=0.0 if "2" in question.step else 1.0)

    judge = Always()
    assert isinstance(judge, StepJudge)
    assert asyncio.run(judge.judge(_question())).verdict is True
