"""Issue 36, defect 9: hostile input gets a clear 4xx naming the problem, never a 500.

Measured on the main of 2026-12-05 (some on PostgreSQL only: it refuses NUL bytes in
text and ids past a 32-bit INTEGER, so SQLite stored what PostgreSQL failed on): a NUL
byte in a login email, a study name, an invited email or a debate id; an id above
2^31 - 1; Unicode digits (``confidence=²``, ``elapsed_ms=¹²³``) that ``str.isdigit``
accepts and ``int`` refuses. ``tests/judge/test_postgres.py`` runs the same requests
against PostgreSQL.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select

from proofgames.judge.models import Answer, Question, Study

from .judge_support import WARNING, Judge, csrf, login

pytestmark = pytest.mark.filterwarnings(WARNING)


def hostile_requests(judge: Judge) -> list[tuple[str, object]]:
    """``(what, response)`` for each hostile request of defect 9."""
    admin, rater = judge.client(), judge.rater("rater@example.org")
    auth = judge.auth
    q = {"task": "t", "premises": [], "step": "s"}
    return [
        ("NUL in a login email",
         judge.client().post("/api/v1/login", json={"email": "a\x00@b.org", "password": "x"})),
        ("NUL in a study name",
         admin.post("/api/v1/studies", json={"name": "s\x00", "k": 1}, headers=auth)),
        ("NUL in an invited email",
         admin.post(f"/api/v1/studies/{judge.study.id}/invitations",
                    json={"email": "b\x00@b.org"}, headers=auth)),
        ("NUL in a debate id",
         admin.post("/api/v1/questions", json={"study": "study", "debate_id": "d\x00",
                                                "question": q}, headers=auth)),
        ("NUL in a study looked up",
         admin.get("/api/v1/questions", params={"study": "s\x00", "debate_id": "d",
                                                 "question_id": "q"}, headers=auth)),
        ("an id past 2^31 - 1", rater.get("/api/v1/assignments/3000000000")),
        ("an export id past 2^31 - 1",
         admin.get("/api/v1/studies/3000000000/export", headers=auth)),
    ]  # fmt: skip


def test_each_hostile_request_is_refused_with_a_reason_and_stores_nothing(judge):
    for what, r in hostile_requests(judge):
        assert r.status_code in (401, 404, 422), (what, r.status_code, r.text)  # type: ignore[attr-defined]
        assert r.json()["error"], what  # type: ignore[attr-defined]
    with judge.sessions() as db:
        assert db.scalar(select(func.count()).select_from(Study)) == 1
        assert db.scalar(select(func.count()).select_from(Question)) == 0


@pytest.mark.parametrize(
    ("confidence", "elapsed"),
    [("\u00b2", "10"), ("5", "\u00b9\u00b2\u00b3"), ("\u0663", ""), ("\uff13", "")],
)
def test_unicode_digits_in_an_answer_form_are_a_422(judge, confidence, elapsed):
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    page = rater.get("/queue").text
    form = {
        "answer": "yes", "confidence": confidence, "elapsed_ms": elapsed,
        "csrf_token": csrf(page),
        "shown_sha256": page.split('name="shown_sha256" value="')[1].split('"')[0],
    }  # fmt: skip
    r = rater.post("/queue/1/answer", data=form)
    field = "confidence must be 1" if not confidence.isascii() else "elapsed_ms must be a whole"
    assert r.status_code == 422 and field in r.text
    with judge.sessions() as db:
        assert db.scalar(select(func.count()).select_from(Answer)) == 0


def test_unicode_digits_for_k_in_the_admin_form_are_refused(judge):
    admin = judge.client()
    assert login(admin, "admin@example.org").headers["location"] == "/admin"
    token = csrf(admin.get("/admin").text)
    r = admin.post("/admin/studies", data={"name": "s2", "k": "\u00b2", "csrf_token": token})
    assert r.status_code == 422 and "k (answers per question)" in r.text
