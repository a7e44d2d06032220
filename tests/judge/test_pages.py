"""The judge server's pages through plain forms (no JavaScript), and its commands."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import select, update

from proofgames.cli import main
from proofgames.judge.accounts import token_user
from proofgames.judge.db import make_engine, migrate
from proofgames.judge.models import Answer, Assignment, Study

from .judge_support import PASSWORD, WARNING, csrf, login

pytestmark = pytest.mark.filterwarnings(WARNING)


def admin_client(judge):
    client = judge.client()
    assert login(client, "admin@example.org").headers["location"] == "/admin"
    return client


def test_an_admin_creates_a_study_and_invites_through_forms(judge):
    admin = admin_client(judge)
    token = csrf(admin.get("/admin").text)
    r = admin.post("/admin/studies", data={"name": "pilot", "k": "3", "csrf_token": token})
    assert r.status_code == 200 and "pilot" in r.text  # followed to the study's page
    with judge.sessions() as db:
        study = db.scalars(select(Study).where(Study.name == "pilot")).one()
    assert study.k == 3
    taken = admin.post("/admin/studies", data={"name": "pilot", "k": "3", "csrf_token": token})
    assert taken.status_code == 422 and "exists already" in taken.text
    bad_k = admin.post("/admin/studies", data={"name": "x", "k": "0", "csrf_token": token})
    assert bad_k.status_code == 422 and "k (answers per question)" in bad_k.text
    r = admin.post(
        f"/admin/studies/{study.id}/invitations",
        data={"email": "new@example.org", "csrf_token": token},
    )
    assert 'id="invite-url"' in r.text and "/invite/" in r.text


def test_a_rater_answers_without_javascript_and_with_htmx(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    judge.post_question("d1", "So 35 - 6 = 29")
    rater = judge.rater("alice@example.org")
    page = rater.get("/queue").text
    assert "So 7 * 5 = 35" in page and "3 + 4 = 7" in page and 'name="shown_sha256"' in page
    form = {
        "answer": "yes",
        "confidence": "5",
        "elapsed_ms": "1234",
        "csrf_token": csrf(page),
        "shown_sha256": page.split('name="shown_sha256" value="')[1].split('"')[0],
    }
    plain = rater.post("/queue/1/answer", data=form, follow_redirects=False)
    assert plain.status_code == 303 and plain.headers["location"] == "/queue?after=1"
    again = rater.post("/queue/1/answer", data=form, headers={"hx-request": "true"})
    assert "That answer was saved already." in again.text and "<html" not in again.text
    assert "So 35 - 6 = 29" in again.text  # the next step, as an htmx fragment
    missing = rater.post("/queue/2/answer", data={**form, "answer": ""})
    assert missing.status_code == 422 and "choose yes, no or can" in missing.text
    with judge.sessions() as db:
        answers = db.scalars(select(Answer)).all()
    assert [(a.yes, a.confidence, a.elapsed_ms) for a in answers] == [(True, 5, 1234)]


def test_an_invitation_works_once(judge):
    r = judge.client().post(
        f"/api/v1/studies/{judge.study.id}/invitations",
        json={"email": "bob@example.org"},
        headers=judge.auth,
    )
    token = r.json()["token"]
    client = judge.client()
    page = client.get(f"/invite/{token}").text
    short = client.post(f"/invite/{token}", data={"password": "short", "csrf_token": csrf(page)})
    assert short.status_code == 422 and "at least 10 characters" in short.text
    ok = client.post(
        f"/invite/{token}",
        data={"password": PASSWORD, "csrf_token": csrf(page)},
        follow_redirects=False,
    )
    assert ok.headers["location"] == "/queue"
    used = judge.client().get(f"/invite/{token}")
    assert used.status_code == 404 and "used already" in used.text


def test_the_token_command_prints_a_working_token(judge, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["judge", "token", "--db", str(tmp_path / "judge.db"), "--label", "runner"])
    assert done.value.code == 0
    token = capsys.readouterr().out.strip()
    with judge.sessions() as db:
        assert token_user(db, token).email == "admin@example.org"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["judge", "serve", "--db", "mysql://x/y"], "unsupported database 'mysql'"),
        (["judge", "serve", "--port", "70000"], "--port must be in [0, 65535]"),
        (["judge", "token", "--db", "nosuch://"], "unsupported database"),
    ],
)
def test_bad_options_get_one_clear_error(args, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 2
    assert words in capsys.readouterr().err


def test_a_judge_database_without_admins_gets_no_admin_from_the_token_command(tmp_path, capsys):
    engine = make_engine(f"sqlite:///{tmp_path / 'new.db'}")
    migrate(engine)
    engine.dispose()
    with pytest.raises(SystemExit) as done:
        main(["judge", "token", "--db", str(tmp_path / "new.db")])
    assert done.value.code == 2
    assert capsys.readouterr().err.startswith("error: no admin in sqlite:///")


def test_a_late_answer_is_explained_and_the_next_step_shown(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    page = alice.get("/queue").text
    with judge.sessions() as db:  # alice walked away: her lease runs out, bob gets it too
        db.execute(update(Assignment).values(created_at=dt.datetime(2000, 1, 1)))
        db.commit()
    bob_page = bob.get("/queue").text
    assert "So 7 * 5 = 35" in bob_page

    def form(html):
        shown = html.split('name="shown_sha256" value="')[1].split('"')[0]
        return {"answer": "no", "confidence": "2", "csrf_token": csrf(html), "shown_sha256": shown}

    assert (
        bob.post("/queue/2/answer", data=form(bob_page), follow_redirects=False).status_code == 303
    )
    late = alice.post("/queue/1/answer", data=form(page), headers={"hx-request": "true"})
    assert late.status_code == 200 and "Not recorded: this question has closed" in late.text
    assert "Nothing to answer right now" in late.text
    plain = alice.post("/queue/1/answer", data=form(page))
    assert plain.status_code == 409 and "Not recorded" in plain.text
