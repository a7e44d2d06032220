"""The judge server's HTTP API, end to end in-process (TestClient / httpx)."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import json

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select, update

from proofgames.errors import OracleError
from proofgames.judge.models import Answer, Assignment, AuditEntry, Question
from proofgames.judges import StepJudge, StepQuestion
from proofgames.judges.human import HumanJudge, JudgeTimeout
from proofgames.language.demo import demo_debate, demo_question

from .judge_support import WARNING, Judge, api_csrf, question

pytestmark = pytest.mark.filterwarnings(WARNING)


def answer(client, yes=True, confidence=4):
    """Fetch the next assignment and answer it; returns (assignment id, response)."""
    nxt = client.get("/api/v1/assignments/next").json()
    assert nxt["assignment"] is not None, "the queue is empty"
    body = {"yes": yes, "confidence": confidence, "shown_sha256": nxt["shown_sha256"]}
    r = client.post(
        f"/api/v1/assignments/{nxt['assignment']}/answer", json=body, headers=api_csrf(client)
    )
    return nxt["assignment"], r


def count(judge, model, *where):
    with judge.sessions() as db:
        return db.scalar(select(func.count()).select_from(model).where(*where))


def test_a_question_posted_twice_is_stored_once(judge):
    first = judge.post_question("d1", "So 7 * 5 = 35")
    again = judge.post_question("d1", "So 7 * 5 = 35")
    other_debate = judge.post_question("d2", "So 7 * 5 = 35")
    assert (first.status_code, again.status_code, other_debate.status_code) == (201, 200, 201)
    assert first.json() == again.json()
    assert count(judge, Question) == 2


def test_a_rater_answers_and_the_question_closes_at_k(judge):
    judge.post_question("d1", "So 7 * 5 = 35", k=2)
    alice, bob, carol = (judge.rater(f"{n}@example.org") for n in ("alice", "bob", "carol"))
    assert answer(alice, yes=True)[1].json()["status"] == "recorded"
    held = bob.get("/api/v1/assignments/next").json()  # bob holds the second slot ...
    assert carol.get("/api/v1/assignments/next").json()["assignment"] is None
    with judge.sessions() as db:  # ... until his lease runs out
        db.execute(update(Assignment).values(created_at=dt.datetime(2000, 1, 1)))
        db.commit()
    late = carol.get("/api/v1/assignments/next").json()
    assert late["assignment"] is not None
    body = {"yes": False, "confidence": 5, "shown_sha256": held["shown_sha256"]}
    url = f"/api/v1/assignments/{held['assignment']}/answer"
    assert bob.post(url, json=body, headers=api_csrf(bob)).json()["status"] == "recorded"
    body = {"yes": True, "confidence": 5, "shown_sha256": late["shown_sha256"]}
    r = carol.post(
        f"/api/v1/assignments/{late['assignment']}/answer", json=body, headers=api_csrf(carol)
    )
    assert r.status_code == 409 and "closed" in r.json()["error"]
    assert carol.get("/api/v1/assignments/next").json()["assignment"] is None
    params = {"study": "study", "debate_id": "d1", "question_id": late["question"]["question_id"]}
    result = judge.client().get("/api/v1/questions", params=params, headers=judge.auth).json()
    assert (result["closed"], result["n_answers"], result["p_yes"]) == (True, 2, 0.5)
    assert count(judge, Answer) == 2


def test_a_double_submission_records_one_answer_and_is_audited(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    assignment, first = answer(rater)
    nxt = rater.get(f"/api/v1/assignments/{assignment}").json()
    body = {"yes": False, "confidence": 1, "shown_sha256": nxt["shown_sha256"]}
    again = rater.post(
        f"/api/v1/assignments/{assignment}/answer", json=body, headers=api_csrf(rater)
    )
    assert first.json()["status"] == "recorded" and again.json()["status"] == "duplicate"
    assert count(judge, Answer) == 1
    with judge.sessions() as db:
        entry = db.scalars(select(AuditEntry).where(AuditEntry.action == "answer")).one()
    assert entry.detail["shown"]["step"] == "So 7 * 5 = 35"
    assert entry.detail["yes"] is True and entry.actor_id is not None


def test_an_answer_to_a_different_text_is_refused(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    nxt = rater.get("/api/v1/assignments/next").json()
    body = {"yes": True, "confidence": 3, "shown_sha256": "0" * 64}
    r = rater.post(
        f"/api/v1/assignments/{nxt['assignment']}/answer", json=body, headers=api_csrf(rater)
    )
    assert r.status_code == 409 and "different text" in r.json()["error"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"yes": "yes", "confidence": 3}, "yes"),
        ({"yes": True, "confidence": 9}, "confidence"),
        ({"yes": True, "confidence": 3, "extra": 1}, "extra"),
        ({"yes": True}, "confidence"),
    ],
)
def test_a_malformed_answer_is_refused_naming_the_field(judge, body, field):
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    nxt = rater.get("/api/v1/assignments/next").json()
    r = rater.post(
        f"/api/v1/assignments/{nxt['assignment']}/answer",
        json={"shown_sha256": nxt["shown_sha256"], **body},
        headers=api_csrf(rater),
    )
    assert r.status_code == 422 and field in r.json()["error"]


def test_the_answer_route_checks_who_before_what(judge):
    """Session (401), then CSRF (403), then the id and body (422), as a dependency would."""
    judge.post_question("d1", "So 7 * 5 = 35")
    rater = judge.rater("alice@example.org")
    nxt = rater.get("/api/v1/assignments/next").json()
    url = f"/api/v1/assignments/{nxt['assignment']}/answer"
    stranger = judge.client()
    assert stranger.post(url, content=b"{not json").status_code == 401
    assert stranger.post("/api/v1/assignments/3000000000/answer", json={}).status_code == 401
    assert stranger.get("/api/v1/assignments/next").status_code == 401
    assert rater.post(url, content=b"{not json").status_code == 403  # no CSRF header
    headers = api_csrf(rater)
    for bad_id in ("3000000000", "0", "-1", "x", "\u00b2"):
        r = rater.post(f"/api/v1/assignments/{bad_id}/answer", json={}, headers=headers)
        assert r.status_code == 422 and "assignment_id" in r.json()["error"], (bad_id, r.text)
    for raw in (b"{not json", b"", b"[]", b'"yes"', b"\xff\xfe"):
        r = rater.post(url, content=raw, headers=headers)
        assert r.status_code == 422 and "invalid request" in r.json()["error"], (raw, r.text)
    body = {"yes": True, "confidence": 3, "shown_sha256": nxt["shown_sha256"]}
    assert rater.post(url, json=body, headers=headers).json()["status"] == "recorded"


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        ({"question": {"task": "t", "premises": [], "step": 5}}, "step"),
        ({"question": {"task": "t", "premises": [], "step": "s", "bad": 1}}, "unknown"),
        ({"question": {"task": "t", "premises": [], "step": "x" * 20_001}}, "20,000"),
        ({"k": 0}, "k"),
        ({"study": "no such study"}, "no study"),
    ],
)
def test_a_bad_question_is_refused_with_a_clear_error(judge, patch, words):
    body = {"study": "study", "debate_id": "d", "question": question("s"), **patch}
    r = judge.client().post("/api/v1/questions", json=body, headers=judge.auth)
    assert r.status_code in (404, 422) and words in r.json()["error"]


def test_exports_hold_every_answer_in_three_formats(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    judge.post_question("d1", "So 35 - 6 = 29")
    rater = judge.rater("alice@example.org")
    answer(rater, yes=True)
    answer(rater, yes=False)
    get = judge.client().get
    url = f"/api/v1/studies/{judge.study.id}/export"
    lines = get(url, params={"format": "jsonl"}, headers=judge.auth).text.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["yes"] for r in rows] == [True, False]
    assert "rater_email" not in rows[0] and rows[0]["step"] == "So 7 * 5 = 35"
    assert rows[0]["server_ms"] >= 0 and isinstance(rows[0]["rater_id"], int)
    named = get(url, params={"format": "jsonl", "emails": "true"}, headers=judge.auth).text
    assert json.loads(named.splitlines()[0])["rater_email"] == "alice@example.org"
    table = list(
        csv.DictReader(io.StringIO(get(url, params={"format": "csv"}, headers=judge.auth).text))
    )
    assert [r["yes"] for r in table] == ["True", "False"]
    pq = pytest.importorskip("pyarrow.parquet")
    parquet = get(url, params={"format": "parquet"}, headers=judge.auth).content
    assert pq.read_table(io.BytesIO(parquet)).column("yes").to_pylist() == [True, False]
    bad = get(url, params={"format": "xlsx"}, headers=judge.auth)
    assert bad.status_code == 422 and "jsonl" in bad.json()["error"]


async def _answer_when_posted(judge, rater, yes):
    for _ in range(400):
        nxt = rater.get("/api/v1/assignments/next").json()
        if nxt["assignment"] is not None:
            body = {"yes": yes, "confidence": 5, "shown_sha256": nxt["shown_sha256"]}
            url = f"/api/v1/assignments/{nxt['assignment']}/answer"
            return rater.post(url, json=body, headers=api_csrf(rater)).json()
        await asyncio.sleep(0.05)
    raise AssertionError("the question never reached the rater")


def test_human_judge_turns_k_answers_into_p_yes(tmp_path):
    judge = Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=3)
    raters = [judge.rater(f"r{i}@example.org") for i in range(3)]
    human = HumanJudge(
        "http://testserver",
        judge.token,
        "study",
        "debate-7",
        poll_s=0.5,
        timeout_s=60,
        transport=httpx.ASGITransport(judge.asgi),
    )

    async def main():
        task = asyncio.create_task(human.judge(StepQuestion("2 + 2?", (), "2 + 2 = 4")))
        for rater, yes in zip(raters, (True, True, False), strict=True):
            await _answer_when_posted(judge, rater, yes)
        return await task

    judgement = asyncio.run(main())
    assert isinstance(human, StepJudge) and human.kind == "human"
    assert judgement.p_yes == pytest.approx(2 / 3)
    assert (judgement.calls, judgement.human_judgements) == (3, 3)
    assert judgement.detail["debate_id"] == "debate-7" and len(judgement.detail["answers"]) == 3


def test_a_restarted_verifier_finds_its_question_and_its_answers(judge):
    transport = httpx.ASGITransport(judge.asgi)
    rater = judge.rater("alice@example.org")
    q = StepQuestion("2 + 2?", (), "2 + 2 = 5")

    def new_judge():
        return HumanJudge(
            "http://testserver",
            judge.token,
            "study",
            "debate-1",
            poll_s=0.2,
            timeout_s=30,
            transport=transport,
        )

    async def main():
        first = asyncio.create_task(new_judge().judge(q))
        for _ in range(600):  # until it has posted (not a fixed wait: loaded machines)
            await asyncio.sleep(0.05)
            if count(judge, Question):
                break
        first.cancel()  # the verifier dies while waiting
        await _answer_when_posted(judge, rater, False)  # answered while it is down
        return await new_judge().judge(q)  # the restarted verifier asks again

    judgement = asyncio.run(main())
    assert judgement.p_yes == 0.0 and judgement.human_judgements == 1
    assert count(judge, Question) == 1


def test_human_judge_times_out_and_reports_refusals(judge):
    transport = httpx.ASGITransport(judge.asgi)
    q = StepQuestion("2 + 2?", (), "2 + 2 = 4")
    slow = HumanJudge(
        "http://testserver",
        judge.token,
        "study",
        "d",
        poll_s=0.1,
        timeout_s=0.5,
        transport=transport,
    )
    with pytest.raises(JudgeTimeout, match="0/1 answers"):
        asyncio.run(slow.judge(q))
    wrong = HumanJudge("http://testserver", "not-a-token", "study", "d", transport=transport)
    with pytest.raises(OracleError, match="401"):
        asyncio.run(wrong.judge(q))
    down = HumanJudge("http://127.0.0.1:9", judge.token, "study", "d", timeout_s=0.5, retry_s=0.1)
    with pytest.raises(JudgeTimeout, match="cannot reach"):
        asyncio.run(down.judge(q))


def test_a_transcript_debate_is_decided_by_one_human_judgement(judge):
    rater = judge.rater("alice@example.org")
    human = HumanJudge(
        "http://testserver",
        judge.token,
        "study",
        "transcript-1",
        poll_s=0.2,
        timeout_s=30,
        transport=httpx.ASGITransport(judge.asgi),
    )

    async def main():
        task = asyncio.create_task(demo_debate(human))
        shown = await _answer_when_posted(judge, rater, False)
        return shown, await task

    _, outcome = asyncio.run(main())
    assert (outcome.winner, outcome.forfeit, outcome.details["disputed_step"]) == ("B", None, 1)
    assert outcome.costs.human_judgements == 1 and outcome.details["judgements"] == [0.0]
    assert demo_question().premises == ("First, 3 + 4 = 7.",)
