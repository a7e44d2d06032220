"""Issue 36, defect 11 (admin parts) and the audit-log view.

Measured on the main of 2026-12-05: the admin's study page listed every question (962 KB
and over 1 s at 10,000 questions); reloading the page after inviting a rater sent the
invitation again; there was no view of the audit log.
"""

from __future__ import annotations

import random
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, insert, select

from proofgames.judge import accounts, export
from proofgames.judge.admin_pages import summary
from proofgames.judge.flash import FLASH_COOKIE
from proofgames.judge.models import Answer, ApiToken, Assignment, Invitation, Question, User

from .judge_support import PASSWORD, WARNING, Judge, csrf, login, question

pytestmark = pytest.mark.filterwarnings(WARNING)
ADMIN = "admin@example.org"


@pytest.fixture
def judge(tmp_path):
    return Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=3)


def admin_client(judge: Judge):
    client = judge.client()
    assert login(client, ADMIN).status_code == 303
    return client


def add_questions(judge: Judge, n: int) -> None:
    """``n`` questions in the study, inserted in one statement."""
    rows = [
        {
            "study_id": judge.study.id,
            "debate_id": f"d{i}",
            "question_id": "q",
            "payload": {**question(f"So step {i} follows"), "prompt": "Does it follow?"},
            "k": 3,
            "n_answers": 0,
            "closed": False,
            "kind": "work",
        }
        for i in range(n)
    ]
    with judge.sessions() as db:
        db.execute(insert(Question), rows)
        db.commit()


def add_answers(judge: Judge, votes: dict[int, list[bool | None]]) -> None:
    """Answers by raters 1, 2, ... to question ids (None: can't tell)."""
    with judge.sessions() as db:
        raters = [
            accounts.create_user(db, f"r{i}@example.org", "rater", PASSWORD).id for i in range(5)
        ]
        for pk, answers in votes.items():
            for rater, yes in zip(raters, answers, strict=False):
                assignment = Assignment(question_pk=pk, rater_id=rater)
                db.add(assignment)
                db.flush()
                db.add(
                    Answer(
                        assignment_id=assignment.id,
                        question_pk=pk,
                        rater_id=rater,
                        yes=yes,
                        confidence=3,
                        shown_sha256="0" * 64,
                    )
                )
            db.get(Question, pk).n_answers = sum(a is not None for a in answers)
        db.commit()


def test_the_study_page_stays_small_at_10000_questions(judge):
    add_questions(judge, 10_000)
    add_answers(judge, {1: [True, True, False], 10_000: [False, False]})
    admin = admin_client(judge)
    started = time.perf_counter()
    first = admin.get(f"/admin/studies/{judge.study.id}")
    took = time.perf_counter() - started
    assert first.status_code == 200 and len(first.content) < 100_000, len(first.content)
    assert took < 1.0, took
    assert 'id="n-questions">10000<' in first.text and 'id="n-answers">5<' in first.text
    assert "So step 0 follows" in first.text and "So step 50 follows" not in first.text
    assert "Page 1 of 200" in first.text and "?page=2" in first.text
    last = admin.get(f"/admin/studies/{judge.study.id}?page=200")
    assert "So step 9999 follows" in last.text and "So step 9949 follows" not in last.text
    assert last.text.count("<tr>") == 51  # the header and 50 rows
    past = admin.get(f"/admin/studies/{judge.study.id}?page=201")
    assert past.status_code == 404 and "the last page is 200" in past.text
    for bad in ("0", "-1", "x", "%C2%B2", "3000000000"):
        assert admin.get(f"/admin/studies/{judge.study.id}?page={bad}").status_code == 422, bad


def test_the_counts_in_sql_are_those_of_the_export(judge):
    add_questions(judge, 40)
    rng = random.Random(7)
    votes = {
        pk: [rng.choice([True, False, None]) for _ in range(rng.randint(0, 5))]
        for pk in range(1, 41)
    }
    add_answers(judge, votes)
    with judge.sessions() as db:
        study = db.get(type(judge.study), judge.study.id)
        counted, expected = summary(db, study), export.progress(db, study)
    for key in ("questions", "closed", "open", "answers"):
        assert counted[key] == expected[key], key
    mine, theirs = counted["agreement"], expected["agreement"]
    assert mine["items"] == theirs["items"]
    assert mine["pairwise"] == pytest.approx(theirs["pairwise"])
    assert mine["fleiss_kappa"] == pytest.approx(theirs["fleiss_kappa"])


def count(judge: Judge, model) -> int:
    with judge.sessions() as db:
        return int(db.scalar(select(func.count()).select_from(model)))


def test_reloading_after_inviting_sends_nothing_again(judge):
    admin = admin_client(judge)
    page = admin.get(f"/admin/studies/{judge.study.id}")
    data = {"email": "ann@example.org", "csrf_token": csrf(page.text)}
    posted = admin.post(
        f"/admin/studies/{judge.study.id}/invitations", data=data, follow_redirects=False
    )
    assert posted.status_code == 303
    location = posted.headers["location"]
    assert location == f"/admin/studies/{judge.study.id}"  # the link is not in the URL
    assert FLASH_COOKIE in admin.cookies
    stolen = admin.cookies[FLASH_COOKIE]
    shown = admin.get(location)
    assert 'id="invite-url"' in shown.text and "Invited ann@example.org." in shown.text
    link = shown.text.split('id="invite-url">')[1].split("<")[0]
    assert FLASH_COOKIE not in admin.cookies  # deleted: shown once
    reloaded = admin.get(location)
    assert 'id="invite-url"' not in reloaded.text and "Invited" not in reloaded.text
    assert count(judge, Invitation) == 1
    other = admin_client(judge)  # another session (the same admin) gets nothing from it
    other.cookies.set(FLASH_COOKIE, stolen)
    assert 'id="invite-url"' not in other.get(location).text
    rater = judge.client()
    assert rater.get(link.removeprefix("http://testserver")).status_code == 200
    bad = admin_client(judge)
    refused = bad.post(
        f"/admin/studies/{judge.study.id}/invitations",
        data={"email": "x\x00@example.org", "csrf_token": csrf(bad.get("/admin").text)},
    )
    assert refused.status_code == 422 and "invisible" in refused.text


def test_reloading_after_creating_a_token_creates_nothing_again(judge):
    admin = admin_client(judge)
    data = {"label": "runner", "csrf_token": csrf(admin.get("/admin").text)}
    posted = admin.post("/admin/tokens", data=data, follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"] == "/admin"
    shown = admin.get("/admin").text
    token = shown.split('id="new-token">')[1].split("<")[0]
    assert 'id="new-token"' not in admin.get("/admin").text
    assert count(judge, ApiToken) == 2
    with judge.sessions() as db:
        assert accounts.token_user(db, token).email == ADMIN


def test_the_audit_log_is_shown_newest_first_a_page_at_a_time(judge):
    for i in range(60):
        with judge.sessions() as db:
            accounts.audit(db, db.get(User, judge.admin.id), "note", n=i)
            db.commit()
    admin = admin_client(judge)
    page = admin.get("/admin/audit?action=note").text
    assert page.index("&#34;n&#34;: 59") < page.index("&#34;n&#34;: 58")
    assert "&#34;n&#34;: 9}" not in page and "Page 1 of 2 (60)" in page
    assert "action=note&amp;page=2" in page or "page=2&amp;action=note" in page
    second = admin.get("/admin/audit?action=note&page=2").text
    assert "&#34;n&#34;: 9}" in second and "&#34;n&#34;: 10}" not in second
    everything = admin.get("/admin/audit").text
    assert "login" in everything and "create_study" in everything
    assert admin.get("/admin/audit?action=nothing").status_code == 200
    assert admin.get("/admin/audit?action=%00").status_code == 422
    assert admin.get("/admin/audit?action=" + "a" * 41).status_code == 422
    api = judge.client().get("/api/v1/audit?action=note", headers=judge.auth).json()
    assert api["total"] == 60 and api["entries"][0]["detail"] == {"n": 59}


@pytest.mark.parametrize(
    "path",
    [
        "/admin/users",
        "/admin/audit",
        "/admin/studies/1/raters",
        "/admin/studies/1/invitations",
        "/admin/studies/1",
    ],
)
def test_a_rater_gets_403_on_the_admin_pages(judge, path):
    rater = judge.rater("ann@example.org")
    assert rater.get(path).status_code == 403
    token = csrf(rater.get("/account").text)
    for action in ("/admin/users/1/disable", "/admin/users/1/reset", "/admin/tokens/1/revoke"):
        assert rater.post(action, data={"csrf_token": token}).status_code == 403
    assert (
        rater.post("/admin/users", data={"email": "x@example.org", "csrf_token": token}).status_code
        == 403
    )


def test_every_admin_form_needs_its_csrf_token(judge):
    admin = admin_client(judge)
    for action, data in [
        ("/admin/users", {"email": "x@example.org"}),
        ("/admin/users/1/reset", {}),
        ("/admin/tokens/1/revoke", {}),
        (f"/admin/studies/{judge.study.id}/raters/1/deactivate", {}),
        (f"/admin/studies/{judge.study.id}/invitations/1/revoke", {}),
        ("/account/password", {"current_password": PASSWORD, "new_password": "x" * 12}),
        ("/account/sessions/revoke-others", {}),
    ]:
        r = admin.post(action, data={**data, "csrf_token": "0" * 64})
        assert r.status_code == 403 and "CSRF" in r.text, action
