"""Issue 36, defect 1: a false step cannot be made to look true to a rater.

A prover posted ``"So 7 * 5 = \\u202e53\\u202c."``: the rater's page showed "So 7 * 5 =
35.", the rater said yes, and the database stored yes for a step that says 53. Text a
rater would read differently from what V records -- bidirectional controls, zero-width
and other invisible characters, look-alike digits, lone surrogates -- is refused when the
question is posted (422, naming the character), in every field; nothing is stored.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select

from proofgames.judge.models import Question

from .judge_support import WARNING, question

pytestmark = pytest.mark.filterwarnings(WARNING)

DISGUISES = {
    "right-to-left override": "So 7 * 5 = \u202e53\u202c.",
    "right-to-left isolate": "So 7 * 5 = \u206753\u2069.",
    "zero-width space in a number": "So 7 * 5 = 3\u200b6.",
    "fullwidth digit": "So 7 * 5 = \uff13\uff16.",
    "Arabic-Indic digit": "So 7 * 5 = \u0663\u0665.",
    "mathematical bold digit": "So 7 * 5 = \U0001d7d1\U0001d7d3.",
    "superscript digit": "So 7 * 5 = 35\u00b2.",
    "soft hyphen": "So 7 * 5 = 3\u00ad5.",
    "escape sequence": "So 7 * 5 = \x1b[8m36\x1b[0m35.",
    "private use": "So 7 * 5 = \ue00035.",
}


@pytest.mark.parametrize("field", ["step", "task", "premises", "prompt"])
@pytest.mark.parametrize("text", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_disguised_question_is_refused_and_nothing_is_stored(judge, field, text):
    q = question("So 7 * 5 = 35.")
    q[field] = [text] if field == "premises" else text
    q.pop("question_id", None)
    body = {"study": "study", "debate_id": "d", "question": q}
    r = judge.client().post("/api/v1/questions", json=body, headers=judge.auth)
    assert r.status_code == 422, r.text
    assert "invisible, control or look-alike character U+" in r.json()["error"]
    with judge.sessions() as db:
        assert db.scalar(select(func.count()).select_from(Question)) == 0


def test_a_lone_surrogate_is_a_422_not_a_500(judge):
    q = question("So 7 * 5 = 35.")
    q.pop("question_id", None)
    raw = json.dumps({"study": "study", "debate_id": "d", "question": q})
    raw = raw.replace("35.", "35\\udcff.")  # valid JSON, not valid Unicode
    headers = {**judge.auth, "content-type": "application/json"}
    r = judge.client().post("/api/v1/questions", content=raw.encode(), headers=headers)
    assert r.status_code == 422, r.text


def test_visible_unicode_is_posted_and_shown_as_written(judge):
    r = judge.post_question("d", "Café owner: 3 + 4 = 7 € — “seven”.")
    assert r.status_code == 201, r.text
