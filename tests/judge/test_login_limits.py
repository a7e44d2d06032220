"""Issue 36, defects 2-6: the login limits hold against a racing, spreading or lying guesser.

Measured on the main of 2026-12-05: 40 logins sent at once had 13-34 wrong guesses
checked (limit 5) and the right password as the 16th guess logged in; 5 wrong logins
for the admin's email from one address locked the admin out from every address; an
unused invitation for an existing account took unlimited password guesses; a rotated
``X-Forwarded-For`` header gave each guess a new address; an unknown email was answered
in about half the time of a known one.
"""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from proofgames.judge import accounts
from proofgames.judge.errors import RateLimited, Unauthorized

from .judge_support import PASSWORD, WARNING, Judge, Server, login

pytestmark = pytest.mark.filterwarnings(WARNING)
ADMIN = "admin@example.org"


def race(judge: Judge, n: int = 40, right_at: int = 15) -> list[str]:
    """``n`` logins for the admin from one address at the same instant; guess ``right_at``
    is the right password. Returns each one's result."""
    barrier = threading.Barrier(n, timeout=120)
    results = [""] * n

    def guess(i: int) -> None:
        password = PASSWORD if i == right_at else f"wrong guess {i}"
        barrier.wait()
        with judge.sessions() as db:
            try:
                accounts.check_login(db, ADMIN, password, ip="10.0.0.1")
                results[i] = "in"
            except RateLimited:
                results[i] = "limited"
            except Unauthorized:
                results[i] = "wrong"

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_race(judge: Judge) -> None:
    """At most 5 guesses are checked, however many arrive at once."""
    results = race(judge)
    checked = results.count("wrong") + results.count("in")
    assert checked <= accounts.MAX_FAILURES_PER_EMAIL_AND_IP, results
    assert results.count("limited") >= 40 - accounts.MAX_FAILURES_PER_EMAIL_AND_IP
    with judge.sessions() as db, pytest.raises(RateLimited):  # and then the right one, too
        accounts.check_login(db, ADMIN, PASSWORD, ip="10.0.0.1")


def test_concurrent_guesses_cannot_outrun_the_limit(judge):
    check_race(judge)


def test_wrong_guesses_from_one_address_do_not_lock_the_account_elsewhere(judge):
    attacker = judge.client()
    for _ in range(accounts.MAX_FAILURES_PER_EMAIL_AND_IP):
        assert login(attacker, ADMIN, "wrong password!").status_code == 401
    assert login(attacker, ADMIN).status_code == 429  # that address is limited
    with judge.sessions() as db:  # the admin, from another address, logs in
        assert accounts.check_login(db, ADMIN, PASSWORD, ip="192.0.2.7").email == ADMIN


def test_an_invitation_is_no_way_around_the_limit(judge):
    rater = judge.rater("alice@example.org")  # an account exists
    assert rater is not None
    r = judge.client().post(f"/api/v1/studies/{judge.study.id}/invitations",
                            json={"email": "alice@example.org"}, headers=judge.auth)  # fmt: skip
    token = r.json()["token"]
    statuses = []
    for i in range(accounts.MAX_FAILURES_PER_EMAIL_AND_IP + 2):
        with judge.sessions() as db:
            try:
                accounts.accept_invitation(db, token, f"wrong guess {i}", ip="10.0.0.9")
                statuses.append("joined")
            except RateLimited:
                statuses.append("limited")
            except Unauthorized:
                statuses.append("wrong")
    assert statuses == ["wrong"] * 5 + ["limited"] * 2
    with judge.sessions() as db, pytest.raises(RateLimited):
        accounts.accept_invitation(db, token, PASSWORD, ip="10.0.0.9")


def test_an_unknown_email_costs_the_same_password_check(judge, monkeypatch):
    checked: list[str] = []
    real = accounts.verify_password

    def counting(stored: str, password: str) -> bool:
        checked.append(stored[:9])
        return real(stored, password)

    monkeypatch.setattr(accounts, "verify_password", counting)
    with judge.sessions() as db:
        for email in (ADMIN, "nobody@example.org"):
            with pytest.raises(Unauthorized, match="wrong email or password"):
                accounts.check_login(db, email, "wrong password!", ip="10.0.0.3")
    assert len(checked) == 2 and all(h.startswith("$argon2id") for h in checked)


@pytest.mark.slow
def test_a_forged_forwarded_for_header_is_not_believed(tmp_path):
    """One guess at each of many accounts, each claiming a new address: the address limit
    holds (before, every guess was counted under the address it claimed)."""
    db = f"sqlite:///{tmp_path / 'judge.db'}"
    Judge(db, k=1).app.state.engine.dispose()
    server = Server(db)
    server.start()
    n = accounts.MAX_FAILURES_PER_IP + 5
    try:
        import httpx

        with httpx.Client(base_url=server.url, timeout=30) as client:
            statuses = [
                client.post("/api/v1/login",
                            json={"email": f"user{i}@example.org", "password": "a guess!"},
                            headers={"x-forwarded-for": f"203.0.113.{i}"}).status_code
                for i in range(n)
            ]  # fmt: skip
    finally:
        server.stop()
    assert statuses == [401] * accounts.MAX_FAILURES_PER_IP + [429] * 5
