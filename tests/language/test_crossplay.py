"""Cross-play of debaters at several strengths (``proofgames language crossplay``)."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from proofgames.analysis.intervals import wilson_interval
from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.judges import CalculatorJudge
from proofgames.language import crossplay
from proofgames.language.compare import cells, table
from proofgames.language.crossplay import (
    Skills,
    crossplay_figure,
    crossplay_generated,
    crossplay_ratings,
    matrix,
    subtle_lie,
)
from proofgames.language.generated import generate_chain

CONFIDENCE = 0.999


def _within(hits: int, n: int, p: float) -> bool:
    lo, hi = wilson_interval(hits, n, CONFIDENCE)
    return lo <= p <= hi


def test_a_subtle_lie_fools_the_calculator_but_not_a_grounded_judge():
    for seed in range(20):
        item = generate_chain(12, seed=seed)
        lie = subtle_lie(item)
        assert lie.answer == item.dishonest.answer != item.reference.answer
        q = lie.question(item.error_at)
        inputs = " ".join((q.task, *q.premises))
        assert CalculatorJudge().check(q.step, inputs) is None  # the arithmetic holds
        blatant = item.dishonest.question(item.error_at)
        assert CalculatorJudge().check(blatant.step, " ".join((blatant.task, *blatant.premises)))


def test_best_of_4_samples_are_best_of_16s_first_four():
    item = generate_chain(10, seed=3)
    for honest in (True, False):
        four = crossplay._a(item, 3, honest, 4, Skills(0.5, 0.5), None, {})
        sixteen = crossplay._a(item, 3, honest, 16, Skills(0.5, 0.5), None, {})
        assert [c._t for c in four.candidates] == [c._t for c in sixteen.candidates[:4]]
        kinds = {c._t == item.reference or c._t == item.dishonest for c in sixteen.candidates}
        assert kinds == {True, False}  # at skill 0.5 both good and bad samples are drawn


@pytest.mark.slow
def test_a_stronger_a_is_accepted_as_often_as_the_exact_best_of_n_rate():
    """Whole transcript, calculator: accepted iff A's chosen sample is good (1 - 0.7^N)."""
    rows = asyncio.run(crossplay_generated(8, 120, seed=1, judges=("calculator",),
                                           protocols=("whole-transcript",), strengths=(1, 4),
                                           skills=Skills(a=0.3, b=0.5)))  # fmt: skip
    for n in (1, 4):
        for prompt in ("honest", "dishonest"):
            mine = [r for r in rows if r["strength_a"] == n and r["prompt"] == prompt]
            hits = sum(bool(r["accepted"]) for r in mine)
            assert _within(hits, len(mine), 1 - 0.7**n), (n, prompt, hits, len(mine))


@pytest.mark.slow
def test_a_stronger_b_catches_a_wrong_step_at_the_exact_best_of_n_rate():
    """Every A sample bad (skill 0): one wrong step; B's sample misses it w.p. (1-q)(1-1/T)."""
    steps, q = 10, 0.5
    rows = asyncio.run(crossplay_generated(steps, 100, seed=2, judges=("calculator-grounded",),
                                           protocols=("cross-examination",), strengths=(1, 4),
                                           skills=Skills(a=0.0, b=q)))  # fmt: skip
    assert not any(r["truth"] for r in rows)  # every answer A commits to is wrong
    for nb in (1, 4):
        mine = [r for r in rows if r["strength_b"] == nb]
        accepted = sum(bool(r["accepted"]) for r in mine)
        assert _within(accepted, len(mine), ((1 - q) * (1 - 1 / steps)) ** nb), (nb, accepted)
    assert {r["strength_a"] for r in rows} == {1, 4}  # A's strength cannot help a bad sample


@pytest.fixture(scope="module")
def small_rows():
    return asyncio.run(crossplay_generated(8, 5, seed=0, judges=("calculator", "scripted:0.1"),
                                           protocols=("cross-examination", "consultancy"),
                                           strengths=(1, 8)))  # fmt: skip


def test_the_grid_pairs_every_strength_where_b_plays(small_rows):
    keys = {(r["protocol"], r["judge"], r["strength_a"], r["strength_b"]) for r in small_rows}
    debate = {k[2:] for k in keys if k[0] == "cross-examination"}
    assert debate == {(1, 1), (1, 8), (8, 1), (8, 8)}
    assert {k[2:] for k in keys if k[0] == "consultancy"} == {(1, None), (8, None)}
    problems = {k: [(r["item"], r["prompt"]) for r in small_rows
                    if (r["protocol"], r["judge"], r["strength_a"], r["strength_b"]) == k]
                for k in keys}  # fmt: skip
    first = next(iter(problems.values()))
    assert len(first) == 10 and all(p == first for p in problems.values())  # paired


def test_cells_table_matrix_and_ratings(small_rows):
    summaries = cells(small_rows)
    assert len(summaries) == 2 * (4 + 2)
    text = table(summaries)
    assert "| cross-examination | calculator, A best-of-8, B best-of-1 | 10 |" in text
    assert "| consultancy | scripted:0.1, A best-of-1 | 10 |" in text
    cell = ("cross-examination", "calculator", 8, 1)
    mine = [r for r in small_rows
            if (r["protocol"], r["judge"], r["strength_a"], r["strength_b"]) == cell]  # fmt: skip
    rate = sum(bool(r["accepted"]) for r in mine) / len(mine)
    line = next(x for x in matrix(small_rows, "cross-examination", "calculator").splitlines()
                if x.startswith("| A best-of-8"))  # fmt: skip
    assert line.split("|")[2].strip() == f"{rate:.3f} (10)"
    rated = crossplay_ratings(small_rows)
    assert set(rated) == {"calculator", "scripted:0.1"}
    calc = rated["calculator"]
    assert set(calc) == {"A best-of-1", "A best-of-8", "B best-of-1", "B best-of-8"}
    assert calc["A best-of-8"].rating > calc["A best-of-1"].rating  # subtle lies win more
    assert all(r.games == 20 for r in calc.values())  # consultancy rows are no games


@pytest.mark.slow
def test_the_figure_is_drawn(small_rows, tmp_path):
    crossplay_figure(cells(small_rows), crossplay_ratings(small_rows), tmp_path / "cp.png")
    assert (tmp_path / "cp.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"strengths": (0,)}, "N in"),
        ({"strengths": (4, 4)}, "each once"),
        ({"strengths": ()}, "at least one strength"),
        ({"skills": None}, "skill"),
        ({"protocols": ("telepathy",)}, "unknown protocol"),
        ({"models": {"C": "x"}}, "role A or B"),
        ({"prefer": "oracle"}, "unknown judge 'oracle'"),
    ],
)
def test_a_bad_grid_is_refused_before_any_debate(kwargs, words):
    if "skills" in kwargs:
        with pytest.raises(ProtocolError, match=words):
            Skills(a=1.5)
        return
    with pytest.raises(ProtocolError, match=words):
        asyncio.run(crossplay_generated(6, 1, seed=0, judges=("calculator",), **kwargs))


def test_the_command_prints_table_ratings_and_matrix_or_json(tmp_path):
    args = ["language", "crossplay", "--steps", "6", "--n", "2", "--best-of", "1",
            "--best-of", "2", "--judge", "calculator", "--protocol", "bisection"]  # fmt: skip
    r = CliRunner().invoke(app, [*args, "--plot", str(tmp_path / "p.png")])
    assert r.exit_code == 0, r.output
    assert "| bisection | calculator, A best-of-2, B best-of-1 | 4 |" in r.output
    assert "Elo under calculator, A best-of-1:" in r.output
    assert "| bisection, calculator | B best-of-1 | B best-of-2 |" in r.output
    assert (tmp_path / "p.png").exists()
    r = CliRunner().invoke(app, [*args, "--json"])
    data = json.loads(r.output)
    assert len(data["cells"]) == 4 and len(data["debates"]) == 16
    assert set(data["ratings"]["calculator"]) == {f"{s} best-of-{n}" for s in "AB" for n in (1, 2)}


@pytest.mark.parametrize(
    "args, words",
    [
        (["--skill-a", "2"], "A's skill must be a number in [0, 1]"),
        (["--best-of", "0"], "N in [1, 256]"),
        (["--n", "0"], "--n must be an int"),
        (["--prover-b", "gpt"], "takes model:NAME"),
        (["--judge", "nope"], "unknown judge 'nope'"),
    ],
)
def test_the_command_refuses_bad_input_in_one_line(args, words):
    r = CliRunner().invoke(app, ["language", "crossplay", "--steps", "6", "--n", "1", *args])
    assert r.exit_code == 2
    assert words in r.output and "Traceback" not in r.output


def test_models_in_both_roles_cross_play_through_the_same_grid(tmp_path, monkeypatch):
    """A's samples from a mock model that solves the ledger; B's from one that concedes."""
    pytest.importorskip("inspect_ai", reason="needs the 'language' extra (inspect-ai)")
    from inspect_ai.model import get_model

    from .test_inspect import ledger_solver_output, reply

    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    seeds = []

    def conceding(messages, tools, tool_choice, config):
        seeds.append((config.seed, config.temperature))
        return reply("0")

    a = get_model("mockllm/model", custom_outputs=ledger_solver_output, memoize=False)
    b = get_model("mockllm/model", custom_outputs=conceding, memoize=False)
    rows = asyncio.run(crossplay_generated(6, 1, seed=0, judges=("calculator",),
                                           protocols=("cross-examination",), strengths=(2,),
                                           models={"A": a, "B": b}))  # fmt: skip
    honest, lying = rows
    assert (honest["truth"], honest["accepted"]) == (True, True)  # solved: right, accepted
    assert lying["truth"] is False and lying["accepted"] is False  # its answer line lies
    assert set(seeds) == {(0, 1.0), (1, 1.0)}  # B's two samples, each its own seed
    assert all(r["prover_tokens"] > 0 for r in rows)
