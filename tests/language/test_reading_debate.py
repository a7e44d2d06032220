"""Debates over QuALITY-style questions, quotes verified by V (fixtures the tests write)."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.judges import StepQuestion
from proofgames.language.compare import cells
from proofgames.language.costs import JudgeLedger
from proofgames.language.gsm8k import DataError
from proofgames.language.protocols import cross_examination
from proofgames.language.provers import ScriptedA
from proofgames.language.reading import load_quality
from proofgames.language.reading_debate import (
    QuoteB,
    QuoteChecked,
    QuoteJudge,
    argument,
    reading_games,
)

from .test_reading import jsonl

ARTICLE = (
    "The lighthouse keeper counted ships every night. None came in the storm of 1911. "
    "His daughter painted the tower red in the spring."
)
QUESTIONS = [
    {"question": "What did the keeper count?", "options": ["gulls", "ships", "waves"],
     "gold_label": 2},
    {"question": "What colour was the tower painted?", "options": ["red", "white"],
     "gold_label": 1},
    {"question": "When did no ships come?", "options": ["in the spring", "in the storm of 1911"],
     "gold_label": 2},
]  # fmt: skip


@pytest.fixture
def quality(tmp_path):
    return jsonl(tmp_path / "quality.jsonl", {"article": ARTICLE, "questions": QUESTIONS},
                 {"title": "x", "article": ARTICLE, "questions": QUESTIONS[:1]})  # fmt: skip


def judged(step: str, premises: tuple[str, ...] = ()) -> float:
    judge = QuoteChecked(QuoteJudge(), ARTICLE)
    return asyncio.run(judge.judge(StepQuestion("", premises, step))).p_yes


def test_the_judge_sees_quotes_marked_and_a_provers_own_marks_are_rechecked():
    assert judged("It says <quote>counted   ships every\nnight</quote>.") == 1.0
    assert judged("It says <quote>counted gulls</quote>.") == 0.0
    assert judged("It says <v_quote>counted gulls</v_quote>.") == 0.0  # a forged mark
    assert judged("So the answer is (B).", ("<quote>counted ships</quote>",)) == 1.0
    assert judged("So the answer is (B).") == 0.0  # nothing quoted: nothing to go on


@pytest.mark.slow  # 80 debates: 1.4 CPU s, 10 s wall at load 9
def test_every_protocol_runs_on_quality_questions_and_the_quote_judge_catches_misquotes(quality):
    rows = asyncio.run(reading_games(quality, limit=None, judges=("quotes", "calculator")))
    summary = {(c["protocol"], c["judge"]): c for c in cells(rows)}
    assert len(rows) == 5 * 2 * 2 * 4  # protocols x judges x questions x (honest, lying)
    for protocol in ("cross-examination", "bisection", "whole-transcript", "consultancy"):
        c = summary[(protocol, "quotes")]
        assert (c["completeness"], c["soundness_error"]) == (1.0, 0.0), protocol
        blind = summary[(protocol, "calculator")]  # no arithmetic to check: accepts all
        assert blind["soundness_error"] == 1.0
    alone = summary[("judge-alone", "quotes")]  # the bare answer quotes nothing
    assert (alone["completeness"], alone["soundness_error"]) == (0.0, 0.0)
    lying = [r for r in rows if r["protocol"] == "cross-examination" and not r["truth"]]
    assert all(r["disputed_step"] == 0 for r in lying)  # B disputes the misquote itself


@pytest.mark.parametrize(
    "quote, words",
    [("counted ships\u200b", "invisible"), ("ships " * 5000, "characters")],
)
def test_a_hostile_quote_is_as_forfeit_with_the_reason(quality, quote, words):
    item = load_quality(quality)[0]
    sent = argument(item, item.answer, "counted ships").to_dict()
    sent["steps"][0]["text"] = f"The passage says <quote>{quote}</quote>."

    class Hostile(ScriptedA):
        async def transcript(self, task: str) -> object:
            return sent  # plain data, as a program would send it

    ledger = JudgeLedger(QuoteChecked(QuoteJudge(), ARTICLE))
    task = " ".join(argument(item, item.answer, "x").task)
    out = asyncio.run(cross_examination(task, Hostile(argument(item, 0, "x")), QuoteB(ARTICLE),
                                        ledger))  # fmt: skip
    assert (out.forfeit, out.verdict) == ("A", 0) and words in out.reason


def test_quote_b_disputes_and_halves_on_the_source():
    b = QuoteB(ARTICLE)
    honest = argument(_item(), 1, "counted ships every night")
    lie = argument(_item(), 0, "counted gulls every night")
    assert asyncio.run(b.dispute("", honest)) is None
    assert asyncio.run(b.dispute("", lie)) == 0
    assert asyncio.run(b.half("", 0, lie.steps[0])) == "first"
    assert asyncio.run(b.half("", 1, honest.steps[1])) == "second"


def _item():
    from proofgames.language.reading import ReadingItem

    return ReadingItem(0, ARTICLE, "What did the keeper count?", ("gulls", "ships"), 1)


def test_the_command_prints_the_table_and_refuses_a_bad_file(quality, tmp_path):
    r = CliRunner().invoke(app, ["language", "reading", str(quality), "--protocol", "consultancy"])
    assert r.exit_code == 0, r.output
    assert "| consultancy | quotes | 8 | 1.000 [0.510, 1.000] | 0.000 [0.000, 0.490] |" in r.output
    r = CliRunner().invoke(app, ["language", "reading", str(quality), "--json", "--n", "1"])
    assert len(json.loads(r.output)["debates"]) == 5 * 6
    gpqa = jsonl(tmp_path / "g.jsonl", {"Question": "q", "Correct Answer": "a",
                                        "Incorrect Answer 1": "b", "Incorrect Answer 2": "c",
                                        "Incorrect Answer 3": "d"})  # fmt: skip
    r = CliRunner().invoke(app, ["language", "reading", str(gpqa)])
    assert r.exit_code == 2 and "the field 'article' is missing" in r.output
    with pytest.raises(DataError, match="QuALITY-style file"):
        asyncio.run(reading_games(tmp_path / "none.jsonl", limit=1))
