"""The Inspect AI layer, offline: mock models with scripted outputs (usage set on each)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)

from proofgames.judges import StepQuestion, annotation_holds
from proofgames.judges.model import ModelJudge
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.inspect_tasks import generated_debate, gsm8k_debate
from proofgames.language.model_provers import ModelProverA, ModelProverB
from proofgames.language.protocols import cross_examination
from proofgames.language.provers import ReferenceB, ScriptedA

from .test_parsers import GSM8K, needs_gsm8k

USAGE = ModelUsage(input_tokens=50, output_tokens=1, total_tokens=51, total_cost=0.001)


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's model cache in a fresh folder: another test's mock must not answer here."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


def reply(text: str, yes: float | None = None) -> ModelOutput:
    """A scripted reply; with ``yes``, first-token log-probabilities giving P[yes] = yes."""
    logprobs = None
    if yes is not None:
        tops = [
            TopLogprob(token=" yes", logprob=float(_log(yes))),
            TopLogprob(token="No", logprob=float(_log(1 - yes))),
            TopLogprob(token="maybe", logprob=-9.0),
        ]
        logprobs = Logprobs(content=[Logprob(token=text, logprob=-0.1, top_logprobs=tops)])
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=text), logprobs=logprobs)
    return ModelOutput(model="mock", choices=[choice], completion=text, usage=USAGE)


def _log(p: float) -> float:
    import math

    return math.log(max(p, 1e-12))


def calculator_judge_output(messages: list[Any], *args: Any) -> ModelOutput:
    """A mock judge model that checks the step's annotations (P[yes] 0.9 or 0.1)."""
    prompt = messages[-1].text
    step = prompt.split("Step to check:")[1].split("\n")[0]
    ok = all(annotation_holds(e, v) for e, v in re.findall(r"<<([^<>=]*)=([^<>]*)>>", step))
    return reply("yes" if ok else "no", 0.9 if ok else 0.1)


def test_model_judge_reads_p_yes_from_logprobs() -> None:
    model = get_model("mockllm/model", custom_outputs=calculator_judge_output, memoize=False)
    judge = ModelJudge(model, cache=False)
    item = generate_chain(10, seed=0, error_at=4)
    good = asyncio.run(judge.judge(item.reference.question(4)))
    bad = asyncio.run(judge.judge(item.dishonest.question(4)))
    assert good.p_yes == pytest.approx(0.9) and bad.p_yes == pytest.approx(0.1)
    assert good.cost_usd == 0.001 and good.output_tokens == 1
    assert good.detail["source"] == "logprobs"
    out = asyncio.run(
        cross_examination(
            item.task_text,
            ScriptedA(item.dishonest),
            ReferenceB(item.reference),
            JudgeLedger(judge),
        )
    )
    assert out.verdict == 0 and out.costs.cost_usd == pytest.approx(0.001)


def test_model_judge_without_logprobs_or_a_clear_answer() -> None:
    q = StepQuestion(task="", premises=(), step="<<1+1=2>>2")
    texts = iter([reply("Yes."), reply("The step is fine")])
    model = get_model("mockllm/model", custom_outputs=texts, memoize=False)
    judge = ModelJudge(model, cache=False)
    assert asyncio.run(judge.judge(q)).p_yes == 1.0
    out = asyncio.run(
        cross_examination(
            "x",
            ScriptedA(generate_chain(3, seed=0).reference),
            ReferenceB(generate_chain(3, seed=0).reference),
            JudgeLedger(judge),
        )
    )
    assert out.verdict == 0  # different task: A forfeits before any judge call
    led = JudgeLedger(judge)
    with pytest.raises(Exception, match="not yes or no"):
        asyncio.run(led.ask(q))


def test_model_provers_malformed_output_is_a_forfeit_with_reason() -> None:
    item = generate_chain(5, seed=2)
    a_model = get_model(
        "mockllm/model", custom_outputs=iter([reply("I think 42.")] * 3), memoize=False
    )
    out = asyncio.run(
        cross_examination(
            item.task_text,
            ModelProverA(a_model),
            ReferenceB(item.reference),
            JudgeLedger(ModelJudge("mockllm/model")),
        )
    )
    assert out.forfeit == "A" and "Step 1" in out.reason and out.costs.prover_output_tokens == 1


def test_model_a_writes_its_own_solution_and_model_b_disputes() -> None:
    task = "Ann has 12 pens. She gives away 5. How many now?"
    text = "Step 1: 12 - 5 = <<12-5=8>>8\nStep 2: she has 8 (uses 1)\nAnswer: 8"
    a_model = get_model("mockllm/model", custom_outputs=lambda *a: reply(text), memoize=False)
    b_model = get_model("mockllm/model", custom_outputs=lambda *a: reply("1"), memoize=False)
    j_model = get_model("mockllm/model", custom_outputs=calculator_judge_output, memoize=False)
    out = asyncio.run(
        cross_examination(
            task,
            ModelProverA(a_model, wrong_answer="8"),
            ModelProverB(b_model),
            JudgeLedger(ModelJudge(j_model, cache=False)),
        )
    )
    assert out.verdict == 0 and out.details["disputed_step"] == 0
    assert out.costs.prover_input_tokens == 50 * 3  # A's commitment, one copy, B's dispute
    assert out.costs.cost_usd == pytest.approx(0.004)


def test_generated_task_under_inspect_eval_with_a_model_judge(tmp_path: Path) -> None:
    judge = get_model("mockllm/model", custom_outputs=calculator_judge_output, memoize=False)
    (log,) = inspect_eval(
        generated_debate(steps=40, n=3, judge="model"),
        model="none/none",
        model_roles={"judge": judge},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success"
    scores = {s.name: s.metrics for s in log.results.scores}
    assert scores["verdict_scorer"]["accuracy"].value == 1.0
    assert 0 < scores["judge_tokens"]["mean"].value < 200
    again = read_eval_log(log.location)
    assert again.samples and again.samples[0].metadata["outcome"]["costs"]["judge_calls"] == 1


@needs_gsm8k
def test_gsm8k_task_with_a_model_b_and_judge(tmp_path: Path) -> None:
    b = get_model("mockllm/model", custom_outputs=lambda *a: reply("0"), memoize=False)
    (log,) = inspect_eval(
        gsm8k_debate(path=str(GSM8K), limit=3, prover_b="model", judge="model"),
        model="none/none",
        model_roles={"prover_b": b, "judge": "mockllm/model"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == 12
    reasons = {s.metadata["outcome"]["reason"] for s in log.samples}
    assert reasons == {"B conceded"}
    labels = [s.target == "accept" for s in log.samples]
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(sum(labels) / 12)


def test_task_options_are_checked() -> None:
    with pytest.raises(Exception, match="unknown protocol"):
        generated_debate(protocol="shouting")


def ledger_solver_output(messages: list[Any], *args: Any) -> ModelOutput:
    """A mock prover_a that solves the generated ledger task (and lies at the last line)."""
    prompt = messages[-1].text
    stock = int(re.search(r"starts with (\d+) crates", prompt).group(1))  # type: ignore[union-attr]
    lines = []
    for k, (verb, amount) in enumerate(re.findall(r"it (receives|ships out) (\d+) crates", prompt)):
        sign = "+" if verb == "receives" else "-"
        new = stock + int(amount) if sign == "+" else stock - int(amount)
        lines.append(
            f"Step {k + 1}: {stock} {sign} {amount} = <<{stock}{sign}{amount}={new}>>{new}"
        )
        stock = new
    wrong = re.search(r"final answer is (\d+)", prompt)
    lines.append(f"Answer: {wrong.group(1) if wrong else stock}")
    return reply("\n".join(lines))


def test_a_model_prover_a_writes_its_own_solution_under_inspect(tmp_path: Path) -> None:
    a = get_model("mockllm/model", custom_outputs=ledger_solver_output, memoize=False)
    task = generated_debate(steps=6, n=2, prover_a="model")
    (log,) = inspect_eval(task, model="none/none", model_roles={"prover_a": a},
                          log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success" and log.samples is not None
    outcomes = {s.id: s.metadata["outcome"] for s in log.samples}
    assert outcomes["0-honest"]["accepted"] is True and outcomes["0-honest"]["truth"] is True
    assert outcomes["0-dishonest"]["forfeit"] == "A" and outcomes["0-dishonest"]["truth"] is False
    assert outcomes["0-honest"]["costs"]["prover_output_tokens"] > 0
    assert log.results is not None and log.results.scores[0].metrics["accuracy"].value == 1.0
