"""Issue 36, defects 10 and 11: creating admins, deactivating raters, hostile admin calls.

Measured on the main of 2026-12-05: ``--no-demo`` left a server with no admin and no way
to make one; an admin could not create another; a rater could not be deactivated.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import select
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.judge.models import AuditEntry, Membership

from .judge_support import WARNING, Judge, cli, csrf, login, refused
from .test_credentials import NEW, admin_client, form

pytestmark = pytest.mark.filterwarnings(WARNING)


# --- deactivation -------------------------------------------------------------------


def test_an_admin_deactivates_a_rater_in_a_study(judge):
    rater = judge.rater("ann@example.org")
    url = f"/api/v1/studies/{judge.study.id}/raters/2/deactivate"
    first = judge.client().post(url, headers=judge.auth).json()
    again = judge.client().post(url, headers=judge.auth).json()
    assert (first["already"], again["already"]) == (False, True)
    with judge.sessions() as db:
        member = db.scalar(select(Membership).where(Membership.user_id == 2))
        entry = db.scalars(select(AuditEntry).where(AuditEntry.action == "deactivate_rater")).one()
    assert member.deactivated_at is not None and entry.detail["user_id"] == 2
    listed = judge.client().get(f"/api/v1/studies/{judge.study.id}/members", headers=judge.auth)
    assert listed.json()["raters"][0]["deactivated_at"] is not None
    assert (
        judge.client()
        .post(f"/api/v1/studies/{judge.study.id}/raters/1/deactivate", headers=judge.auth)
        .status_code
        == 404
    )
    assert (
        judge.client()
        .post(f"/api/v1/studies/{judge.study.id}/raters/2/promote", headers=judge.auth)
        .status_code
        == 404
    )
    admin = admin_client(judge)
    page = admin.get(f"/admin/studies/{judge.study.id}/raters").text
    assert "deactivated" in page and "Reactivate" in page
    r = form(admin, f"/admin/studies/{judge.study.id}/raters/2/reactivate", page="/admin")
    assert r.status_code == 303
    with judge.sessions() as db:
        assert db.scalar(select(Membership.deactivated_at).where(Membership.user_id == 2)) is None
    # a rater has no admin powers: 403 on the page's form, 401 on the token API
    token = csrf(rater.get("/account").text)
    assert (
        rater.post(
            f"/admin/studies/{judge.study.id}/raters/2/deactivate", data={"csrf_token": token}
        ).status_code
        == 403
    )
    assert rater.post(url).status_code == 401


# --- creating admins ----------------------------------------------------------------


def test_the_command_line_creates_an_admin_for_a_server_without_demo(tmp_path):
    db = str(tmp_path / "judge.db")
    made = cli("judge", "admin", "create", "--db", db, "--email", "Boss@Example.org")
    assert made.exit_code == 0, made.output
    password = made.stdout.strip()
    assert len(password) >= 20 and "admin boss@example.org created" in made.stderr
    judge = Judge(f"sqlite:///{db}")
    assert login(judge.client(), "boss@example.org", password).headers["location"] == "/admin"
    refused(
        cli("judge", "admin", "create", "--db", db, "--email", "boss@example.org"), "exists already"
    )
    refused(
        cli("judge", "admin", "create", "--db", db, "--email", "x\u200b@example.org"), "invisible"
    )
    refused(cli("judge", "admin", "create", "--db", db, "--email", "nobody"), "not an email")
    refused(cli("judge", "admin", "create", "--db", db), "--email is required")
    chosen = CliRunner().invoke(
        app,
        ["judge", "admin", "create", "--db", db, "--email", "c@example.org", "--password-stdin"],
        input="chosen long password\n",
    )
    assert chosen.exit_code == 0 and chosen.stdout == ""
    assert login(judge.client(), "c@example.org", "chosen long password").status_code == 303
    short = CliRunner().invoke(
        app,
        ["judge", "admin", "create", "--db", db, "--email", "d@example.org", "--password-stdin"],
        input="short\n",
    )
    refused(short, "at least 10")
    reset = cli("judge", "admin", "password", "--db", db, "--email", "c@example.org")
    assert reset.exit_code == 0
    assert login(judge.client(), "c@example.org", reset.stdout.strip()).status_code == 303
    refused(cli("judge", "admin", "password", "--db", db, "--email", "z@example.org"), "no account")
    missing = str(tmp_path / "missing.db")
    refused(
        cli("judge", "admin", "password", "--db", missing, "--email", "z@example.org"),
        "does not exist",
    )


def test_an_admin_creates_another_admin_who_chooses_their_password(judge):
    admin = admin_client(judge)
    r = form(admin, "/admin/users", page="/admin/users", email="New@Example.org")
    assert r.status_code == 303
    page = admin.get("/admin/users").text
    link = page.split('id="reset-url">')[1].split("<")[0].removeprefix("http://testserver")
    assert "new@example.org" in page
    person = judge.client()
    token = csrf(person.get(link).text)
    assert person.post(link, data={"password": NEW, "csrf_token": token}).status_code == 200
    assert login(judge.client(), "new@example.org", NEW).headers["location"] == "/admin"
    for email, words in [
        ("new@example.org", "exists already"),
        ("bad", "not an email"),
        ("x\u202e@example.org", "invisible"),
        ("x\x00@example.org", "invisible"),
    ]:
        r = form(admin, "/admin/users", page="/admin/users", email=email)
        assert r.status_code == 422 and words in r.text, (email, r.text[-500:])
    api = judge.client().post(
        "/api/v1/admins", json={"email": "api@example.org"}, headers=judge.auth
    )
    assert (
        api.status_code == 201
        and api.json()["role"] == "admin"
        and "/reset/" in api.json()["reset_url"]
    )
    assert (
        judge.client().post("/api/v1/admins", json={"email": 7}, headers=judge.auth).status_code
        == 422
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/v1/users/3000000000/disable"),
        ("get", "/api/v1/users?page=0"),
        ("get", "/api/v1/users?page=%C2%B2"),
        ("get", "/api/v1/audit?action=%00"),
        ("delete", "/api/v1/tokens/-1"),
        ("get", "/api/v1/studies/99/invitations"),
        ("get", "/api/v1/users?page=99"),
    ],
)
def test_hostile_requests_are_refused_with_a_message(judge, method, path):
    r = getattr(judge.client(), method)(path, headers=judge.auth)
    assert r.status_code in (404, 405, 422) and r.json()["error"], r.text
