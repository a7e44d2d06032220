"""Inspect tasks: a seed per sample, transcript events, metrics, and failures as errors.

Offline: scripted judges and provers, or Inspect's mock model with ``usage`` set on every
scripted output (without it the mock counts tokens with a tokenizer it downloads).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

import anyio
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from proofgames.analysis.intervals import wilson_interval
from proofgames.errors import DebateStopped
from proofgames.language import inspect_tasks
from proofgames.language._inspect_events import MAX_EVENT_TEXT, describe, event_text
from proofgames.language.inspect_tasks import generated_debate, role_seeds, sample_seed

USAGE = ModelUsage(input_tokens=50, output_tokens=1, total_tokens=51)


def said(text: str) -> ModelOutput:
    """A mock model's reply, with usage set (no tokenizer is needed)."""
    out = ModelOutput.from_content("mockllm", text)
    out.usage = USAGE
    return out


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's model cache in a fresh folder: a cached answer must not stand in for a call."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))


def run(task: Any, tmp_path: Path, **kwargs: Any) -> EvalLog:
    (log,) = inspect_eval(task, model="none/none", log_dir=str(tmp_path), display="none", **kwargs)
    return log


def outcomes(log: EvalLog) -> dict[Any, tuple[Any, Any, Any]]:
    assert log.samples is not None
    return {
        s.id: (s.metadata["outcome"]["accepted"], s.metadata["outcome"]["disputed_step"],
               s.metadata["outcome"]["seed"])
        for s in log.samples
    }  # fmt: skip


def info(sample: EvalSample, kind: str) -> list[dict[str, Any]]:
    """The sample's proofgames info events of ``kind`` (move, judge, forfeit, outcome)."""
    return [
        e.data
        for e in sample.events
        if e.event == "info" and e.source == "proofgames" and e.data.get("event") == kind
    ]


def test_sample_seeds_are_stable_and_distinct() -> None:
    ids = [f"{i}-{h}" for i in range(50) for h in ("honest", "dishonest")]
    seeds = [sample_seed(0, i) for i in ids]
    assert len(set(seeds)) == len(ids)
    assert seeds == [sample_seed(0, i) for i in ids]
    assert sample_seed(0, "1") != sample_seed(0, 1) != sample_seed(1, 1)
    assert sample_seed(0, "1-honest", epoch=2) != sample_seed(0, "1-honest")
    assert len(set(role_seeds(seeds[0]).values())) == 3
    assert sample_seed(7, "3-honest") == 1106662810  # pinned: the derivation must not drift


@pytest.mark.slow
def test_fifty_samples_draw_from_their_own_seeds(tmp_path: Path) -> None:
    """Hole 9: with one seed for every sample, scripted:0.1 gave accuracy 1.000 or 0.500."""
    task = generated_debate(steps=10, n=25, judge="scripted:0.1", seed=0)
    log = run(task, tmp_path)
    assert log.status == "success" and log.results is not None
    metrics = log.results.scores[0].metrics
    accuracy = metrics["accuracy"].value
    assert 0.0 < accuracy < 1.0 and accuracy != 0.5
    honest = [s for s in log.samples or [] if str(s.id).endswith("-honest")]
    assert len({s.metadata["outcome"]["disputed_step"] for s in honest}) > 3
    again = run(generated_debate(steps=10, n=25, judge="scripted:0.1", seed=0), tmp_path)
    assert outcomes(again) == outcomes(log)
    other = outcomes(run(generated_debate(steps=10, n=5, judge="scripted:0.1", seed=1), tmp_path))
    assert other != {k: v for k, v in outcomes(log).items() if k in other}


def test_metrics_moves_judge_calls_and_forfeits(tmp_path: Path) -> None:
    log = run(generated_debate(steps=6, n=3, protocol="bisection"), tmp_path)
    assert log.status == "success" and log.results is not None
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    low, high = wilson_interval(3, 3)
    assert metrics["completeness"] == 1.0 and metrics["soundness_error"] == 0.0
    assert (metrics["completeness_low"], metrics["completeness_high"]) == (low, high)
    assert metrics["soundness_error_high"] == pytest.approx(1 - low)
    assert metrics["judge_calls"] == 1.0 and metrics["judge_input_tokens"] > 0
    sample = read_eval_log(log.location).samples[0]  # type: ignore[index]
    moves = info(sample, "move")
    assert moves[0] == {"event": "move", "party": "A", "move": "transcript",
                        "sent": moves[0]["sent"]}  # fmt: skip
    assert {m["party"] for m in moves} == {"A", "B"}
    assert any(m["move"].startswith("half ") and m["sent"] in ("first", "second") for m in moves)
    (judged,) = info(sample, "judge")
    assert judged["p_yes"] in (0.0, 1.0) and judged["step"] and judged["input_tokens"] > 0
    (end,) = info(sample, "outcome")
    assert end["disputed_step"] == sample.metadata["outcome"]["disputed_step"]


def test_a_model_provers_forfeit_is_an_event_and_its_model_call_nests(tmp_path: Path) -> None:
    a = get_model("mockllm/model", custom_outputs=lambda *_: said("I think 42."), memoize=False)
    log = run(generated_debate(steps=4, n=1, prover_a="model"), tmp_path,
              model_roles={"prover_a": a})  # fmt: skip
    assert log.status == "success"
    sample = read_eval_log(log.location).samples[0]  # type: ignore[index]
    (forfeit,) = info(sample, "forfeit")
    assert forfeit["party"] == "A" and "malformed" in forfeit["reason"]
    (move,) = info(sample, "move")
    assert move["move"] == "transcript" and move["sent"]["value"] == "I think 42."
    span = next(e for e in sample.events if e.event == "span_begin" and e.name == "A: transcript")
    model = next(e for e in sample.events if e.event == "model")
    assert model.span_id == span.id  # the model call shows under the move


def test_event_text_is_bounded() -> None:
    assert len(event_text("x" * 10**7)) < MAX_EVENT_TEXT + 40
    assert describe({"k" * 10**6: 1})["keys"][0].endswith("(1,000,000 chars)")
    assert describe(object()) == {"type": "object"}
    assert describe(float("nan")) == "nan"


async def slow_yes(*_: Any) -> ModelOutput:
    await anyio.sleep(5)
    return said("yes")


def test_a_limit_that_cuts_a_debate_is_an_error_not_a_score(tmp_path: Path) -> None:
    """Hole 5: a time limit left no outcome, and the sample was scored INCORRECT."""
    judge = get_model("mockllm/model", custom_outputs=slow_yes, memoize=False)
    log = run(generated_debate(steps=4, n=1, judge="model"), tmp_path,
              model_roles={"judge": judge}, time_limit=1, fail_on_error=False)  # fmt: skip
    assert log.samples is not None and len(log.samples) == 2
    for s in log.samples:
        assert s.limit is not None and s.error is not None and "no outcome" in s.error.message
        assert not s.scores
    assert log.results is None or not log.results.scores or (
        log.results.scores[0].scored_samples == 0
    )  # fmt: skip


def test_a_failing_judge_model_is_an_error_with_retries(tmp_path: Path) -> None:
    calls: list[int] = []

    def down(*_: Any) -> ModelOutput:
        calls.append(1)
        raise RuntimeError("API down")

    judge = get_model("mockllm/model", custom_outputs=down, memoize=False)
    log = run(generated_debate(steps=4, n=1, judge="model"), tmp_path,
              model_roles={"judge": judge}, retry_on_error=1, fail_on_error=False)  # fmt: skip
    assert log.samples is not None and len(log.samples) == 2
    for s in log.samples:
        assert s.error is not None and "API down" in s.error.message and not s.scores
        assert s.error_retries is not None and len(s.error_retries) == 1
        (judged,) = info(s, "judge")  # the failed call is in the log too
        assert "API down" in judged["raised"]
    assert len(calls) >= 4  # each sample tried twice


def test_a_token_limit_inside_a_judge_call_is_an_error(tmp_path: Path) -> None:
    judge = get_model("mockllm/model", custom_outputs=lambda *_: said("yes"), memoize=False)
    log = run(generated_debate(steps=4, n=1, judge="model"), tmp_path,
              model_roles={"judge": judge}, token_limit=10, fail_on_error=False)  # fmt: skip
    assert log.samples is not None and len(log.samples) == 2
    for s in log.samples:
        assert s.error is not None and "Token limit" in s.error.message and not s.scores


def test_a_spent_budget_is_no_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget stop is a non-result: NaN, which Inspect leaves unscored and metrics skip."""
    play = inspect_tasks.play

    async def budget_on_honest(protocol: str, task: str, a: Any, b: Any, *rest: Any) -> Any:
        if type(b).__name__ == "ContrarianB":
            raise DebateStopped("budget", "judge budget spent")
        return await play(protocol, task, a, b, *rest)

    monkeypatch.setattr(inspect_tasks, "play", budget_on_honest)
    log = run(generated_debate(steps=4, n=2), tmp_path)
    assert log.status == "success" and log.results is not None and log.samples is not None
    score = log.results.scores[0]
    assert (score.scored_samples, score.unscored_samples) == (2, 2)
    assert score.metrics["accuracy"].value == 1.0
    assert "completeness" not in score.metrics and score.metrics["soundness_error"].value == 0
    stopped = [s for s in log.samples if str(s.id).endswith("-honest")]
    for s in stopped:
        assert s.scores is not None and math.isnan(s.scores["verdict_scorer"].value)  # type: ignore[arg-type]
        assert s.output.completion == "stopped"
