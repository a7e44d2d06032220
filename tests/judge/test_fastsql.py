"""The hot statements on SQLite's driver: the same rows, errors, defaults and events.

:mod:`proofgames.judge.fastsql` runs :mod:`proofgames.judge.statements` without
SQLAlchemy's execution machinery; these tests hold it to what SQLAlchemy itself gives
for the same statement and values, on a database with answers, skips and checks in it.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import event, inspect, select
from sqlalchemy.exc import IntegrityError

from proofgames.judge import accounts, fastsql, handout, service, statements
from proofgames.judge.models import (
    Answer,
    Assignment,
    AuditEntry,
    Membership,
    Question,
    Study,
    User,
)
from proofgames.judges import StepQuestion

from .judge_support import WARNING

pytestmark = pytest.mark.filterwarnings(WARNING)


def _busy_study(judge: Any, seed: int) -> tuple[int, list[int]]:
    """Questions of every kind, raters who answered, skipped or left steps open."""
    rng = random.Random(seed)
    with judge.sessions() as db:
        study = db.get(Study, judge.study.id)
        for i in range(12):
            q = StepQuestion(task="Compute 3 * 4.", premises=("3 = 3",), step=f"3 * 4 = {i}")
            kind = rng.choice(["work", "work", "gold", "training", "qualification"])
            expected = None if kind == "work" else bool(i % 2)
            service.post_question(db, study, f"d-{i % 5}", q, kind=kind, expected=expected)
        raters = []
        for r in range(3):
            user = accounts.create_user(db, f"r{r}@example.org", "rater", "a long password")
            service.join(db, study, user)
            raters.append(user.id)
        db.commit()
    for rater_id in raters:
        for _ in range(6):
            with judge.sessions() as db:
                rater = db.get(User, rater_id)
                step = handout.next_assignment(db, rater)
                if step is None:
                    break
                assignment, question = step
                if rng.random() < 0.2 and question.kind == "work":
                    handout.skip(db, rater, assignment.id)
                elif rng.random() < 0.8:
                    shown = service.shown_sha256(question.payload)
                    service.record_answer(db, rater, assignment.id, yes=rng.random() < 0.5,
                                          confidence=3, shown=shown)  # fmt: skip
    return judge.study.id, raters


def _values(study: int, rater: int) -> dict[str, Any]:
    lease = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - handout.LEASE
    return {"study": study, "rater": rater, "lease_start": lease, "cap": 100, "multiplier": 7}


def _queries() -> list[Any]:
    return [
        statements.memberships(),
        statements.stage_counts(False),
        statements.stage_counts(True),
        statements.current(("work", "gold", "attention")),
        statements.current(("training",)),
        statements.open_question(False, False),
        statements.open_question(True, True),
        statements.first_unseen(("gold", "attention"), True),
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_fast_path_gives_sqlalchemys_rows(judge, seed):
    study, raters = _busy_study(judge, seed)
    found = 0
    with judge.sessions() as db:
        dialect = db.connection().dialect
        for rater in raters:
            values = _values(study, rater)
            for query in _queries():
                assert fastsql.prepared(query, dialect, frozenset(values)) is not None, query
                expected = [tuple(row) for row in db.connection().execute(query, values)]
                assert fastsql.rows(db, query, values) == expected, query
                found += len(expected)
            for assignment in db.scalars(select(Assignment.id)).all():
                params = {"assignment": assignment, "rater": rater}
                expected = [
                    tuple(r) for r in db.connection().execute(statements.answering(), params)
                ]
                assert fastsql.rows(db, statements.answering(), params) == expected
                found += len(expected)
    assert found >= 20  # the comparisons were of rows, not of empty results


def test_entities_are_transient_copies_of_the_rows(judge):
    study, raters = _busy_study(judge, 3)
    with judge.sessions() as db:
        found = fastsql.rows(db, statements.memberships(), {"rater": raters[0]})
        cut = fastsql.width(Membership)
        member = fastsql.entity(Membership, found[0][:cut])
        copy = fastsql.entity(Study, found[0][cut:])
        stored = db.get(Study, study)
        assert inspect(copy).transient and copy is not stored
        for column in Study.__mapper__.column_attrs:
            assert getattr(copy, column.key) == getattr(stored, column.key), column.key
        assert member.user_id == raters[0] and member.study_id == study
        assert copy not in db


def test_inserts_fill_python_defaults_and_raise_sqlalchemys_errors(judge):
    study, raters = _busy_study(judge, 4)
    with judge.sessions() as db:
        question = db.scalars(select(Question).where(Question.study_id == study)).first()
        assert question is not None
        values = {"question_pk": question.id, "rater_id": raters[0]}
        row = fastsql.rows(db, statements.insert_assignment(), values)[0]
        made = fastsql.entity(Assignment, row)
        assert made.created_at is not None and made.done is False and made.skipped_at is None
        db.commit()
        assert db.get(Assignment, made.id).created_at == made.created_at
        audit = {"actor_id": raters[0], "action": "answer", "detail": {"x": [1, "é"]}}
        assert fastsql.rows(db, statements.insert_audit(), audit) == []
        db.commit()
        entry = db.scalars(select(AuditEntry).order_by(AuditEntry.id.desc())).first()
        assert entry is not None and entry.detail == {"x": [1, "é"]} and entry.at is not None
        answer = db.scalars(select(Answer)).first()
        assert answer is not None
        duplicate = {c.key: getattr(answer, c.key) for c in Answer.__table__.columns}
        duplicate.pop("id")
        with pytest.raises(IntegrityError):  # one answer per assignment
            fastsql.rows(db, statements.insert_answer(), duplicate)
        db.rollback()


def test_take_slot_returns_the_new_counts_and_nothing_at_k(judge):
    with judge.sessions() as db:
        study = db.get(Study, judge.study.id)
        q = StepQuestion(task="t", premises=(), step="s")
        row, _ = service.post_question(db, study, "d", q, k=2)
        now = dt.datetime(2026, 12, 6, 15, 0, 0)
        first = fastsql.rows(db, statements.take_slot(), {"question": row.id, "now": now})
        second = fastsql.rows(db, statements.take_slot(), {"question": row.id, "now": now})
        third = fastsql.rows(db, statements.take_slot(), {"question": row.id, "now": now})
        assert first == [(1, False, None)]
        assert second == [(2, True, now)]
        assert third == []


def test_listeners_see_each_statement(judge):
    seen: list[str] = []

    def record(conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        seen.append(sql)

    engine = judge.app.state.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        with judge.sessions() as db:
            fastsql.rows(db, statements.memberships(), {"rater": 1})
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert len(seen) == 1 and seen[0].startswith("SELECT memberships.id")


def test_a_session_that_holds_the_rows_sees_the_answers_changes(judge):
    """The statements change rows; objects the same session loaded before are told."""
    with judge.sessions() as db:
        study = db.get(Study, judge.study.id)
        rater = accounts.create_user(db, "held@example.org", "rater", "a long password")
        service.join(db, study, rater)
        q = StepQuestion(task="t", premises=(), step="s")
        question, _ = service.post_question(db, study, "d", q, k=1)
        member = db.scalars(select(Membership).where(Membership.user_id == rater.id)).one()
        assignment, _ = handout.next_assignment(db, rater) or (None, None)
        assert assignment is not None and member.n_work == 0 and not question.closed
        held = db.get(Assignment, assignment.id)
        assert held is not None and held.done is False
        shown = service.shown_sha256(question.payload)
        assert service.submit_answer(db, rater, assignment.id, yes=True, confidence=3,
                                     shown=shown) == "recorded"  # fmt: skip
        assert (question.closed, question.n_answers) == (True, 1)
        assert member.n_work == 1 and held.done is True
