"""Issue 36, defect 11: a rater can skip a step, and the step goes to someone else at once.

Before, an abandoned assignment held its question for the whole 20-minute lease: a rater
could not pass on a step they could not judge.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import select

from proofgames.judge.models import AuditEntry

from .judge_support import WARNING, api_csrf, csrf

pytestmark = pytest.mark.filterwarnings(WARNING)


def _next(client):
    return client.get("/api/v1/assignments/next").json()


def test_a_skipped_step_goes_to_another_rater_at_once(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    mine = _next(alice)
    assert _next(bob)["assignment"] is None  # k = 1: alice holds it
    url = f"/api/v1/assignments/{mine['assignment']}/skip"
    assert alice.post(url, headers=api_csrf(alice)).json()["status"] == "skipped"
    assert alice.post(url, headers=api_csrf(alice)).status_code == 200  # twice: one skip
    theirs = _next(bob)
    assert theirs["assignment"] is not None and theirs["question"] == mine["question"]
    assert _next(alice)["assignment"] is None  # not handed the skipped step again
    body = {"yes": True, "confidence": 3, "shown_sha256": mine["shown_sha256"]}
    late = alice.post(f"/api/v1/assignments/{mine['assignment']}/answer", json=body,
                      headers=api_csrf(alice))  # fmt: skip
    assert late.status_code == 409 and "skipped" in late.json()["error"]
    with judge.sessions() as db:
        assert db.scalars(select(AuditEntry.action).where(AuditEntry.action == "skip")).all() == [
            "skip"
        ]


def test_an_answered_or_foreign_step_cannot_be_skipped(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    mine = _next(alice)
    foreign = bob.post(f"/api/v1/assignments/{mine['assignment']}/skip", headers=api_csrf(bob))
    assert foreign.status_code == 404
    body = {"yes": True, "confidence": 3, "shown_sha256": mine["shown_sha256"]}
    url = f"/api/v1/assignments/{mine['assignment']}"
    assert alice.post(f"{url}/answer", json=body, headers=api_csrf(alice)).status_code == 200
    answered = alice.post(f"{url}/skip", headers=api_csrf(alice))
    assert answered.status_code == 409 and "answered already" in answered.json()["error"]
    assert alice.post(f"{url}/skip").status_code == 403  # no CSRF header


def test_the_queue_page_has_a_skip_button(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    judge.post_question("d2", "So 35 - 6 = 29")
    rater = judge.rater("alice@example.org")
    page = rater.get("/queue").text
    assert "Skip this step" in page and "So 7 * 5 = 35" in page
    token = csrf(page)
    plain = rater.post("/queue/1/skip", data={"csrf_token": token}, follow_redirects=False)
    assert plain.status_code == 303 and plain.headers["location"] == "/queue"
    assert "So 35 - 6 = 29" in rater.get("/queue").text
    fragment = rater.post("/queue/2/skip", data={"csrf_token": token},
                          headers={"hx-request": "true"})  # fmt: skip
    assert "Skipped." in fragment.text and "Nothing to answer right now" in fragment.text
