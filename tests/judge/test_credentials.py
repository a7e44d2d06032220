"""Issue 36, defect 10: credentials can be listed, revoked, changed and reset.

Measured on the main of 2026-12-05: the only admin was the demo's (``--no-demo`` left
none); there was no password change or reset; API tokens and invitations could be
neither listed nor revoked; logging in again left the older sessions live; a disabled
user (``users.disabled_at``) could still log in.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import delete, select, update

from proofgames.judge import accounts, credentials
from proofgames.judge.models import ApiToken, AuditEntry, User, WebSession, utcnow

from .judge_support import PASSWORD, WARNING, Judge, csrf, login
from .test_postgres import cluster, pg_url  # noqa: F401  (fixtures of the PostgreSQL test)

pytestmark = pytest.mark.filterwarnings(WARNING)
ADMIN = "admin@example.org"
NEW = "a brand new password"


def admin_client(judge: Judge, email: str = ADMIN, password: str = PASSWORD):
    client = judge.client()
    assert login(client, email, password).status_code == 303
    return client


def form(client, url: str, page: str = "/account", **data: str):
    """Post a form with the CSRF token of ``page``."""
    token = csrf(client.get(page).text)
    return client.post(url, data={**data, "csrf_token": token}, follow_redirects=False)


def second_admin(judge: Judge, email: str = "second@example.org") -> tuple[User, str]:
    with judge.sessions() as db:
        user = credentials.create_admin(db, None, email, PASSWORD)
        return user, accounts.create_api_token(db, user, "second's")


# --- API tokens ---------------------------------------------------------------------


def test_tokens_are_listed_and_revoked_by_their_owner_only(judge):
    _, other = second_admin(judge)
    mine = judge.client().get("/api/v1/tokens", headers=judge.auth).json()["tokens"]
    assert [t["label"] for t in mine] == ["tests"] and judge.token not in str(mine)
    theirs_id = judge.client().get("/api/v1/tokens", headers={"authorization": f"Bearer {other}"})
    theirs = theirs_id.json()["tokens"][0]["id"]
    refused_ = judge.client().delete(f"/api/v1/tokens/{theirs}", headers=judge.auth)
    missing = judge.client().delete("/api/v1/tokens/999999", headers=judge.auth)
    assert refused_.status_code == missing.status_code == 404
    assert refused_.json()["error"].replace(str(theirs), "N") == missing.json()["error"].replace(
        "999999", "N"
    )
    assert (
        judge.client()
        .get("/api/v1/tokens", headers={"authorization": f"Bearer {other}"})
        .is_success
    )
    admin = admin_client(judge)
    r = form(admin, f"/admin/tokens/{mine[0]['id']}/revoke", page="/admin")
    assert r.status_code == 303
    assert judge.client().get("/api/v1/tokens", headers=judge.auth).status_code == 401
    assert "revoked" in admin.get("/admin").text
    with judge.sessions() as db:
        assert accounts.token_user(db, judge.token) is None
        assert accounts.token_user(db, other) is not None


def test_a_revoked_token_is_refused_at_once_under_concurrent_use(judge):
    run_concurrent_revoke_test(judge)


def run_concurrent_revoke_test(judge: Judge, workers: int = 8, seconds: float = 1.5) -> None:
    """Requests with a token race its revocation: none started after it is answered."""
    revoked_at: list[float] = []
    results: list[tuple[float, int]] = []
    stop, served = threading.Event(), threading.Event()

    def hammer() -> None:
        client = judge.client()
        while not stop.is_set():
            started = time.monotonic()
            status = client.get("/api/v1/tokens", headers=judge.auth).status_code
            results.append((started, status))
            if status == 200:
                served.set()

    def revoke() -> None:  # once the token has served (a loaded machine starts slowly)
        assert served.wait(60), "no request with the live token was answered"
        time.sleep(seconds / 3)
        with judge.sessions() as db:
            token_id = db.scalar(select(ApiToken.id).where(ApiToken.label == "tests"))
            assert credentials.revoke_token(db, judge.admin, token_id)
        revoked_at.append(time.monotonic())
        time.sleep(seconds / 3)
        stop.set()

    with ThreadPoolExecutor(workers + 1) as pool:
        futures = [pool.submit(hammer) for _ in range(workers)] + [pool.submit(revoke)]
        for future in futures:
            future.result()
    after = [status for started, status in results if started > revoked_at[0]]
    before = [status for started, status in results if started <= revoked_at[0]]
    assert after and set(after) == {401}, after
    assert 200 in before


def test_a_token_label_with_a_hidden_character_is_refused(judge):
    admin = admin_client(judge)
    r = form(admin, "/admin/tokens", page="/admin", label="runner\x00")
    assert r.status_code == 422 and "invisible" in r.text


# --- sessions -----------------------------------------------------------------------


def test_logging_in_again_revokes_the_older_session(judge):
    first, second = admin_client(judge), admin_client(judge)
    assert second.get("/admin").status_code == 200
    assert first.get("/admin", follow_redirects=False).headers["location"] == "/login"
    with judge.sessions() as db:
        live = credentials.live_sessions(db, db.get(User, judge.admin.id))
    assert len(live) == 1


def run_concurrent_login_test(judge: Judge, n: int = 12) -> None:
    """``n`` logins of one user at once leave exactly one live session."""
    barrier = threading.Barrier(n, timeout=120)

    def log_in(_: int) -> None:
        barrier.wait()
        with judge.sessions() as db:
            user = db.get(User, judge.admin.id)
            accounts.start_session(db, user, dt.timedelta(hours=1))

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(log_in, range(n)))
    with judge.sessions() as db:
        assert len(credentials.live_sessions(db, db.get(User, judge.admin.id))) == 1


def test_concurrent_logins_leave_one_live_session(judge):
    run_concurrent_login_test(judge)


def old_session(judge: Judge, user_id: int) -> str:
    """A second live session, as one made before this version (one-session rule)."""
    with judge.sessions() as db:
        sid = "old-session-id-" + str(user_id)
        db.add(WebSession(id=sid, user_id=user_id, expires_at=utcnow() + dt.timedelta(hours=1)))
        db.commit()
    return sid


def test_a_user_sees_their_sessions_and_revokes_the_others(judge):
    rater = judge.rater("ann@example.org")
    sid = old_session(judge, 2)
    other = judge.rater("bob@example.org")
    page = rater.get("/account").text
    handle = credentials.session_handle(sid)
    assert handle in page and sid not in page and "(this one)" in page
    bobs = credentials.session_handle(old_session(judge, 3))
    assert form(rater, "/account/sessions/revoke", session=bobs).status_code == 404
    for hostile in ("nonexistent", "\u00e9\x00", "\u202e" + bobs):
        assert form(rater, "/account/sessions/revoke", session=hostile).status_code == 404
    assert form(rater, "/account/sessions/revoke-others").status_code == 303
    with judge.sessions() as db:
        assert accounts.session_user(db, sid) is None
        assert accounts.session_user(db, "old-session-id-3") is not None  # bob's untouched
    assert rater.get("/account").status_code == 200 and other.get("/account").status_code == 200
    r = form(rater, "/account/sessions/revoke", session=credentials.session_handle(_sid(rater)))
    assert r.headers["location"] == "/login"
    assert rater.get("/account", follow_redirects=False).status_code == 303


def _sid(client) -> str:
    from proofgames.judge.web import SESSION_COOKIE

    return client.app.app.state.runtime.keys.unsign_session(client.cookies[SESSION_COOKIE], 3600)


# --- passwords ----------------------------------------------------------------------


def test_a_password_change_needs_the_current_one_and_ends_every_other_session(judge):
    admin = admin_client(judge)
    old = old_session(judge, judge.admin.id)
    r = form(admin, "/account/password", current_password="wrong!", new_password=NEW)
    assert r.status_code == 403 and "current password is wrong" in r.text
    r = form(admin, "/account/password", current_password=PASSWORD, new_password="short")
    assert r.status_code == 422 and "at least 10" in r.text
    r = form(admin, "/account/password", current_password=PASSWORD, new_password=PASSWORD)
    assert r.status_code == 422 and "differ" in r.text
    before = _sid(admin)
    r = form(admin, "/account/password", current_password=PASSWORD, new_password=NEW)
    assert r.status_code == 303 and _sid(admin) != before
    page = admin.get("/account")
    assert page.status_code == 200 and "Password changed" in page.text
    assert "Password changed" not in admin.get("/account").text  # shown once
    with judge.sessions() as db:
        assert accounts.session_user(db, old) is None and accounts.session_user(db, before) is None
    assert login(judge.client(), ADMIN).status_code == 401
    assert login(judge.client(), ADMIN, NEW).status_code == 303


def test_a_password_change_or_reset_itself_ends_every_session(judge):
    for change in ("change", "reset", "command line"):
        sids = [accounts_session(judge), old_session(judge, judge.admin.id)]
        with judge.sessions() as db:
            user = db.get(User, judge.admin.id)
            if change == "change":
                credentials.change_password(db, user, PASSWORD, NEW, ip="10.0.0.9")
            elif change == "reset":
                token = credentials.reset_link_token(db, user, user)
                credentials.reset_password(db, token, PASSWORD)
            else:
                credentials.set_password(db, None, ADMIN, PASSWORD)
            assert credentials.live_sessions(db, user) == [], change
            assert all(accounts.session_user(db, sid) is None for sid in sids)
            db.execute(delete(WebSession))
            db.commit()


def accounts_session(judge: Judge) -> str:
    with judge.sessions() as db:
        return accounts.start_session(db, db.get(User, judge.admin.id), dt.timedelta(hours=1))


def test_password_change_guesses_count_against_the_login_limit(judge):
    admin = admin_client(judge)
    statuses = [
        form(
            admin, "/account/password", current_password=f"guess {i}", new_password=NEW
        ).status_code
        for i in range(accounts.MAX_FAILURES_PER_EMAIL_AND_IP + 1)
    ]
    assert statuses[:-1] == [403] * accounts.MAX_FAILURES_PER_EMAIL_AND_IP
    assert statuses[-1] == 429
    r = form(admin, "/account/password", current_password=PASSWORD, new_password=NEW)
    assert r.status_code == 429  # the right one too, from this address


def reset_link(judge: Judge, admin, user_id: int) -> str:
    r = form(admin, f"/admin/users/{user_id}/reset", page="/admin/users")
    assert r.status_code == 303 and r.headers["location"] == "/admin/users"
    page = admin.get("/admin/users").text
    assert 'id="reset-url"' in page and 'id="reset-url"' not in admin.get("/admin/users").text
    return page.split('id="reset-url">')[1].split("<")[0]


def test_an_admin_reset_link_sets_the_password_once(judge, monkeypatch):
    rater = judge.rater("ann@example.org")
    link = reset_link(judge, admin_client(judge), 2)
    path = link.removeprefix("http://testserver")
    person = judge.client()
    page = person.get(path)
    assert page.status_code == 200 and "ann@example.org" in page.text
    token = csrf(page.text)
    short = person.post(path, data={"password": "short", "csrf_token": token})
    assert short.status_code == 422 and "at least 10" in short.text
    done = person.post(path, data={"password": NEW, "csrf_token": token}, follow_redirects=False)
    assert done.status_code == 303 and person.get("/account").status_code == 200
    assert rater.get("/queue", follow_redirects=False).status_code == 303  # logged out
    assert login(judge.client(), "ann@example.org").status_code == 401
    again = judge.client().get(path)
    assert again.status_code == 410 and "used already" in again.text
    assert judge.client().get(path[:-3] + "xyz").status_code == 404
    assert judge.client().get("/reset/" + "a" * 400).status_code == 422
    assert judge.client().get("/reset/%C3%A9%00.x").status_code == 404
    monkeypatch.setattr(credentials, "RESET_LIFETIME", dt.timedelta(seconds=-1))
    fresh = reset_link(judge, admin_client(judge), 2).removeprefix("http://testserver")
    expired = judge.client().get(fresh)
    assert expired.status_code == 410 and "expired" in expired.text


def test_a_reset_link_used_twice_at_once_sets_the_password_once(judge):
    judge.rater("ann@example.org")
    with judge.sessions() as db:
        token = credentials.reset_link_token(db, judge.admin, db.get(User, 2))
    n = 8
    barrier = threading.Barrier(n, timeout=60)
    outcomes: list[str] = []

    def use(i: int) -> None:
        barrier.wait()
        with judge.sessions() as db:
            try:
                credentials.reset_password(db, token, f"password number {i}")
                outcomes.append(f"set {i}")
            except accounts.Gone:
                outcomes.append("gone")

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(use, range(n)))
    winners = [o for o in outcomes if o.startswith("set")]
    assert len(winners) == 1 and outcomes.count("gone") == n - 1, outcomes
    assert login(judge.client(), "ann@example.org", f"password number {winners[0][4:]}").is_redirect


# --- disabling ----------------------------------------------------------------------


def test_disabling_a_user_ends_their_sessions_tokens_and_logins(judge):
    rater = judge.rater("ann@example.org")
    second, token = second_admin(judge)
    second_client = admin_client(judge, "second@example.org")
    admin = admin_client(judge)
    for user_id in (2, second.id):
        assert form(admin, f"/admin/users/{user_id}/disable", page="/admin/users").is_redirect
    assert rater.get("/queue", follow_redirects=False).status_code == 303
    assert second_client.get("/admin", follow_redirects=False).status_code == 303
    assert (
        judge.client()
        .get("/api/v1/tokens", headers={"authorization": f"Bearer {token}"})
        .status_code
        == 401
    )
    r = login(judge.client(), "ann@example.org")
    assert r.status_code == 403 and "disabled" in r.text
    assert login(judge.client(), "ann@example.org", "wrong password").status_code == 401
    me = form(admin, f"/admin/users/{judge.admin.id}/disable", page="/admin/users")
    assert me.status_code == 409 and "your own account" in me.text
    assert form(admin, "/admin/users/2/enable", page="/admin/users").is_redirect
    # disabled_at alone (set by anything) refuses the user's live session and token
    assert form(admin, f"/admin/users/{second.id}/enable", page="/admin/users").is_redirect
    fresh = admin_client(judge, "second@example.org")
    with judge.sessions() as db:
        db.execute(delete(ApiToken))
        token = accounts.create_api_token(db, db.get(User, second.id), "after enabling")
    assert form(admin, f"/admin/users/{second.id}/enable", page="/admin/users").status_code == 409
    with judge.sessions() as db:
        db.execute(update(User).where(User.id == second.id).values(disabled_at=utcnow()))
        db.commit()
    assert fresh.get("/admin", follow_redirects=False).status_code == 303
    assert (
        judge.client()
        .get("/api/v1/tokens", headers={"authorization": f"Bearer {token}"})
        .status_code
        == 401
    )
    assert login(judge.client(), "ann@example.org").status_code == 303
    with judge.sessions() as db:
        assert accounts.token_user(db, token) is None  # tokens stay revoked
        actions = set(db.scalars(select(AuditEntry.action)))
    assert {"disable_user", "enable_user"} <= actions


def test_an_admin_logs_a_user_out_everywhere(judge):
    rater = judge.rater("ann@example.org")
    r = judge.client().post("/api/v1/users/2/revoke-sessions", headers=judge.auth)
    assert r.json() == {"user": 2, "revoked_sessions": 1}
    assert rater.get("/queue", follow_redirects=False).status_code == 303
    assert (
        judge.client().post("/api/v1/users/99/revoke-sessions", headers=judge.auth).status_code
        == 404
    )


# --- invitations --------------------------------------------------------------------


def invite(judge: Judge, email: str) -> dict:
    r = judge.client().post(
        f"/api/v1/studies/{judge.study.id}/invitations", json={"email": email}, headers=judge.auth
    )
    assert r.status_code == 201
    return r.json()


def test_invitations_are_listed_and_a_revoked_link_says_so(judge):
    first, second = invite(judge, "a@example.org"), invite(judge, "b@example.org")
    judge.rater("c@example.org")  # used: not listed
    listed = judge.client().get(f"/api/v1/studies/{judge.study.id}/invitations", headers=judge.auth)
    rows = listed.json()["invitations"]
    assert [r["email"] for r in rows] == ["b@example.org", "a@example.org"]
    r = judge.client().delete(f"/api/v1/invitations/{rows[1]['id']}", headers=judge.auth)
    assert r.json() == {"id": rows[1]["id"], "revoked": True}
    gone = judge.client().get(f"/invite/{first['token']}")
    assert gone.status_code == 410 and "revoked" in gone.text
    stranger = judge.client()
    token = csrf(stranger.get("/login").text)
    late = stranger.post(
        f"/invite/{first['token']}", data={"password": PASSWORD, "csrf_token": token}
    )
    assert late.status_code == 410 and "revoked" in late.text
    assert judge.client().get(f"/invite/{second['token']}").status_code == 200
    used = judge.client().delete("/api/v1/invitations/3", headers=judge.auth)
    assert used.status_code == 409 and "used or revoked" in used.json()["error"]
    admin = admin_client(judge)
    page = admin.get(f"/admin/studies/{judge.study.id}/invitations").text
    assert "b@example.org" in page and "a@example.org" not in page
    r = form(
        admin, f"/admin/studies/{judge.study.id}/invitations/{rows[0]['id']}/revoke", page="/admin"
    )
    assert (
        r.status_code == 303 and judge.client().get(f"/invite/{second['token']}").status_code == 410
    )


def race_accept_and_revoke(judge: Judge, email: str) -> dict[str, str]:
    """Accept and revoke one invitation at the same instant; what each got."""
    token = invite(judge, email)["token"]
    with judge.sessions() as db:
        invitation_id = accounts.open_invitation(db, token).id
    barrier = threading.Barrier(2, timeout=60)
    outcome: dict[str, str] = {}

    def accept() -> None:
        barrier.wait()
        with judge.sessions() as db:
            try:
                accounts.accept_invitation(db, token, PASSWORD)
                outcome["accept"] = "ok"
            except (accounts.Gone, accounts.NotFound, accounts.Conflict) as exc:
                outcome["accept"] = type(exc).__name__

    def revoke() -> None:
        barrier.wait()
        with judge.sessions() as db:
            try:
                credentials.revoke_invitation(db, judge.admin, judge.study, invitation_id)
                outcome["revoke"] = "ok"
            except accounts.Conflict:
                outcome["revoke"] = "Conflict"

    threads = [threading.Thread(target=accept), threading.Thread(target=revoke)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcome


def test_an_invitation_accepted_and_revoked_at_once_is_one_or_the_other(judge):
    for round_ in range(6):
        email = f"race{round_}@example.org"
        outcome = race_accept_and_revoke(judge, email)
        assert list(outcome.values()).count("ok") == 1, outcome
        with judge.sessions() as db:
            user = db.scalar(select(User).where(User.email == email))
        assert (user is not None) == (outcome["accept"] == "ok"), outcome


@pytest.mark.postgres
def test_concurrent_logins_and_token_revocation_on_postgres(pg_url):  # noqa: F811
    judge = Judge(pg_url)
    run_concurrent_login_test(judge)
    run_concurrent_revoke_test(judge)
