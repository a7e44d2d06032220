"""Experiments that never ran are errors, not measurements (issue 34, item 6)."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from proofgames.errors import DebateStopped, OracleError, ProtocolError
from proofgames.judges import CallbackJudge, Judgement, StepQuestion
from proofgames.language import experiments
from proofgames.language.costs import JudgeBudget
from proofgames.language.experiments import generated_games, summarize


@pytest.mark.parametrize(
    "limits",
    [
        {"max_calls": 0},
        {"max_calls": -1},
        {"max_calls": True},
        {"max_input_tokens": 0},
        {"max_cost_usd": 0.0},
        {"max_cost_usd": -1.0},
        {"max_cost_usd": math.nan},
    ],
)
def test_a_judge_budget_of_nothing_is_refused(limits: dict[str, Any]) -> None:
    # at HEAD such a budget was accepted; the run "stopped" before its first debate and
    # was summarized as completeness 0.000, measured
    with pytest.raises(ProtocolError, match="must be a positive"):
        JudgeBudget(**limits)


def test_a_stopped_debate_is_in_no_rate() -> None:
    # at HEAD a debate the budget stopped counted as a rejection in every rate
    rows: list[dict[str, Any]] = [
        {"truth": True, "accepted": True, "correct": True, "judge_calls": 1,
         "judge_input_tokens": 10, "prover_tokens": 0},
        {"truth": True, "accepted": None, "correct": False, "judge_calls": 0,
         "judge_input_tokens": 0, "prover_tokens": 0},
    ]  # fmt: skip
    s = summarize(rows)
    assert s["debates"] == 2 and s["stopped"] == 1
    assert s["completeness"] == 1.0 and s["accuracy"] == 1.0
    assert math.isnan(s["soundness_error"])


def test_a_model_judge_that_cannot_be_loaded_fails_before_any_debate() -> None:
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    # at HEAD: one "stopped" debate, summarized as completeness 0.000 (measured)
    with pytest.raises(OracleError, match="'model:nonexistent/model' cannot be used"):
        asyncio.run(
            generated_games(10, 2, seed=0, protocol="bisection", judge="model:nonexistent/model")
        )
    with pytest.raises(OracleError, match="cannot be used"):
        asyncio.run(
            experiments.gsm8k_games(
                None, limit=1, protocol="bisection", judge="model:nonexistent/model"
            )
        )


def test_a_judge_failing_mid_run_stops_its_debates_in_no_rate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # at HEAD~ the run returned its rows, the failed debates among them as rejections
    calls = 0

    async def flaky(question: StepQuestion) -> Judgement:
        nonlocal calls
        calls += 1
        if calls > 3:
            raise ConnectionError("the judge's API is down")
        return Judgement(p_yes=1.0)

    monkeypatch.setattr(experiments, "make_judge", lambda spec, seed: CallbackJudge(flaky))
    rows = asyncio.run(generated_games(10, 5, seed=0, protocol="bisection", judge="calculator"))
    assert [r["stopped"] for r in rows] == [None] * 3 + ["judge"] * 7
    assert "API is down" in rows[3]["reason"] and summarize(rows)["stopped"] == 7
    calls = 3  # down from the start: nothing measured is an error, not a rate
    with pytest.raises(OracleError, match=r"no debate finished: .*API is down"):
        asyncio.run(
            experiments.gsm8k_games(None, limit=None, protocol="bisection", judge="calculator")
        )


def test_a_prover_model_failing_stops_the_debate_without_a_forfeit() -> None:
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai.model import get_model

    from proofgames.judges import CalculatorJudge
    from proofgames.language.costs import JudgeLedger
    from proofgames.language.generated import generate_chain
    from proofgames.language.model_provers import ModelProverB
    from proofgames.language.protocols import cross_examination
    from proofgames.language.provers import ScriptedA

    def down(*args: Any) -> Any:
        raise ConnectionError("the prover's API is down")

    # at HEAD the failure was B's forfeit: the dishonest A was accepted, a measured win
    b = ModelProverB(get_model("mockllm/model", custom_outputs=down, memoize=False))
    item = generate_chain(10, seed=0)
    with pytest.raises(DebateStopped, match="API is down") as stopped:
        asyncio.run(
            cross_examination(
                item.task_text, ScriptedA(item.dishonest), b, JudgeLedger(CalculatorJudge())
            )
        )
    assert stopped.value.kind == "model"


def test_an_inspect_sample_whose_judge_failed_is_an_error_not_a_score(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from proofgames.language.inspect_tasks import gsm8k_debate

    def maybe(*args: Any) -> ModelOutput:
        out = ModelOutput.from_content("mock", "maybe")
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
        return out

    # at HEAD each sample was scored, verdict "stopped", as a wrong answer
    judge = get_model("mockllm/model", custom_outputs=maybe, memoize=False)
    (log,) = inspect_eval(
        gsm8k_debate(limit=1, judge="model"),
        model="none/none",
        model_roles={"judge": judge},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "error" and log.error is not None
    assert "did not finish" in log.error.message and "not yes or no" in log.error.message


class _FailingEvery:
    """The calculator judge, failing on every ``k``-th question (an unsure model, an outage)."""

    def __init__(self, k: int) -> None:
        from proofgames.judges import CalculatorJudge

        self.inner, self.k, self.calls, self.name = CalculatorJudge(), k, 0, "flaky"

    async def judge(self, question: Any) -> Any:
        self.calls += 1
        if self.calls % self.k == 0:
            raise RuntimeError("the judge could not answer")
        return await self.inner.judge(question)


def test_one_stopped_debate_is_counted_and_never_ends_the_batch(monkeypatch) -> None:
    """Issue 35: one debate its judge stopped ended the whole run (an error, exit 2)."""
    import asyncio

    from proofgames.language import experiments

    flaky = _FailingEvery(3)  # one judge for the run: its 3rd, 6th, ... questions fail
    monkeypatch.setattr(experiments, "make_judge", lambda spec, seed: flaky)
    rows = asyncio.run(
        experiments.generated_games(12, 6, seed=1, protocol="bisection", judge="calculator")
    )
    summary = experiments.summarize(rows)
    assert summary["debates"] == 12 and summary["stopped"] == 4
    assert {r["stopped"] for r in rows if r["accepted"] is None} == {"judge"}
    down = _FailingEvery(1)
    monkeypatch.setattr(experiments, "make_judge", lambda spec, seed: down)
    with pytest.raises(OracleError, match="no debate finished: all 12 stopped"):
        asyncio.run(
            experiments.generated_games(12, 6, seed=1, protocol="bisection", judge="calculator")
        )
