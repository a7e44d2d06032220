"""QuALITY- and GPQA-style debates, quotes checked by V (on fixtures the tests write)."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.judges import StepQuestion
from proofgames.judges.interface import Judgement
from proofgames.language.compare import cells
from proofgames.language.costs import JudgeLedger
from proofgames.language.gsm8k import DataError
from proofgames.language.protocols import cross_examination
from proofgames.language.provers import ScriptedA
from proofgames.language.reading import NO_SOURCE, load_quality
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
    neither = jsonl(tmp_path / "n.jsonl", {"question": "q", "options": ["a", "b"]})
    r = CliRunner().invoke(app, ["language", "reading", str(neither)])
    assert r.exit_code == 2 and "line 1: neither a QuALITY-style record" in r.output
    assert "'Correct Answer'" in r.output and "Traceback" not in r.output
    with pytest.raises(DataError, match="reading file"):
        asyncio.run(reading_games(tmp_path / "none.jsonl", limit=1))


GPQA = [
    {"Question": "Which gas is noble?", "Correct Answer": "argon", "Incorrect Answer 1":
     "nitrogen", "Incorrect Answer 2": "oxygen", "Incorrect Answer 3": "chlorine"},
    {"Question": "Which planet is largest?", "Correct Answer": "Jupiter", "Incorrect Answer 1":
     "Mars", "Incorrect Answer 2": "Venus", "Incorrect Answer 3": "Mercury", "Subdomain": "x"},
]  # fmt: skip


class Recorder:
    """A judge that says yes and keeps every question it was shown."""

    name, kind = "recorder", "scripted"

    def __init__(self) -> None:
        self.seen: list[StepQuestion] = []

    async def judge(self, question: StepQuestion) -> Judgement:
        self.seen.append(question)
        return Judgement(p_yes=1.0)


def test_with_no_source_quotes_are_marked_unverifiable_and_the_judge_is_told():
    inner = Recorder()
    judge = QuoteChecked(inner, None)
    step = "An expert source says <quote>argon</quote>, not <v_quote>neon</v_quote>."
    asyncio.run(judge.judge(StepQuestion("Which gas is noble?", ("<u_quote>x</u_quote>",), step)))
    (seen,) = inner.seen
    assert seen.task.startswith(NO_SOURCE) and seen.task.endswith("Which gas is noble?")
    assert seen.step == ("An expert source says <n_quote>argon</n_quote>, not "
                         "<n_quote>neon</n_quote>.")  # fmt: skip
    assert seen.premises == ("<n_quote>x</n_quote>",)  # a prover's own marks are rechecked
    assert (
        asyncio.run(QuoteChecked(QuoteJudge(), None).judge(StepQuestion("", (), step))).p_yes == 0
    )
    with_source = QuoteChecked(Recorder(), ARTICLE)
    asyncio.run(with_source.judge(StepQuestion("q", (), "<quote>counted ships</quote>")))
    assert NO_SOURCE not in with_source.inner.seen[0].task  # type: ignore[attr-defined]


def test_gpqa_questions_run_through_every_protocol(tmp_path):
    path = jsonl(tmp_path / "gpqa.jsonl", *GPQA)
    rows = asyncio.run(reading_games(path, limit=None, judges=("quotes", "calculator")))
    assert len(rows) == 5 * 2 * 2 * 2 and {r["style"] for r in rows} == {"gpqa"}
    summary = {(c["protocol"], c["judge"]): c for c in cells(rows)}
    for protocol in ("cross-examination", "bisection", "whole-transcript", "consultancy",
                     "judge-alone"):  # fmt: skip
        quotes = summary[(protocol, "quotes")]  # nothing verified: it rejects every argument
        assert (quotes["completeness"], quotes["soundness_error"], quotes["stopped"]) == (0, 0, 0)
        blind = summary[(protocol, "calculator")]  # no arithmetic to check: it accepts all
        assert (blind["completeness"], blind["soundness_error"]) == (1.0, 1.0)
    lying = [r for r in rows if r["protocol"] == "cross-examination" and not r["truth"]]
    assert all(r["disputed_step"] == 1 for r in lying)  # B holds the key: the conclusion
    r = CliRunner().invoke(app, ["language", "reading", str(path), "--protocol", "bisection"])
    assert r.exit_code == 0, r.output
    assert "| bisection | quotes | 4 | 0.000 [0.000, 0.658] | 0.000 [0.000, 0.658] |" in r.output


@pytest.mark.parametrize(
    "change, words",
    [
        ({"Incorrect Answer 2": None}, "line 2: the field 'Incorrect Answer 2' is missing"),
        ({"Question": 5}, "line 2: 'Question' must be a non-empty string"),
        ({"Correct Answer": "  "}, "line 2: 'Correct Answer' must be a non-empty string"),
        ({"Incorrect Answer 3": "Jupiter "}, "line 2: two options are the same text "
                                             "('Incorrect Answer 3')"),
    ],
)  # fmt: skip
def test_a_malformed_gpqa_line_is_refused_naming_its_line_and_field(tmp_path, change, words):
    bad = {k: v for k, v in (GPQA[1] | change).items() if v is not None}
    path = jsonl(tmp_path / "gpqa.jsonl", GPQA[0], bad)
    r = CliRunner().invoke(app, ["language", "reading", str(path)])
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output
