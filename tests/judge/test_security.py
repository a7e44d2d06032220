"""The judge server refuses what it must: strangers, other raters, forgeries, floods."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from itsdangerous import TimestampSigner
from markupsafe import escape
from sqlalchemy import func, select, update

from proofgames.judge.models import Answer, Question, Study, User, WebSession
from proofgames.judge.web import SESSION_COOKIE

from .judge_support import PASSWORD, WARNING, Judge, api_csrf, csrf, login, question

pytestmark = pytest.mark.filterwarnings(WARNING)

INJECTIONS = [
    "'; DROP TABLE users; --",
    '" OR 1=1 --',
    "<script>alert('x')</script>",
    "<img src=x onerror=alert(1)>",
    "{{ 7 * 7 }}",
]


@pytest.fixture
def judge(tmp_path):
    return Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=2, max_body_bytes=64 * 1024)


def count(judge, model):
    with judge.sessions() as db:
        return db.scalar(select(func.count()).select_from(model))


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/v1/assignments/next"),
        ("GET", "/api/v1/assignments/1"),
        ("POST", "/api/v1/assignments/1/answer"),
        ("POST", "/api/v1/questions"),
        ("GET", "/api/v1/questions?study=study&debate_id=d&question_id=q"),
        ("POST", "/api/v1/studies"),
        ("GET", "/api/v1/studies/1/export"),
        ("GET", "/admin/studies/1/export.csv"),
        ("POST", "/admin/studies"),
        ("POST", "/queue/1/answer"),
    ],
)
def test_unauthenticated_requests_are_refused(judge, method, path):
    r = judge.client().request(method, path, json={}, follow_redirects=False)
    if r.status_code == 303:  # a page: to the login form
        assert r.headers["location"] == "/login"
    else:
        assert r.status_code in (401, 403, 422)


@pytest.mark.parametrize("path", ["/queue", "/admin", "/admin/studies/1"])
def test_pages_send_strangers_to_the_login_page(judge, path):
    r = judge.client().get(path, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"


def test_a_rater_can_neither_read_nor_answer_another_raters_assignment(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    mine = bob.get("/api/v1/assignments/next").json()
    theirs = alice.get(f"/api/v1/assignments/{mine['assignment']}")
    assert theirs.status_code == 404 and "not yours" in theirs.json()["error"]
    body = {"yes": False, "confidence": 5, "shown_sha256": mine["shown_sha256"]}
    url = f"/api/v1/assignments/{mine['assignment']}/answer"
    assert alice.post(url, json=body, headers=api_csrf(alice)).status_code == 404
    page = alice.post(
        f"/queue/{mine['assignment']}/answer",
        data={
            "answer": "no",
            "confidence": "5",
            "shown_sha256": mine["shown_sha256"],
            "csrf_token": csrf(alice.get("/queue").text),
        },
    )
    assert page.status_code == 404
    assert count(judge, Answer) == 0
    # alice's own queue shows her own assignment, never bob's
    assert alice.get("/api/v1/assignments/next").json()["assignment"] != mine["assignment"]


def test_a_rater_is_not_an_admin(judge):
    rater = judge.rater("alice@example.org")
    assert rater.get("/admin", follow_redirects=False).status_code == 403
    assert rater.get(f"/admin/studies/{judge.study.id}/export.jsonl").status_code == 403
    assert rater.post("/api/v1/studies", json={"name": "x", "k": 1}).status_code == 401


def test_forged_or_missing_csrf_tokens_are_refused(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    nxt = rater.get("/api/v1/assignments/next").json()
    form = {"answer": "yes", "confidence": "3", "shown_sha256": nxt["shown_sha256"]}
    url = f"/queue/{nxt['assignment']}/answer"
    for token in ("", "0" * 64, judge.keys.csrf_token("someone else's session")):
        assert rater.post(url, data={**form, "csrf_token": token}).status_code in (403, 422)
    api = f"/api/v1/assignments/{nxt['assignment']}/answer"
    body = {"yes": True, "confidence": 3, "shown_sha256": nxt["shown_sha256"]}
    assert rater.post(api, json=body).status_code == 403
    assert rater.post(api, json=body, headers={"x-csrf-token": "f" * 64}).status_code == 403
    stranger = judge.client()  # a login form posted without the page's nonce cookie
    data = {"email": "admin@example.org", "password": PASSWORD, "csrf_token": "0" * 64}
    assert stranger.post("/login", data=data, follow_redirects=False).status_code == 403
    assert count(judge, Answer) == 0


def test_a_session_replayed_after_logout_is_refused(judge):
    admin = judge.client()
    assert login(admin, "admin@example.org").status_code == 303
    cookie = admin.cookies[SESSION_COOKIE]
    token = csrf(admin.get("/admin").text)
    assert (
        admin.post("/logout", data={"csrf_token": token}, follow_redirects=False).status_code == 303
    )
    replay = judge.client()
    replay.cookies.set(SESSION_COOKIE, cookie)
    assert replay.get("/admin", follow_redirects=False).headers["location"] == "/login"


def test_expired_and_tampered_sessions_are_refused(judge):
    admin = judge.client()
    login(admin, "admin@example.org")
    cookie = admin.cookies[SESSION_COOKIE]
    sid = judge.keys.unsign_session(cookie, max_age=60)
    assert admin.get("/admin").status_code == 200
    with judge.sessions() as db:  # the server-side session runs out
        db.execute(update(WebSession).values(expires_at=dt.datetime(2000, 1, 1)))
        db.commit()
    assert admin.get("/admin", follow_redirects=False).status_code == 303

    class Old(TimestampSigner):  # a genuine signature made 13 hours ago
        def get_timestamp(self):
            return super().get_timestamp() - 13 * 3600

    secret = judge.keys._secret
    old = Old(secret, salt="proofgames-judge-session").sign(sid).decode()
    for value in (old, cookie[:-2] + "xx", "garbage", sid):
        client = judge.client()
        client.cookies.set(SESSION_COOKIE, value)
        assert client.get("/admin", follow_redirects=False).status_code == 303, value


def test_login_is_rate_limited(judge):
    client = judge.client()
    for _ in range(5):
        assert login(client, "admin@example.org", "wrong password!").status_code == 401
    blocked = login(client, "admin@example.org")  # the right password, too late
    assert blocked.status_code == 429 and "too many" in blocked.text
    api = client.post("/api/v1/login", json={"email": "admin@example.org", "password": PASSWORD})
    assert api.status_code == 429
    judge.rater("alice@example.org")  # another account still logs in
    assert login(judge.client(), "alice@example.org").status_code == 303


def test_oversized_bodies_are_refused(judge):
    client = judge.client()
    big = {"study": "study", "debate_id": "d", "question": question("x" * 70_000)}
    r = client.post("/api/v1/questions", json=big, headers=judge.auth)
    assert r.status_code == 413 and "limit" in r.text

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(100):
            yield b"x" * 1024

    r = client.post("/api/v1/questions", content=chunks(), headers=judge.auth)
    assert r.status_code == 413
    assert client.post("/login", content=b"a=" + b"x" * 70_000).status_code == 413
    assert judge.post_question("d", "still works").status_code == 201


def test_garbage_bodies_get_clear_errors_and_the_server_goes_on(judge):
    client = judge.client()
    for body in (b"{", b"[]", b"null", b'{"study": 1}', "\udcff".encode("utf-8", "surrogatepass")):
        r = client.post(
            "/api/v1/questions",
            content=body,
            headers={**judge.auth, "content-type": "application/json"},
        )
        assert r.status_code == 422, body
    assert judge.post_question("d", "still works").status_code == 201


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_in_every_field_is_stored_and_shown_as_text(judge, evil):
    admin = judge.client()
    login(admin, "admin@example.org")
    token = csrf(admin.get("/admin").text)
    admin.post("/admin/studies", data={"name": evil, "k": "1", "csrf_token": token})
    bad = admin.post(
        f"/admin/studies/{judge.study.id}/invitations",
        data={"email": evil, "csrf_token": token},
    )
    assert bad.status_code == 422 and "not an email" in bad.text
    admin.post("/admin/tokens", data={"label": evil, "csrf_token": token})
    q = {"task": evil, "premises": [evil], "step": evil, "prompt": evil}
    body = {"study": "study", "debate_id": evil, "question": q, "k": 1}
    assert admin.post("/api/v1/questions", json=body, headers=judge.auth).status_code == 201
    login(judge.client(), evil, evil)
    rater = judge.rater("alice@example.org")
    queue = rater.get("/queue").text
    pages = [queue, admin.get("/admin").text, admin.get(f"/admin/studies/{judge.study.id}").text]
    for html in pages:
        assert "<script>alert" not in html and "<img src=x" not in html
    assert str(escape(evil)) in queue  # shown as the text it is, escaped
    with judge.sessions() as db:  # every table is intact; the text was stored verbatim
        assert db.scalar(select(func.count()).select_from(User)) == 2
        assert db.scalar(select(Question.debate_id)) == evil
        assert evil in db.scalars(select(Study.name)).all()


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/api/v1/studies/99999999999999999999/export", "study_id"),
        ("/api/v1/studies/0/export", "study_id"),
        ("/api/v1/questions?study=study&debate_id=d&question_id=q&wait=nan", "wait"),
        ("/api/v1/questions?study=study&debate_id=d&question_id=q&wait=inf", "wait"),
        ("/api/v1/questions?study=study&debate_id=d&question_id=q&wait=-1", "wait"),
        ("/api/v1/questions?study=" + "x" * 5000 + "&debate_id=d&question_id=q", "study"),
    ],
)
def test_hostile_urls_get_clear_errors(judge, path, words):
    r = judge.client().get(path, headers=judge.auth)
    assert r.status_code == 422 and words in r.json()["error"]


def test_a_rater_asking_for_an_absurd_assignment_gets_a_clear_error(judge):
    rater = judge.rater("alice@example.org")
    r = rater.get("/api/v1/assignments/99999999999999999999999")
    assert r.status_code == 422 and "assignment_id" in r.json()["error"]
    page = rater.post("/queue/-5/answer", data={"csrf_token": csrf(rater.get("/queue").text)})
    assert page.status_code == 422 and "assignment_id" in page.text
