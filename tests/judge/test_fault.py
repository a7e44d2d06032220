"""Fault test: raters submit concurrently while the server is ``kill -9``ed and restarted.

Every answer the server acknowledged must be in the database afterwards, exactly as
given, and no question may hold more than k answers or one rater's answer twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select

from proofgames.judge import accounts, handout, service
from proofgames.judge.errors import Conflict
from proofgames.judge.models import Answer, Assignment, Question
from proofgames.judges import Judgement, StepQuestion
from proofgames.judges.human import HumanJudge

from .judge_support import PASSWORD, WARNING, Judge, Server

pytestmark = pytest.mark.filterwarnings(WARNING)

RATERS, QUESTIONS, K = 8, 40, 2


def choice(assignment: int) -> tuple[bool, int]:
    """The answer a rater gives to an assignment (the same on every retry)."""
    digest = hashlib.sha256(str(assignment).encode()).digest()
    return digest[0] % 2 == 0, 1 + digest[1] % 5


class Rater(threading.Thread):
    """A simulated rater: answers until the queue is empty, retrying through outages."""

    def __init__(self, url: str, email: str, stop_at: float) -> None:
        super().__init__(daemon=True)
        self.url, self.email, self.stop_at = url, email, stop_at
        self.acknowledged: dict[int, tuple[bool, int]] = {}
        self.errors: list[str] = []
        self.outages = 0  # requests that met a dead server
        self.outages_in: set[str] = set()  # the kinds of step whose fetch or answer met one

    def call(self, client: httpx.Client, method: str, path: str, **kw: object) -> httpx.Response:
        while time.monotonic() < self.stop_at:
            try:
                r = client.request(method, path, **kw)  # type: ignore[arg-type]
            except httpx.TransportError:
                self.outages += 1
                time.sleep(0.05)  # the server is down: retry the very same request
                continue
            if r.status_code < 500:
                return r
            time.sleep(0.05)
        raise TimeoutError(f"{self.email}: the server never came back")

    def run(self) -> None:
        try:
            with httpx.Client(base_url=self.url, timeout=10) as client:
                login = {"email": self.email, "password": PASSWORD}
                token = self.call(client, "POST", "/api/v1/login", json=login).json()
                headers = {"x-csrf-token": token["csrf_token"]}
                while True:
                    before = self.outages
                    nxt = self.call(client, "GET", "/api/v1/assignments/next").json()
                    if nxt["assignment"] is None:
                        return
                    aid = nxt["assignment"]
                    yes, confidence = choice(aid)
                    body = {
                        "yes": yes,
                        "confidence": confidence,
                        "shown_sha256": nxt["shown_sha256"],
                    }
                    r = self.call(
                        client,
                        "POST",
                        f"/api/v1/assignments/{aid}/answer",
                        json=body,
                        headers=headers,
                    )
                    if r.status_code == 200:
                        self.acknowledged[aid] = (yes, confidence)
                        if self.outages > before:  # in fetching or answering this step
                            # (a check is known by its feedback)
                            gold = r.json()["feedback"] is not None
                            self.outages_in.add("gold" if gold else nxt["stage"]["name"])
                    elif r.status_code != 409:  # 409: closed by the others first
                        self.errors.append(f"{r.status_code}: {r.text}")
        except Exception as exc:  # reported by the test, not lost in the thread
            self.errors.append(repr(exc))


def acknowledged_total(raters: list[Rater]) -> int:
    return sum(len(r.acknowledged) for r in raters)


def wait_for(raters: list[Rater], n: int, deadline: float) -> None:
    """Until the raters have ``n`` acknowledged answers (or have all stopped)."""
    while (
        acknowledged_total(raters) < n
        and time.monotonic() < deadline
        and any(r.is_alive() for r in raters)
    ):
        time.sleep(0.02)


@pytest.mark.slow
def test_acknowledged_answers_survive_kill_9_and_none_is_counted_twice(tmp_path):
    run_fault_test(f"sqlite:///{tmp_path / 'judge.db'}", tmp_path)


QUALIFICATION, GOLD = 6, 8


@pytest.mark.slow
def test_qualification_and_gold_answers_survive_kill_9_too(tmp_path):
    """Issue 36: the kills also land while raters answer qualification and gold steps."""
    run_fault_test(f"sqlite:///{tmp_path / 'judge.db'}", tmp_path, checks=True)


def _seed(judge: Judge, checks: bool) -> None:
    with judge.sessions() as db:
        for i in range(RATERS):
            rater = accounts.create_user(db, f"r{i}@example.org", "rater", PASSWORD)
            service.join(db, judge.study, rater)
    for i in range(QUESTIONS):
        assert judge.post_question(f"debate-{i}", f"step {i}: 7 * 5 = 35").status_code == 201
    if not checks:
        return
    url = f"/api/v1/studies/{judge.study.id}/design"
    body = {"gold_rate": 0.5, "pass_mark": 0.0}  # everyone qualifies, whatever they answer
    assert judge.client().patch(url, json=body, headers=judge.auth).is_success
    for kind, n in (("qualification", QUALIFICATION), ("gold", GOLD)):
        for i in range(n):
            r = judge.post_question(f"{kind}-{i}", f"{kind} {i}: 6 * 7 = 42", kind=kind,
                                    expected=True)  # fmt: skip
            assert r.status_code == 201, r.text


def run_fault_test(url: str, tmp_path, checks: bool = False) -> None:
    """Seed ``url``, serve it, kill -9 the server under load, check the database.

    Without ``checks``: two kills in the work. With them, a qualification and gold
    checks at rate 0.5: two kills during the qualifications (every rater answers those
    first; 48 answers in all) and three in the work, where half the turns are gold. A
    kill counts for the kind of step a rater was fetching or answering when it came.
    """
    judge = Judge(url, k=K)
    _seed(judge, checks)
    judge.app.state.engine.dispose()
    live = Server(url, log=tmp_path / "server.log")
    live.start()
    targets = (8, 24, 80, 110, 140) if checks else (QUESTIONS // 3, QUESTIONS)
    kills = 0
    try:
        deadline = time.monotonic() + 240
        raters = [Rater(live.url, f"r{i}@example.org", deadline) for i in range(RATERS)]
        for r in raters:
            r.start()
        for target in targets:  # kill mid-flight
            wait_for(raters, target, deadline)
            live.kill9()
            kills += 1
            time.sleep(0.3)  # raters hammer a dead port meanwhile
            live.start()
        for r in raters:
            r.join(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        live.stop()
    assert kills == len(targets) and sum(r.outages for r in raters) > 0  # hit live traffic
    assert [e for r in raters for e in r.errors] == []
    hit = set().union(*(r.outages_in for r in raters))
    if checks:  # the kills met answers to qualification and gold steps in flight
        assert {"qualification", "gold"} <= hit, hit
    check_database(judge, raters, checks)


def check_database(judge: Judge, raters: list[Rater], checks: bool = False) -> None:
    """Every acknowledged answer stored as given; no question over k; no rater twice."""
    acked = {aid: given for r in raters for aid, given in r.acknowledged.items()}
    with judge.sessions() as db:
        stored = {a.assignment_id: (a.yes, a.confidence) for a in db.scalars(select(Answer))}
        per_question = db.execute(
            select(Answer.question_pk, Question.kind, func.count())
            .join(Question, Question.id == Answer.question_pk)
            .group_by(Answer.question_pk, Question.kind)
        ).all()
        work = db.scalars(select(Question).where(Question.kind == "work")).all()
        pairs = db.execute(
            select(Assignment.question_pk, Assignment.rater_id, func.count()).group_by(
                Assignment.question_pk, Assignment.rater_id
            )
        ).all()
    for aid, given in acked.items():  # no acknowledged answer is lost or changed
        assert stored.get(aid) == given, aid
    assert all(n <= (K if kind == "work" else RATERS) for _, kind, n in per_question)
    assert all(n == 1 for _, _, n in pairs)  # no rater twice on a question
    assert all(q.closed and q.n_answers == K for q in work)  # all answered, then closed
    assert len(stored) == len(acked)
    by_kind = {kind: 0 for kind in ("work", "qualification", "gold")}
    for _, kind, n in per_question:
        by_kind[kind] += n
    assert by_kind["work"] == QUESTIONS * K
    assert by_kind["qualification"] == (RATERS * QUALIFICATION if checks else 0)


def test_twelve_raters_answering_at_once_record_exactly_k(tmp_path):
    run_concurrent_close_test(Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=3))


def run_concurrent_close_test(judge: Judge) -> None:
    """12 raters submit to one k = 3 question at the same instant: 3 recorded, 9 closed."""
    with judge.sessions() as db:
        raters = [
            accounts.create_user(db, f"r{i}@example.org", "rater", PASSWORD) for i in range(12)
        ]
        for r in raters:
            service.join(db, judge.study, r)
    assert judge.post_question("d", "So 7 * 5 = 35").status_code == 201
    with judge.sessions() as db:  # all 12 hold it (as after leases ran out)
        question = db.scalars(select(Question)).one()
        assignments = [Assignment(question_pk=question.id, rater_id=r.id) for r in raters]
        db.add_all(assignments)
        db.commit()
    taken = [(a, question) for a in assignments]
    results: list[str] = []
    barrier = threading.Barrier(len(raters), timeout=120)

    def submit(rater, found):
        assignment, question = found
        barrier.wait()
        with judge.sessions() as db:
            try:
                results.append(
                    service.submit_answer(
                        db,
                        rater,
                        assignment.id,
                        yes=True,
                        confidence=3,
                        shown=service.shown_sha256(question.payload),
                    )
                )
            except Conflict:
                results.append("closed")

    threads = [
        threading.Thread(target=submit, args=pair) for pair in zip(raters, taken, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["closed"] * 9 + ["recorded"] * 3
    with judge.sessions() as db:
        assert db.scalar(select(func.count()).select_from(Answer)) == 3


def test_concurrent_raters_never_hold_a_question_past_k(tmp_path):
    run_concurrent_assignment_test(Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=1))


def run_concurrent_assignment_test(judge: Judge, raters: int = 16, rounds: int = 3) -> None:
    """Issue 36, defect 7: raters asking for work at the same instant, round after round.

    On PostgreSQL a question at k = 1 went to two raters about 3% of the time (the
    second answer was refused, 409). Every round, all raters ask at once; then no
    question may be held by more than k raters, and every answer is recorded.
    """
    with judge.sessions() as db:
        people = [accounts.create_user(db, f"c{i}@example.org", "rater", PASSWORD)
                  for i in range(raters)]  # fmt: skip
        for r in people:
            service.join(db, judge.study, r)
    for i in range(raters * rounds):
        assert judge.post_question(f"d{i}", f"So {i} + 1 = {i + 1}").status_code == 201
    refused: list[str] = []
    for _ in range(rounds):
        barrier = threading.Barrier(raters, timeout=120)
        got: list[tuple[object, object] | None] = [None] * raters

        def ask(i: int, barrier: threading.Barrier, got: list[object]) -> None:
            barrier.wait()
            with judge.sessions() as db:
                got[i] = handout.next_assignment(db, people[i])

        threads = [threading.Thread(target=ask, args=(i, barrier, got)) for i in range(raters)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with judge.sessions() as db:
            held = db.execute(
                select(Assignment.question_pk, func.count())
                .outerjoin(Answer, Answer.assignment_id == Assignment.id)
                .where(Answer.id.is_(None))
                .group_by(Assignment.question_pk)
            ).all()
            assert max(n for _, n in held) <= 1, held
            for i, found in enumerate(got):
                assert found is not None, "a rater got no work while questions were open"
                assignment, question = found
                try:
                    service.submit_answer(
                        db, people[i], assignment.id, yes=True, confidence=3,  # type: ignore[attr-defined]
                        shown=service.shown_sha256(question.payload),  # type: ignore[attr-defined]
                    )  # fmt: skip
                except Conflict as exc:
                    refused.append(str(exc))
    assert refused == []
    with judge.sessions() as db:
        assert db.scalar(select(func.count()).select_from(Answer)) == raters * rounds


@pytest.mark.slow
def test_a_waiting_debate_survives_a_kill_9_of_the_server(tmp_path):
    url = f"sqlite:///{tmp_path / 'judge.db'}"
    judge = Judge(url, k=1)
    with judge.sessions() as db:
        service.join(db, judge.study, accounts.create_user(db, "r@example.org", "rater", PASSWORD))
    judge.app.state.engine.dispose()
    live = Server(url, log=tmp_path / "server.log")
    live.start()
    human = HumanJudge(live.url, judge.token, "study", "survivor", poll_s=0.5, timeout_s=120)
    results: list[object] = []
    waiting = threading.Thread(
        target=lambda: results.append(
            asyncio.run(human.judge(StepQuestion("2 + 2?", (), "2 + 2 = 4")))
        )
    )
    try:
        waiting.start()
        rater = Rater(live.url, "r@example.org", time.monotonic() + 120)
        while not judge_posted(judge):
            time.sleep(0.05)
        live.kill9()  # the verifier is mid long-poll
        time.sleep(0.5)
        live.start()
        rater.run()  # answers the question on the restarted server
        waiting.join(timeout=120)
    finally:
        live.stop()
    assert rater.errors == [] and len(rater.acknowledged) == 1
    judgement = results[0]
    assert isinstance(judgement, Judgement) and judgement.human_judgements == 1


def judge_posted(judge: Judge) -> bool:
    with judge.sessions() as db:
        return db.scalar(select(func.count()).select_from(Question)) == 1


def test_eight_retries_of_one_answer_at_once_record_it_once(tmp_path):
    run_concurrent_retry_test(Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=1))


def run_concurrent_retry_test(judge: Judge) -> None:
    """The same answer sent 8 times at the same instant: 1 recorded, 7 duplicates, no 409."""
    with judge.sessions() as db:
        rater = accounts.create_user(db, "r@example.org", "rater", PASSWORD)
        service.join(db, judge.study, rater)
    assert judge.post_question("d", "So 7 * 5 = 35").status_code == 201
    with judge.sessions() as db:
        assignment, question = handout.next_assignment(db, rater)
    shown = service.shown_sha256(question.payload)
    barrier, results = threading.Barrier(8, timeout=120), []

    def submit():
        barrier.wait()
        with judge.sessions() as db:
            results.append(
                service.submit_answer(db, rater, assignment.id, yes=True, confidence=2, shown=shown)
            )

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["duplicate"] * 7 + ["recorded"]
