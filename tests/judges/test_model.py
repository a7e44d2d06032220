"""Model judges that fail honestly (issue 35, hole 4 and item 4).

Offline: Inspect's mock model, every reply with usage set (no tokenizer download).  A
judge whose yes/no probability mass is too small, whose API or Inspect limit fails, or
whose role is not bound stops the run as ``"judge"``: never a verdict, never a party's
forfeit, never a score.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from proofgames.errors import DebateStopped

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import token_limit

from proofgames.cli import main
from proofgames.errors import OracleError, ProtocolError
from proofgames.judges import JudgeFailed, StepQuestion
from proofgames.judges.model import (
    DEFAULT_PROMPT_TEMPLATE,
    REASONING_TOKENS,
    ModelJudge,
    ModelJudgeConfig,
    read_answer,
    render_question,
    use_judge_config,
)
from proofgames.language import experiments
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import bisection, cross_examination
from proofgames.language.provers import ReferenceB, ScriptedA

USAGE = ModelUsage(input_tokens=50, output_tokens=1, total_tokens=51, total_cost=0.001)
Q = StepQuestion(task="Tom has 3 apples.", premises=(), step="He has 3 + 2 = <<3+2=5>>5.")


def _lp(p: float) -> float:
    return math.log(p) if p > 0 else -1e9


def first_token_reply(first: str, tops: dict[str, float], usage: ModelUsage = USAGE) -> ModelOutput:
    """A one-token reply ``first`` whose top log-probabilities give ``tops`` (probabilities)."""
    top = [TopLogprob(token=t, logprob=_lp(p)) for t, p in tops.items()]
    lp = Logprobs(content=[Logprob(token=first, logprob=_lp(tops[first]), top_logprobs=top)])
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=first), logprobs=lp)
    return ModelOutput(model="mock", choices=[choice], completion=first, usage=usage)


def text_reply(text: str, stop_reason: Any = "stop") -> ModelOutput:
    out = ModelOutput.from_content("mock", text, stop_reason=stop_reason)
    out.usage = USAGE
    return out


def mock(outputs: Any) -> Any:
    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def always(output: ModelOutput) -> Any:
    return mock(lambda *args: output)


# the reply of issue 35, hole 4: a newline first; "yes" and "no" hold 1% between them
NEWLINE_FIRST = first_token_reply("\n", {"\n": 0.97, "Yes": 0.004, " no": 0.006, "The": 0.02})


def dishonest_debate(judge: ModelJudge, protocol: Any = cross_examination) -> Any:
    """The debate's outcome, or the :class:`DebateStopped` it ended with (no verdict)."""
    item = generate_chain(12, seed=3)
    try:
        return asyncio.run(
            protocol(
                item.task_text,
                ScriptedA(item.dishonest),
                ReferenceB(item.reference),
                JudgeLedger(judge),
            )
        )
    except DebateStopped as exc:
        return exc


@pytest.mark.parametrize("protocol", [cross_examination, bisection])
def test_a_judge_with_a_yes_no_mass_of_one_percent_fails_the_run(protocol: Any) -> None:
    # at HEAD P[yes] = 0.4 was read from the 1% and the debate got a verdict (B won)
    out = dishonest_debate(ModelJudge(always(NEWLINE_FIRST), cache=False), protocol)
    assert isinstance(out, DebateStopped) and out.kind == "judge"
    assert "yes/no probability mass" in str(out) and "is 0.01, below the threshold 0.5" in str(out)
    with pytest.raises(JudgeFailed, match=r"'\\n'.*0\.01, below the threshold 0\.5"):
        asyncio.run(ModelJudge(always(NEWLINE_FIRST), cache=False).judge(Q))


def test_a_run_whose_judge_always_fails_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = ModelJudge(always(NEWLINE_FIRST), cache=False)
    monkeypatch.setattr(experiments, "make_judge", lambda spec, seed: judge)
    # a judge that fails on every question measures nothing: the run is an error
    with pytest.raises(OracleError, match=r"below the threshold 0\.5"):
        asyncio.run(experiments.generated_games(10, 2, seed=0, protocol="bisection", judge="model"))


def test_a_mass_of_sixty_percent_reads_p_yes_renormalized() -> None:
    reply = first_token_reply("\n", {"\n": 0.4, " yes": 0.3, "Yes": 0.15, "no": 0.15})
    j = asyncio.run(ModelJudge(always(reply), cache=False).judge(Q))
    assert j.p_yes == pytest.approx(0.75) and j.detail["source"] == "logprobs"
    assert j.detail["yes_no_mass"] == pytest.approx(0.6)
    # the threshold is the judge's parameter: the same reply fails a judge asking for 0.7
    strict = ModelJudge(always(reply), cache=False, config=ModelJudgeConfig(min_mass=0.7))
    with pytest.raises(JudgeFailed, match=r"is 0\.6, below the threshold 0\.7"):
        asyncio.run(strict.judge(Q))
    # and the ambient config (what --judge-min-mass sets) reaches judges built from specs
    with use_judge_config(ModelJudgeConfig(min_mass=0.7)):
        built = experiments.make_judge("model:mockllm/model", seed=0)
    assert isinstance(built, ModelJudge) and built.config.min_mass == 0.7


def test_a_text_answer_without_logprobs_is_read_as_before() -> None:
    assert read_answer(text_reply("Yes."), ModelJudgeConfig()).p_yes == 1.0
    with pytest.raises(JudgeFailed, match="not yes or no"):
        read_answer(text_reply("The step is fine"), ModelJudgeConfig())
    # logprobs off (a provider that refuses them): the text is read, none are asked for
    low_mass = first_token_reply("yes", {"yes": 0.3, "\n": 0.7})
    with pytest.raises(JudgeFailed, match="below the threshold"):
        read_answer(low_mass, ModelJudgeConfig())
    assert read_answer(low_mass, ModelJudgeConfig(logprobs=False)) == (1.0, "text", None)
    asked: list[GenerateConfig] = []

    def record(messages: Any, tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
        asked.append(config)
        return low_mass

    off = ModelJudge(mock(record), cache=False, config=ModelJudgeConfig(logprobs=False))
    assert asyncio.run(off.judge(Q)).p_yes == 1.0 and not asked[0].logprobs
    with pytest.raises(JudgeFailed, match="content filter"):
        read_answer(text_reply("no", stop_reason="content_filter"), ModelJudgeConfig())


def test_model_api_errors_stop_the_run_and_never_make_a_forfeit() -> None:
    def down(*args: Any) -> ModelOutput:
        raise ConnectionError("the judge's API is down")

    broken = text_reply("yes")
    broken.error = "rate limited after 5 retries"
    nan_money = text_reply("yes")
    nan_money.usage = ModelUsage(
        input_tokens=5, output_tokens=1, total_tokens=6, total_cost=float("nan")
    )
    for model, why in [
        (mock(down), "API is down"),
        (always(broken), "rate limited"),
        (always(nan_money), "cost of nan, not money"),  # at HEAD: NaN money was counted
    ]:
        out = dishonest_debate(ModelJudge(model, cache=False))
        assert isinstance(out, DebateStopped) and out.kind == "judge", why
        assert why in str(out)
        with pytest.raises(JudgeFailed, match=why):
            asyncio.run(ModelJudge(model, cache=False).judge(Q))


def test_an_inspect_limit_is_the_judges_failure_not_a_verdict() -> None:
    async def judge_under_a_limit() -> object:
        with token_limit(30):
            return await ModelJudge(always(text_reply("yes")), cache=False).judge(Q)

    # at HEAD the LimitExceededError escaped the judge as it was (no judge failure)
    with pytest.raises(JudgeFailed, match="Token limit exceeded"):
        asyncio.run(judge_under_a_limit())


@solver
def _judge_once() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        j = await ModelJudge(cache=False).judge(Q)  # the model in role "judge"
        state.output = ModelOutput.from_content("judge", "yes" if j.verdict else "no")
        return state

    return solve


def test_an_unbound_judge_role_is_an_eval_error_not_the_evals_own_model(tmp_path: Path) -> None:
    # at HEAD the judge silently used the model under evaluation, and the sample was scored
    task = Task(dataset=[Sample(input="x", target="yes")], solver=_judge_once(), scorer=match())
    (log,) = inspect_eval(
        task, model=always(text_reply("yes")), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "error" and log.error is not None
    assert "role 'judge'" in log.error.message and "--model-role judge=" in log.error.message
    (log,) = inspect_eval(
        task,
        model="none/none",
        model_roles={"judge": always(text_reply("yes"))},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and log.results is not None


def test_reason_then_answer_reads_the_last_answer_line_from_text() -> None:
    seen: list[GenerateConfig] = []
    prompts: list[str] = []

    def reasoner(messages: Any, tools: Any, choice: Any, config: GenerateConfig) -> ModelOutput:
        seen.append(config)
        prompts.append(messages[-1].text)
        return text_reply(
            "3 + 2 is 5, as the step says; an answer: no would be wrong.\nAnswer: yes"
        )

    cfg = ModelJudgeConfig(reason_then_answer=True)
    j = asyncio.run(ModelJudge(mock(reasoner), cache=False, config=cfg).judge(Q))
    assert j.p_yes == 1.0 and j.detail["source"] == "text"
    assert seen[0].max_tokens == REASONING_TOKENS and "Reason step by step" in prompts[0]
    # markdown answers are read too
    assert read_answer(text_reply("It is wrong.\n**Answer:** No"), cfg).p_yes == 0.0


def test_reason_then_answer_reads_the_answer_tokens_logprobs() -> None:
    tokens = ["3", " +", " 2", " is", " 5", ".\n", "Answer", ":", " yes"]
    content = [Logprob(token=t, logprob=-0.01, top_logprobs=[]) for t in tokens[:-1]]
    tops = [TopLogprob(token=" yes", logprob=_lp(0.6)), TopLogprob(token=" no", logprob=_lp(0.2))]
    content.append(Logprob(token=" yes", logprob=_lp(0.6), top_logprobs=tops))
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content="".join(tokens)), logprobs=Logprobs(content=content)
    )
    out = ModelOutput(model="m", choices=[choice], completion="".join(tokens), usage=USAGE)
    r = read_answer(out, ModelJudgeConfig(reason_then_answer=True))
    assert r.source == "logprobs" and r.p_yes == pytest.approx(0.75)
    assert r.mass == pytest.approx(0.8)
    with pytest.raises(JudgeFailed, match=r"answer token 8 .* 0\.8, below the threshold 0\.9"):
        read_answer(out, ModelJudgeConfig(reason_then_answer=True, min_mass=0.9))


def test_reasoning_that_never_answers_is_the_judges_failure() -> None:
    cfg = ModelJudgeConfig(reason_then_answer=True, max_tokens=64)
    cut = text_reply("First, 3 + 2 is", stop_reason="max_tokens")
    with pytest.raises(
        JudgeFailed, match="used its 64 output tokens without writing 'Answer: yes'"
    ):
        read_answer(cut, cfg)
    with pytest.raises(JudgeFailed, match="with no 'Answer: yes' or 'Answer: no'"):
        read_answer(text_reply("I am not sure."), cfg)


def test_the_prompt_is_a_checked_template() -> None:
    cfg = ModelJudgeConfig(prompt="Check: {step}\nGiven: {premises}")
    text = render_question(Q, cfg)
    assert text.startswith("Check: He has 3 + 2") and text.endswith("one word: yes or no.")
    assert render_question(Q) == render_question(
        Q, ModelJudgeConfig(prompt=DEFAULT_PROMPT_TEMPLATE)
    )
    for bad, why in [
        ("no step here", "must hold {step}"),
        ("{step} {step.__class__}", "uses {step.__class__}"),
        ("{step!r}", "uses {step!r}"),
        ("{step} {secret}", "uses {secret}"),
        ("{step", "not a template"),
        ("{step}" + "x" * 20_001, "more than 20,000"),
    ]:
        with pytest.raises(ProtocolError, match=why.replace("{", r"\{").replace(".", r"\.")):
            ModelJudgeConfig(prompt=bad)


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"min_mass": 0}, "min_mass must be a number in (0, 1]"),
        ({"min_mass": 1.01}, "min_mass must be"),
        ({"min_mass": float("nan")}, "min_mass must be"),
        ({"min_mass": True}, "min_mass must be"),
        ({"max_tokens": 0}, "max_tokens must be an int in [1, 100,000]"),
        ({"max_tokens": 10**6}, "max_tokens must be"),
        ({"reason_then_answer": "yes"}, "reason_then_answer must be True or False"),
    ],
)
def test_model_judge_options_are_validated(options: dict[str, Any], why: str) -> None:
    with pytest.raises(ProtocolError, match=why.replace("(", r"\(").replace("[", r"\[")):
        ModelJudgeConfig(**options)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["language", *args])
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge-min-mass", "0.3"], "--judge-min-mass applies to a model judge only"),
        (["--judge", "model"], "--judge model needs a model name"),
        (["--judge", "model:mockllm/model", "--judge-min-mass", "0"], "--judge-min-mass must"),
        (["--judge", "model:mockllm/model", "--judge-min-mass", "nan"], "--judge-min-mass must"),
        (["--judge", "model:mockllm/model", "--judge-max-tokens", "0"], "--judge-max-tokens must"),
        (["--judge", "model:mockllm/model", "--judge-prompt", "/no/such/file"], "is not a file"),
    ],
)
def test_judge_options_on_the_command_line_fail_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, "generated", "--n", "1", "--steps", "10", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_judge_options_reach_the_model_judge_from_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made: list[ModelJudge] = []
    real = experiments.make_judge

    def make(spec: str, seed: int) -> Any:
        judge = real(spec, seed)
        if isinstance(judge, ModelJudge):
            judge._model = always(NEWLINE_FIRST)
            made.append(judge)
        return judge

    monkeypatch.setattr(experiments, "make_judge", make)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Is this right? {step}\n{instruction}", encoding="utf-8")
    code, _, err = run_cli(
        capsys, "generated", "--n", "1", "--steps", "10", "--judge", "model:mockllm/model",
        "--judge-min-mass", "0.005", "--judge-max-tokens", "300", "--judge-reason",
        "--judge-prompt", str(prompt), "--json",
    )  # fmt: skip
    assert made and all(j.config.min_mass == 0.005 for j in made)
    assert made[0].config.output_tokens == 300 and made[0].config.reason_then_answer
    assert made[0].config.prompt.startswith("Is this right?")
    assert code == 2 and "'Answer: yes' or 'Answer: no'" in err  # reasoning, no answer line
    bad = tmp_path / "bad.txt"
    bad.write_text("no field", encoding="utf-8")
    code, _, err = run_cli(
        capsys, "generated", "--n", "1", "--judge", "model:mockllm/model",
        "--judge-prompt", str(bad),
    )  # fmt: skip
    assert code == 2 and "must hold {step}" in err and str(bad) in err
