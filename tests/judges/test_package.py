"""The judges package: every judge by name, and the old import paths of its modules.

Each step judge moved here (issue 35) from where it grew: the interface from
``proofgames.judging``, the calculator and scripted judges from
``proofgames.language.judges``, the model judge from ``proofgames.language.model_judge``
and the human judge from ``proofgames.judge.human``. The old paths give the same module
objects for one release, with a warning naming the new path.
"""

from __future__ import annotations

import asyncio
import importlib
import warnings

import pytest

import proofgames.judges as judges
from proofgames.errors import OracleError, ProtocolError
from proofgames.judges import StepJudge, StepQuestion, make_judge

OLD = {
    "proofgames.judging": "proofgames.judges.interface",
    "proofgames.language.judges": "proofgames.judges",
    "proofgames.language.model_judge": "proofgames.judges.model",
    "proofgames.judge.human": "proofgames.judges.human",
}


@pytest.mark.parametrize(("old", "new"), OLD.items())
def test_an_old_path_is_the_new_module_with_a_warning(old, new):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert any(new in str(w.message) for w in caught if w.category is DeprecationWarning)


@pytest.mark.parametrize("spec", ["calculator", "calculator-grounded", "scripted:0.2"])
def test_every_judge_by_name_is_a_step_judge_that_answers(spec):
    judge = make_judge(spec, seed=1)
    assert isinstance(judge, StepJudge)
    q = StepQuestion(task="It has 3 crates.", premises=(), step="It has 3 + 2 = <<3+2=5>>5.")
    answer = asyncio.run(judge.judge(q))
    assert 0.0 <= answer.p_yes <= 1.0 and answer.input_tokens > 0


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("oracle", ProtocolError, "unknown judge 'oracle'"),
        ("scripted:often", ProtocolError, "error rate must be a number"),
        ("scripted:0.7", OracleError, r"must lie in \[0, 0.5\)"),
    ],
)
def test_a_judge_that_cannot_be_made_is_refused_by_name(spec, error, match):
    with pytest.raises(error, match=match):
        make_judge(spec, seed=0)


def test_the_judges_that_need_extras_load_on_first_use():
    pytest.importorskip("inspect_ai")
    pytest.importorskip("httpx")
    assert judges.ModelJudge.__module__ == "proofgames.judges.model"
    assert judges.HumanJudge.__module__ == "proofgames.judges.human"
    with pytest.raises(AttributeError, match="no attribute 'OracleJudge'"):
        judges.OracleJudge  # noqa: B018
