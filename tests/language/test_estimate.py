"""The expected cost printed before a comparison: its counts against the driver's, per role.

Mock models that behave as the estimate assumes (A writes the ledger's solution in the
model format, B disputes the last step and points at the second half) play every
protocol; the calls the driver counted must be the estimate's exactly, and so must the
tokens where the mock reports word-and-symbol counts (consultancy's spot-checked step:
within the transcript's shortest and longest step questions).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ModelOutput,
    ModelUsage,
    get_model,
)

from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.judges.model import ModelJudge
from proofgames.judges.text import question_tokens
from proofgames.language.compare import compare_generated, compare_gsm8k
from proofgames.language.estimate import estimate_generated, estimate_gsm8k, model_of
from proofgames.language.experiments import PROTOCOLS, _seeds
from proofgames.language.generated import generate_chain
from proofgames.language.parsers import parse_model_output
from proofgames.language.transcript import count_tokens

STEPS, N = 5, 2  # 5 steps: bisection takes ceil(log2 5) = 3 rounds when B says "second"


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect's model cache in a fresh folder: another test's mock must not answer here."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


def counted(prompt: str, text: str, yes: bool = False) -> ModelOutput:
    """A reply whose usage is the word-and-symbol count of what was read and written."""
    usage = ModelUsage(input_tokens=count_tokens(prompt), output_tokens=count_tokens(text),
                       total_tokens=count_tokens(prompt) + count_tokens(text))  # fmt: skip
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=text))
    return ModelOutput(model="mock", choices=[choice], completion=text, usage=usage)


def ledger_writer(messages: list[Any], *args: Any) -> ModelOutput:
    """A mock A: the generated ledger's solution in its own words; lying, a slip at the end."""
    prompt = messages[-1].text
    stock = int(re.search(r"starts with (\d+) crates", prompt).group(1))  # type: ignore[union-attr]
    weeks = re.findall(r"it (receives|ships out) (\d+) crates", prompt)
    wrong = re.search(r"final answer is (\d+)", prompt)
    lines = []
    for k, (verb, amount) in enumerate(weeks):
        sign = "+" if verb == "receives" else "-"
        value = stock + int(amount) if sign == "+" else stock - int(amount)
        if wrong and k == len(weeks) - 1:
            value = int(wrong.group(1))
        text = (f"After week {k + 1} it holds {stock} {sign} {amount} = "
                f"<<{stock}{sign}{amount}={value}>>{value} crates.")  # fmt: skip
        lines.append(f"Step {k + 1}: {text}" + (f" (uses {k})" if k else ""))
        stock = value
    return counted(prompt, "\n".join([*lines, f"Answer: {stock}"]))


def last_step_disputer(messages: list[Any], *args: Any) -> ModelOutput:
    """A mock B: disputes the last step; in bisection, says each claim is right ("second")."""
    prompt = messages[-1].text
    steps = re.findall(r"^Step (\d+):", prompt, re.MULTILINE)
    return counted(prompt, steps[-1] if steps else "yes")


def mock(outputs: Any) -> Any:
    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def totals(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "A": sum(r["prover_calls"]["A"] for r in rows),
        "B": sum(r["prover_calls"]["B"] for r in rows),
        "judge": sum(r["judge_calls"] for r in rows),
        "prover_tokens": sum(r["prover_tokens"] for r in rows),
        "judge_tokens": sum(r["judge_input_tokens"] for r in rows),
    }


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_estimate_counts_every_call_the_run_makes(protocol: str) -> None:
    models = {"A": mock(ledger_writer), "B": mock(last_step_disputer)}
    grid = {"seed": 0, "judges": ("calculator",), "protocols": (protocol,), "models": models}
    rows = asyncio.run(compare_generated(STEPS, N, **grid))
    assert all(r["accepted"] is not None for r in rows)  # the assumptions held: no forfeit,
    assert not any("forfeit" in str(r["reason"]) or "A loses" in r["reason"] for r in rows)
    got = totals(rows)
    e = estimate_generated(STEPS, N, **grid)
    a, b, judge = e["prover A"], e["prover B"], e["judge calculator"]
    assert (got["A"], got["B"], got["judge"]) == (a.calls, b.calls, judge.calls)
    assert got["A"] >= 2 * N and (got["B"] > 0) == (protocol in ("cross-examination", "bisection"))
    spent = a.input_tokens + a.output_tokens + b.input_tokens + b.output_tokens
    assert got["prover_tokens"] == pytest.approx(spent)
    if protocol != "consultancy":
        assert got["judge_tokens"] == pytest.approx(judge.input_tokens)
        return
    items = [generate_chain(STEPS, seed=s) for s in _seeds(0, N)]
    seen = [parse_model_output(i.task_text, t.render()) for i in items  # as V reads A's text
            for t in (i.reference, i.dishonest)]  # fmt: skip
    sizes = [[question_tokens(t.question(s)) for s in range(STEPS)] for t in seen]
    assert sum(map(min, sizes)) <= got["judge_tokens"] <= sum(map(max, sizes))
    assert sum(map(min, sizes)) <= judge.input_tokens <= sum(map(max, sizes))


def test_best_of_n_samples_and_the_preference_judge_are_counted() -> None:
    def likes(messages: list[Any], *args: Any) -> ModelOutput:
        return counted(messages[-1].text, "yes")

    judge = ModelJudge(mock(likes))
    models = {"A": mock(ledger_writer)}
    grid = {"seed": 0, "judges": ("calculator",), "protocols": ("cross-examination",),
            "models": models, "best_of": (3,), "prefer": judge}  # fmt: skip
    rows = asyncio.run(compare_generated(STEPS, N, **grid))
    e = estimate_generated(STEPS, N, **grid)
    assert all(r["accepted"] is not None for r in rows)
    # A's tally holds its 3 samples, its copies and its own preference judge's 3 calls
    assert totals(rows)["A"] == e["prover A"].calls + e["preference judge"].calls
    assert e["preference judge"].calls == 3 * 2 * N
    assert e["prover A"].calls == 2 * N * (3 + 2)  # 3 samples; copies of the step and 1 premise


def test_only_model_specs_are_priced() -> None:
    assert model_of("model:openai/gpt-4o") == "openai/gpt-4o"
    assert model_of("flip:model:x/y") == "x/y"
    assert [model_of(s) for s in ("calculator", "scripted:0.1", "model", "other:model:x")] == [
        None, None, None, None,
    ]  # fmt: skip


def test_dry_run_prints_the_estimate_and_plays_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a dry run played a debate")

    monkeypatch.setattr("proofgames.language.compare.compare_generated", never)
    spec = ["language", "compare", "--steps", str(STEPS), "--n", str(N), "--protocol", "bisection",
            "--prover-b", "model:mockllm/model", "--judge", "model:mockllm/model"]  # fmt: skip
    r = CliRunner().invoke(app, [*spec, "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "Expected cost before the run (an estimate" in r.output
    e = estimate_generated(STEPS, N, seed=0, judges=("model:mockllm/model",),
                           protocols=("bisection",), models={"B": "mockllm/model"})  # fmt: skip
    b_row = next(line for line in r.output.splitlines() if line.startswith("| prover B"))
    assert f"| {e['prover B'].calls} |" in b_row and "no price" in b_row
    r = CliRunner().invoke(app, [*spec, "--dry-run", "--json"])
    got = json.loads(r.stdout)["estimate"]
    assert got["prover B"]["calls"] == e["prover B"].calls == 2 * N * 3
    assert got["judge model:mockllm/model"]["calls"] == 2 * N


def test_the_estimate_is_printed_before_the_run_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def started(*args: Any, **kwargs: Any) -> Any:
        raise ProtocolError("the run started here")

    monkeypatch.setattr("proofgames.language.compare.compare_generated", started)
    r = CliRunner().invoke(app, ["language", "compare", "--steps", "4", "--n", "1",
                                 "--prover-a", "model:mockllm/model"])  # fmt: skip
    assert r.exit_code == 2
    assert 0 <= r.output.index("Expected cost before the run") < r.output.index("the run started")
    assert "| prover A | mockllm/model |" in r.output
    plain = CliRunner().invoke(app, ["language", "compare", "--steps", "4", "--n", "1",
                                     "--protocol", "judge-alone", "--json"])  # fmt: skip
    assert "Expected cost" not in plain.output  # no model, nothing to pay: no notice


def test_dollars_come_from_the_price_file(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    cost = {"input": 2.0, "output": 8.0, "input_cache_write": 0, "input_cache_read": 0}
    prices.write_text(json.dumps({"openai/gpt-4o-mini": cost}))
    args = ["--judge", "model:openai/gpt-4o-mini", "--protocol", "bisection", "--dry-run", "--json"]
    r = CliRunner().invoke(app, ["language", "compare", "--steps", "4", "--n", "1", *args,
                                 "--model-cost-config", str(prices)])  # fmt: skip
    assert r.exit_code == 0, r.output
    judge = json.loads(r.stdout)["estimate"]["judge model:openai/gpt-4o-mini"]
    expected = (2.0 * judge["input_tokens"] + 8.0 * judge["output_tokens"]) / 1e6
    assert judge["dollars"] == pytest.approx(expected) and judge["dollars"] > 0


@pytest.mark.parametrize("protocol", ["cross-examination", "bisection"])
def test_on_gsm8k_a_model_b_is_counted_as_the_run_counts_it(protocol: str) -> None:
    grid = {"judges": ("calculator",), "protocols": (protocol,),
            "models": {"B": mock(last_step_disputer)}}  # fmt: skip
    rows = asyncio.run(compare_gsm8k(None, limit=3, seed=0, **grid))  # the demo problems
    e = estimate_gsm8k(None, limit=3, **grid)
    assert all(r["accepted"] is not None for r in rows) and len(rows) == 6
    got = totals(rows)
    assert (got["B"], got["judge"]) == (e["prover B"].calls, e["judge calculator"].calls)
    assert got["B"] >= len(rows) and got["A"] == 0  # A is the scripted solution: no model
    assert e["prover A"].model is None
    assert got["judge_tokens"] == pytest.approx(e["judge calculator"].input_tokens)
