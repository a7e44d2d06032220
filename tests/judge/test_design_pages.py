"""Issue 36: an admin designs a study and reads its raters' scores in the browser's pages."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select

from proofgames.judge.models import Question, Study

from .judge_support import WARNING, csrf, login

pytestmark = pytest.mark.filterwarnings(WARNING)


@pytest.fixture
def admin(judge):
    client = judge.client()
    assert login(client, "admin@example.org").status_code == 303
    return client


def _form(admin, judge, **fields):
    url = f"/admin/studies/{judge.study.id}/design"
    page = admin.get(url).text
    data = {"csrf_token": csrf(page), "gold_rate": "0.1", "pass_mark": "0.75", **fields}
    return admin.post(url, data=data, follow_redirects=False)


def _study(judge):
    with judge.sessions() as db:
        study = db.get(Study, judge.study.id)
        db.expunge(study)
        return study


def test_the_design_form_saves_every_field_and_redirects(admin, judge):
    r = _form(
        admin, judge, consent="Stop any time.", instructions="Judge one step.", quota="40",
        ordering="random", one_step_per_debate="on", probability="on",
        starts_at="2027-01-02T09:00", pay_cents_per_hour="1500",
    )  # fmt: skip
    assert r.status_code == 303 and r.headers["location"].endswith("/design?saved=design")
    study = _study(judge)
    assert (study.consent, study.quota, study.ordering, study.gold_rate) == (
        "Stop any time.", 40, "random", 0.1,
    )  # fmt: skip
    assert study.one_step_per_debate and study.probability and not study.feedback
    assert study.starts_at.isoformat() == "2027-01-02T09:00:00"
    assert "Design saved." in admin.get(r.headers["location"]).text


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"gold_rate": "0.9"}, "gold_rate must be a number from 0 to 0.5"),
        ({"gold_rate": "1e-3"}, "gold_rate must be a number such as 0.1"),
        ({"quota": "2.5"}, "quota must be a whole number"),
        ({"quota": "\u00b3"}, "quota must be a whole number"),
        ({"ordering": "newest"}, "ordering must be one of"),
        ({"ends_at": "tomorrow"}, "ends_at must be a date and time"),
        ({"consent": "ok \u202e"}, "consent has an invisible"),
    ],
)
def test_a_bad_design_field_is_a_422_naming_it_and_nothing_changes(admin, judge, fields, words):
    r = _form(admin, judge, **fields)
    assert r.status_code == 422 and words in r.text.replace("&#39;", "'"), r.text[-600:]
    study = _study(judge)
    assert (study.gold_rate, study.pass_mark, study.ordering) == (0.0, 0.8, "oldest")


def _known(admin, judge, lines):
    url = f"/admin/studies/{judge.study.id}/known"
    page = admin.get(f"/admin/studies/{judge.study.id}/design").text
    return admin.post(url, data={"csrf_token": csrf(page), "lines": lines}, follow_redirects=False)


def _line(kind="gold", expected=True, **extra):
    row = {
        "kind": kind, "expected": expected, "explanation": "7 * 5 is 35.", "debate_id": "g1",
        "question": {"task": "7 * 5?", "premises": [], "step": "7 * 5 = 35"}, **extra,
    }  # fmt: skip
    return json.dumps(row)


def _count(judge):
    with judge.sessions() as db:
        return db.scalar(select(func.count(Question.id)))


def test_known_questions_are_added_as_json_lines(admin, judge):
    lines = "\n".join(
        [_line(), _line("training", False, debate_id="t1"), _line("qualification", debate_id="q")]
    )
    r = _known(admin, judge, lines)
    assert r.status_code == 303 and r.headers["location"].endswith("saved=questions")
    page = admin.get(r.headers["location"]).text
    assert "training 1 · qualification 1 · gold 1 · attention 0 · work 0" in page


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("{not json", "line 2"),
        (_line("work", None), "line 2: work questions come from the verifier"),
        (_line(expected=None), "line 2: a gold question needs its expected answer"),
        (_line(question={"task": "x", "premises": [], "step": "7 * 5 = \u202e53"}), "line 2"),
        (_line(colour="red"), "line 2: it must be an object"),
        ("[" * 5000 + "]" * 5000, "line 2"),
    ],
)
def test_one_bad_line_adds_no_question_and_names_its_line(admin, judge, bad, words):
    r = _known(admin, judge, _line(debate_id="ok") + "\n" + bad)
    assert r.status_code == 422 and words in r.text.replace("&#39;", "'"), r.text[-600:]
    assert _count(judge) == 0


def test_a_rater_cannot_reach_the_design_or_scores_pages(judge):
    rater = judge.rater("alice@example.org")
    for path in ("design", "scores", "scores.csv"):
        assert rater.get(f"/admin/studies/{judge.study.id}/{path}").status_code == 403


def test_the_scores_page_and_csv_show_each_rater_pseudonymously(admin, judge):
    judge.rater("alice@example.org")
    page = admin.get(f"/admin/studies/{judge.study.id}/scores").text
    assert "#2" in page and "alice@example.org" not in page
    csv = admin.get(f"/admin/studies/{judge.study.id}/scores.csv").text
    assert "alice" not in csv and csv.startswith("rater_id,")
    named = admin.get(f"/admin/studies/{judge.study.id}/scores.csv?emails=true").text
    assert "alice@example.org" in named
