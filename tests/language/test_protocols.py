"""Transcript debates with scripted provers and judges: outcomes, forfeits, costs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from proofgames.errors import DebateStopped
from proofgames.judges import CalculatorJudge, CallbackJudge, Judgement, ScriptedJudge, StepQuestion
from proofgames.language.costs import BudgetExhausted, JudgeBudget, JudgeLedger
from proofgames.language.figure1 import Figure1Check
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import (
    bisection,
    consultancy,
    cross_examination,
    whole_transcript,
)
from proofgames.language.provers import (
    ContrarianB,
    InconsistentA,
    ProverReply,
    ReferenceB,
    ScriptedA,
)
from proofgames.language.transcript import StepTranscript, question_tokens
from proofgames.stochastic.optimize import optimize_params


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("steps", [2, 10, 137])
@pytest.mark.parametrize("protocol", [cross_examination, bisection])
def test_debate_finds_the_planted_error_and_accepts_honest_a(protocol: Any, steps: int) -> None:
    for seed in range(3):
        item = generate_chain(steps, seed=seed)
        judge = JudgeLedger(CalculatorJudge(ground_operands=True))
        honest = run(protocol(item.task_text, ScriptedA(item.reference), ContrarianB(seed), judge))
        assert honest.verdict == 1 and honest.winner == "A"
        liar = run(
            protocol(item.task_text, ScriptedA(item.dishonest), ReferenceB(item.reference), judge)
        )
        assert liar.verdict == 0
        assert liar.details["disputed_step"] == item.error_at
        assert liar.costs.judge_calls == 1


def test_judge_reads_only_the_disputed_step_and_its_relevant_set() -> None:
    item = generate_chain(500, seed=4, error_at=321)
    seen: list[StepQuestion] = []

    async def spy(q: StepQuestion) -> Judgement:
        seen.append(q)
        return await CalculatorJudge().judge(q)

    ledger = JudgeLedger(CallbackJudge(spy, kind="calculator"))
    out = run(
        cross_examination(
            item.task_text, ScriptedA(item.dishonest), ReferenceB(item.reference), ledger
        )
    )
    (q,) = seen
    assert q.step == item.dishonest.steps[321].text
    assert q.premises == (item.dishonest.steps[320].text,)
    assert q.task == item.task[322]
    assert out.costs.judge_input_tokens == question_tokens(q)
    whole = run(
        whole_transcript(item.task_text, ScriptedA(item.dishonest), JudgeLedger(CalculatorJudge()))
    )
    assert whole.verdict == 0
    assert whole.costs.judge_input_tokens > 100 * out.costs.judge_input_tokens


def test_inconsistent_copies_forfeit() -> None:
    item = generate_chain(20, seed=1, error_at=7)
    a = InconsistentA(item.dishonest, changed=6)
    out = run(
        cross_examination(
            item.task_text, a, ReferenceB(item.reference), JudgeLedger(CalculatorJudge())
        )
    )
    assert out.forfeit == "A" and out.winner == "B" and "differently" in out.reason
    out = run(bisection(item.task_text, a, ContrarianB(0), JudgeLedger(CalculatorJudge())))
    assert out.verdict in (0, 1) and out.reason


class Hostile:
    name = "hostile"

    def __init__(self, mode: str, item: Any) -> None:
        self.mode, self.item = mode, item

    async def transcript(self, task: str) -> object:
        if self.mode == "raise":
            raise RuntimeError("boom")
        if self.mode == "slow":
            await asyncio.sleep(10)
        if self.mode == "text":
            return "I refuse to use the format."
        if self.mode == "other-task":
            return generate_chain(5, seed=99).reference
        return {"task": 3}

    async def step(self, task: str, t: int) -> object:
        return None

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        return {"raise": RuntimeError, "slow": "x", "text": 10**9}.get(self.mode, 2.5)

    async def half(self, task: str, t: int, claimed: object) -> object:
        return "middle"


@pytest.mark.parametrize("mode", ["raise", "slow", "text", "other-task", "dict"])
def test_hostile_a_loses_with_a_reason(mode: str) -> None:
    item = generate_chain(8, seed=2)
    for protocol in (cross_examination, bisection):
        out = run(
            protocol(
                item.task_text,
                Hostile(mode, item),
                ReferenceB(item.reference),
                JudgeLedger(CalculatorJudge()),
                timeout=0.2,
            )
        )
        assert out.forfeit == "A" and out.verdict == 0 and out.reason


@pytest.mark.parametrize("mode", ["raise", "slow", "text", "dict"])
def test_hostile_b_loses_with_a_reason(mode: str) -> None:
    item = generate_chain(8, seed=2)
    for protocol in (cross_examination, bisection):
        out = run(
            protocol(
                item.task_text,
                ScriptedA(item.reference),
                Hostile(mode, item),
                JudgeLedger(CalculatorJudge()),
                timeout=0.2,
            )
        )
        assert out.forfeit == "B" and out.verdict == 1 and "B loses" in out.reason


def test_budget_stops_the_run_and_reports_it() -> None:
    item = generate_chain(10, seed=0)
    ledger = JudgeLedger(CalculatorJudge(), JudgeBudget(max_calls=2))
    outs = [
        run(consultancy(item.task_text, ScriptedA(item.reference), ledger, seed=s, checks=1))
        for s in range(2)
    ]
    assert [o.verdict for o in outs] == [1, 1]
    with pytest.raises(DebateStopped, match="budget spent") as stopped:
        run(consultancy(item.task_text, ScriptedA(item.reference), ledger, seed=2, checks=1))
    assert stopped.value.kind == "budget"
    with pytest.raises(BudgetExhausted):
        run(ledger.ask(item.reference.question(0)))


def test_a_failing_judge_stops_the_run() -> None:
    async def broken(q: StepQuestion) -> Judgement:
        raise ConnectionError("no network")

    item = generate_chain(10, seed=0)
    with pytest.raises(DebateStopped, match="no network") as stopped:
        run(
            whole_transcript(
                item.task_text, ScriptedA(item.reference), JudgeLedger(CallbackJudge(broken))
            )
        )
    assert stopped.value.kind == "judge"


def test_scripted_judge_error_rate_is_measured() -> None:
    item = generate_chain(5, seed=0, error_at=2)
    judge = ScriptedJudge(CalculatorJudge(), 0.2, seed=3)
    good, bad = item.reference.question(1), item.dishonest.question(2)
    yes_good = sum(run(judge.judge(good)).verdict for _ in range(2000)) / 2000
    yes_bad = sum(run(judge.judge(bad)).verdict for _ in range(2000)) / 2000
    assert abs(yes_good - 0.8) < 0.04 and abs(yes_bad - 0.2) < 0.04
    assert judge.probability(item.reference.whole_question()) == pytest.approx(0.8**6)


def test_consultancy_misses_most_planted_errors() -> None:
    caught = 0
    for seed in range(40):
        item = generate_chain(20, seed=seed)
        out = run(
            consultancy(
                item.task_text,
                ScriptedA(item.dishonest),
                JudgeLedger(CalculatorJudge()),
                seed=seed,
                checks=2,
            )
        )
        caught += out.verdict == 0
    assert 0 < caught < 20  # about 2/20 of 40 debates, far from debate's 40


def test_prover_replies_count_tokens_and_money() -> None:
    item = generate_chain(6, seed=0)

    class Paying(ScriptedA):
        async def transcript(self, task: str) -> object:
            return ProverReply(item.reference, input_tokens=10, output_tokens=7, cost_usd=0.5)

    out = run(
        cross_examination(
            item.task_text, Paying(item.reference), ContrarianB(1), JudgeLedger(CalculatorJudge())
        )
    )
    assert (out.costs.prover_input_tokens, out.costs.prover_output_tokens) == (10, 7)
    assert out.costs.cost_usd == 0.5 and out.verdict == 1


def test_figure1_turns_a_noisy_judge_into_a_sound_one() -> None:
    params = optimize_params(1.0, 1).params
    wrong = 0
    for seed in range(5):
        item = generate_chain(30, seed=seed)
        judge = ScriptedJudge(CalculatorJudge(), 0.2, seed=seed)
        check = Figure1Check(params, announcement=0.8, b_model=judge.probability, seed=seed)
        out = run(
            cross_examination(
                item.task_text,
                ScriptedA(item.dishonest),
                ReferenceB(item.reference),
                JudgeLedger(judge),
                figure1=check,
            )
        )
        wrong += out.verdict == 1
        assert out.costs.judge_calls == params.v_samples
    assert wrong == 0
