"""Protocols against their baselines in one run (``proofgames language compare``)."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import OracleError, ProtocolError
from proofgames.language.compare import cells, compare_generated, compare_gsm8k, table
from proofgames.language.experiments import PROTOCOLS, summarize


@pytest.fixture(scope="module")
def generated_rows():
    return asyncio.run(compare_generated(12, 6, seed=3, judges=("calculator", "scripted:0.2")))


def test_every_protocol_meets_every_judge_on_the_same_problems(generated_rows):
    by_cell: dict[tuple[str, str], list[tuple[int, bool]]] = {}
    for r in generated_rows:
        by_cell.setdefault((r["protocol"], r["judge"]), []).append((r["item"], r["truth"]))
    assert sorted(by_cell) == sorted(
        (p, j) for p in PROTOCOLS for j in ("calculator", "scripted:0.2")
    )
    first = next(iter(by_cell.values()))
    assert all(debated == first for debated in by_cell.values())  # paired: same problems
    assert len(first) == 12  # 6 problems, each debated twice


def test_the_judge_alone_cannot_check_a_bare_answer_but_debate_can(generated_rows):
    summary = {(c["protocol"], c["judge"]): c for c in cells(generated_rows)}
    alone, bisection = summary[("judge-alone", "calculator")], summary[("bisection", "calculator")]
    assert (alone["completeness"], alone["soundness_error"]) == (1.0, 1.0)
    assert (bisection["completeness"], bisection["soundness_error"]) == (1.0, 0.0)
    assert alone["judge_calls"] == bisection["judge_calls"] == 1.0


def test_a_cell_is_the_summary_of_its_own_debates(generated_rows):
    for c in cells(generated_rows):
        mine = [
            r for r in generated_rows if (r["protocol"], r["judge"]) == (c["protocol"], c["judge"])
        ]
        expected = summarize(mine)
        assert {k: c[k] for k in expected} == expected
        assert c["cost_usd"] is None  # no judge here reports a price


def test_the_table_has_one_line_per_cell_with_intervals(generated_rows):
    summaries = cells(generated_rows)
    lines = table(summaries).splitlines()
    assert len(lines) == 2 + len(summaries)
    assert (
        "| judge-alone | calculator | 12 | 1.000 [0.610, 1.000] | 1.000 [0.610, 1.000] |"
        in table(summaries)
    )


def test_gsm8k_demo_problems_compare_too():
    rows = asyncio.run(compare_gsm8k(None, limit=3, judges=("calculator",),
                                     protocols=("cross-examination", "judge-alone")))  # fmt: skip
    summary = {c["protocol"]: c for c in cells(rows)}
    assert summary["cross-examination"]["soundness_error"] == 0.0
    assert summary["judge-alone"]["soundness_error"] == 1.0


@pytest.mark.parametrize(
    "protocols, judges, words",
    [
        (("bisection", "telepathy"), ("calculator",), "unknown protocol 'telepathy'"),
        (("bisection",), ("calculator", "calculator"), "each judge once"),
        ((), ("calculator",), "at least one protocol"),
    ],
)
def test_a_bad_grid_is_refused_before_any_debate(protocols, judges, words):
    with pytest.raises(ProtocolError, match=words):
        asyncio.run(compare_generated(10, 1, seed=0, judges=judges, protocols=protocols))


def test_the_command_prints_the_table_or_json():
    runner = CliRunner()
    r = runner.invoke(app, ["language", "compare", "--steps", "10", "--n", "2",
                            "--judge", "calculator", "--protocol", "judge-alone"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[2].startswith("| judge-alone | calculator | 4 |")
    r = runner.invoke(app, ["language", "compare", "--n", "2", "--json", "--judge", "calculator"])
    data = json.loads(r.output)
    assert [c["protocol"] for c in data["cells"]] == list(PROTOCOLS)
    assert len(data["debates"]) == len(PROTOCOLS) * 4


@pytest.mark.parametrize(
    "args, words",
    [
        (["--n", "0"], "--n must be an int"),
        (["--judge", "nope"], "unknown judge 'nope'"),
        (["--steps", "10", "demo.jsonl"], "not both"),
    ],
)
def test_the_command_refuses_bad_input_in_one_line(args, words):
    r = CliRunner().invoke(app, ["language", "compare", *args])
    assert r.exit_code == 2
    assert words in r.output and "Traceback" not in r.output


def test_models_in_roles_a_and_b():
    """A model A writing its own solution, and a model B, through the same comparison."""
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai.model import get_model

    from .test_inspect import ledger_solver_output, reply

    a = get_model("mockllm/model", custom_outputs=ledger_solver_output, memoize=False)
    only = {"judges": ("calculator",), "protocols": ("cross-examination",)}
    rows = asyncio.run(compare_generated(6, 2, seed=0, models={"A": a}, **only))
    by_truth = {r["truth"]: r for r in rows}
    assert by_truth[True]["accepted"] is True  # it solved the ledger: right answer, accepted
    assert by_truth[False]["accepted"] is False  # argued for the wrong answer: caught
    assert all(r["prover_tokens"] > 0 for r in rows)
    conceding = get_model("mockllm/model", custom_outputs=lambda *x: reply("0"), memoize=False)
    rows = asyncio.run(compare_generated(6, 2, seed=0, judges=("calculator",),
                                         protocols=("cross-examination",),
                                         models={"B": conceding}))  # fmt: skip
    (cell,) = cells(rows)
    assert cell["soundness_error"] == 1.0  # a B that concedes lets every lie through


def test_a_model_a_needs_reference_answers(tmp_path):
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    row = {"question": "Tom has 3 apples. He buys 2 more. How many?",
           "ground_truth": "3+2=<<3+2=5>>5\nA: 5",
           "6b_finetuning": {"is_correct": True, "solution": "3+2=<<3+2=5>>5\nA: 5"}}  # fmt: skip
    path = tmp_path / "example_model_solutions.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(ProtocolError, match="reference solutions"):
        models = {"A": "mockllm/model"}
        asyncio.run(compare_gsm8k(path, limit=1, judges=("calculator",), models=models))
    r = CliRunner().invoke(app, ["language", "compare", "--prover-a", "gpt"])
    assert r.exit_code == 2 and "takes model:NAME" in r.output


def test_a_model_a_on_gsm8k_is_judged_by_its_own_answer():
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai.model import get_model

    from .test_inspect import reply

    rambling = get_model("mockllm/model", custom_outputs=lambda *x: reply("I think 42."),
                         memoize=False)  # fmt: skip
    rows = asyncio.run(compare_gsm8k(None, limit=2, judges=("calculator",),
                                     protocols=("bisection",), models={"A": rambling}))  # fmt: skip
    assert len(rows) == 4 and all(r["truth"] is False for r in rows)  # it wrote no solution
    assert all(r["accepted"] is False and "A loses" in r["reason"] for r in rows)


def test_a_bad_price_file_is_refused(tmp_path):
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from proofgames.language.compare import load_prices

    bad = tmp_path / "prices.json"
    cost = {"input": 1, "output": 1, "input_cache_write": 0, "input_cache_read": 0}
    bad.write_text(json.dumps({"no-such/model": cost}))
    with pytest.raises(ProtocolError, match="not usable"):
        load_prices(bad)
    bad.write_text("{not json")
    r = CliRunner().invoke(app, ["language", "compare", "--model-cost-config", str(bad)])
    assert r.exit_code == 2 and "cannot read the model-cost config" in r.output


def test_best_of_n_makes_a_stronger_a_rated_and_plotted(tmp_path):
    """Sample 0 of the mock model rambles, the others solve the ledger: best-of-2 wins."""
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai.model import get_model

    from proofgames.language.strength import ratings, strength_figure

    from .test_inspect import ledger_solver_output, reply

    def sampled(messages, tools, tool_choice, config):
        if config.seed == 0:
            return reply("I think it is about 40.")
        return ledger_solver_output(messages)

    a = get_model("mockllm/model", custom_outputs=sampled, memoize=False)
    rows = asyncio.run(compare_generated(6, 3, seed=0, judges=("calculator",),
                                         protocols=("cross-examination",), models={"A": a},
                                         best_of=(1, 2)))  # fmt: skip
    by = {c["strength"]: c for c in cells(rows)}
    debated = {n: [r for r in rows if r["strength"] == n] for n in (1, 2)}
    assert all(r["accepted"] is False for r in debated[1])  # sample 0 wrote no solution
    # best of 2: the honest prompt's solutions are accepted; arguing for the wrong answer,
    # the mock's answer line contradicts its steps and A forfeits
    assert sum(r["accepted"] is True for r in debated[2]) == 3
    assert by[1]["accuracy"] == 1.0 and by[2]["accuracy"] == 1.0  # V is right either way
    rated = ratings(rows)
    assert rated["A best-of-2"].rating > rated["A best-of-1"].rating
    strength_figure(cells(rows), tmp_path / "strength.png")
    assert (tmp_path / "strength.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ProtocolError, match="N in"):
        asyncio.run(compare_generated(6, 1, seed=0, judges=("calculator",), models={"A": a},
                                      best_of=(0,)))  # fmt: skip
    r = CliRunner().invoke(app, ["language", "compare", "--best-of", "4"])
    assert r.exit_code == 2 and "needs a model as A" in r.output


def test_a_cell_whose_judge_always_fails_is_counted_and_the_rest_measured(monkeypatch):
    from proofgames.judges import make_judge
    from proofgames.judges.interface import JudgeFailed

    class Failing:
        name, kind = "failing", "model"

        async def judge(self, question):
            raise JudgeFailed("the judge answered neither yes nor no")

    def judges(spec: str, seed: int) -> object:
        return Failing() if spec == "model:bad" else make_judge(spec, seed)

    monkeypatch.setattr("proofgames.language.experiments.make_judge", judges)
    rows = asyncio.run(compare_generated(10, 2, seed=0, judges=("calculator", "model:bad"),
                                         protocols=("bisection",)))  # fmt: skip
    by = {c["judge"]: c for c in cells(rows)}
    assert by["model:bad"]["stopped"] == 4 and by["calculator"]["stopped"] == 0
    assert by["calculator"]["soundness_error"] == 0.0
    with pytest.raises(OracleError, match="no debate finished"):
        asyncio.run(compare_generated(10, 1, seed=0, judges=("model:bad",),
                                      protocols=("bisection",)))  # fmt: skip


def test_each_gsm8k_debate_draws_its_own_judge_errors():
    """Every debate's scripted judge once drew from the run's seed: the same first draw in
    every debate, so a judge that errs 40% of the time erred in all or none of them."""
    from proofgames.language.experiments import gsm8k_games

    rows = asyncio.run(gsm8k_games(None, limit=12, protocol="cross-examination",
                                   judge="scripted:0.4", seed=3))  # fmt: skip
    judged = [r["accepted"] for r in rows if r["judge_calls"]]
    assert len(judged) >= 6 and len(set(judged)) == 2


@pytest.mark.slow
def test_the_scripted_experiment_on_200_gsm8k_problems_every_protocol():
    """The offline regression run of issue 37: 200 problems, every protocol, two judges."""
    from .test_parsers import GSM8K

    path = GSM8K / "test.jsonl"
    if not path.is_file():
        pytest.skip(f"GSM8K problems not found at {path}")
    rows = asyncio.run(compare_gsm8k(path, limit=200, seed=0))
    by = {(c["protocol"], c["judge"]): c for c in cells(rows)}
    assert len(by) == 10 and all(c["debates"] == 381 for c in by.values())  # 19 unplantable
    for protocol in ("cross-examination", "bisection", "whole-transcript"):
        assert by[(protocol, "calculator")]["soundness_error"] == 0.0
    assert by[("judge-alone", "calculator")]["soundness_error"] == 1.0
    assert 0.0 < by[("cross-examination", "scripted:0.1")]["soundness_error"] < 0.3


def test_figure1_settles_the_disputed_step_beside_the_plain_protocols():
    from proofgames.analysis.intervals import wilson_interval
    from proofgames.language.report import figure1_rates

    grid = {"judges": ["scripted:0.1", "calculator"], "protocols": ["bisection", "consultancy"]}
    rows = asyncio.run(compare_generated(12, 60, seed=3, figure1=True, **grid))
    played = {(r["protocol"], r["judge"]) for r in rows}
    assert ("bisection + Figure 1", "scripted:0.1") in played
    assert ("bisection + Figure 1", "calculator") not in played  # B cannot model it
    assert ("consultancy + Figure 1", "scripted:0.1") not in played  # no disputed step
    fig1 = [r for r in rows if r["protocol"] == "bisection + Figure 1"]
    lies = [r for r in fig1 if not r["truth"]]
    accepted = sum(bool(r["accepted"]) for r in lies)
    low, high = wilson_interval(accepted, len(lies), confidence=0.999)
    assert low <= figure1_rates(0.1)["exact_soundness_error"] <= high
    honest = [r for r in fig1 if r["truth"]]
    assert sum(bool(r["accepted"]) for r in honest) / len(honest) >= 0.6 - 0.15  # theorem: 0.6


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"judges": ["calculator"]}, "scripted:E"), ({"protocols": ["consultancy"]}, "bisection")],
)
def test_figure1_without_a_disputed_step_or_a_modelled_judge_is_refused(kwargs, words):
    args = {"judges": ["scripted:0.1"], "protocols": ["bisection"], **kwargs}
    with pytest.raises(ProtocolError, match=words):
        asyncio.run(compare_generated(8, 2, seed=0, figure1=True, **args))


def test_figure1_on_gsm8k_is_refused_in_one_line():
    res = CliRunner().invoke(app, ["language", "compare", "--figure1", "--n", "2"])
    assert res.exit_code == 2 and "--figure1 plays on the generated task" in res.output


@pytest.mark.parametrize("taste", ["sound", "perverse"])
def test_a_model_preference_judge_picks_as_sample(taste, tmp_path, monkeypatch):
    """Best-of-2 chosen by a model judge's P[yes] on the whole transcript (mock outputs).

    Sample 0 slips (one annotation wrong, the answer wrong with it), sample 1 solves the
    ledger; the sound judge prefers the solution that checks, the perverse one the slip.
    """
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    import re

    from inspect_ai.model import get_model

    from proofgames.judges import annotation_holds
    from proofgames.judges.model import ModelJudge

    from .test_inspect import ledger_solver_output, reply

    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))

    def sampled(messages, tools, tool_choice, config):
        solved = ledger_solver_output(messages).completion
        if config.seed != 0:
            return reply(solved)
        lines = solved.splitlines()  # slip on the last step: its value and the answer
        value = int(re.search(r"=(\d+)>>", lines[-2]).group(1))
        lines[-2] = re.sub(rf"={value}>>{value}$", f"={value + 1}>>{value + 1}", lines[-2])
        lines[-1] = f"Answer: {value + 1}"
        return reply("\n".join(lines))

    def preferring(messages, *args):
        text = messages[-1].text
        ok = all(annotation_holds(e, v) for e, v in re.findall(r"<<([^<>=]*)=([^<>]*)>>", text))
        likes = ok if taste == "sound" else not ok
        return reply("yes" if likes else "no", 0.9 if likes else 0.1)

    a = get_model("mockllm/model", custom_outputs=sampled, memoize=False)
    judge = ModelJudge(get_model("mockllm/model", custom_outputs=preferring, memoize=False))
    rows = asyncio.run(compare_generated(6, 2, seed=0, judges=("calculator",),
                                         protocols=("cross-examination",), models={"A": a},
                                         best_of=(2,), prefer=judge))  # fmt: skip
    assert len(rows) == 4
    if taste == "sound":  # the honest prompt's solution is chosen: right, and accepted
        assert sum(r["accepted"] is True and r["truth"] is True for r in rows) == 2
    else:  # the slip is chosen in every debate: no answer A commits to is right
        assert not any(r["truth"] for r in rows)
        assert any(r["reason"] == "the judge rejected step 6" for r in rows)  # B found it
    if taste == "sound":  # the same choice as the opponent's score, but A paid the judge
        plain = asyncio.run(compare_generated(6, 2, seed=0, judges=("calculator",),
                                              protocols=("cross-examination",),
                                              models={"A": a}, best_of=(2,)))  # fmt: skip
        assert [r["accepted"] for r in plain] == [r["accepted"] for r in rows]
        extra = [r["cost_usd"] - p["cost_usd"] for r, p in zip(rows, plain, strict=True)]
        assert extra == pytest.approx([0.002] * 4)  # 2 judge calls at $0.001 a debate
        assert all(
            r["prover_tokens"] > p["prover_tokens"] for r, p in zip(rows, plain, strict=True)
        )
    r = CliRunner().invoke(app, ["language", "compare", "--prefer", "calculator"])
    assert r.exit_code == 2 and "give --best-of" in r.output
