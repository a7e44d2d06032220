"""Each rater's progress kept on their membership: equal to a recount, and migrated in."""

from __future__ import annotations

import contextlib
import random

import pytest

pytest.importorskip("sqlalchemy")

from alembic import command
from alembic.config import Config
from sqlalchemy import func, select

from proofgames.judge import handout, service
from proofgames.judge.accounts import create_user
from proofgames.judge.db import MIGRATIONS, make_engine, migrate, session_factory
from proofgames.judge.errors import Conflict
from proofgames.judge.models import Answer, Assignment, Membership, Question
from proofgames.judges import StepQuestion

KINDS = ("training", "qualification", "work", "gold")


def _recount(db, membership: Membership) -> tuple[int, int, int, int]:
    """The counts the membership keeps, computed afresh from the answers."""

    def n(kind: str, right: bool = False) -> int:
        query = (
            select(func.count(Answer.id))
            .join(Question, Question.id == Answer.question_pk)
            .where(Answer.rater_id == membership.user_id, Question.study_id == membership.study_id,
                   Question.kind == kind)
        )  # fmt: skip
        if right:
            query = query.where(Answer.yes == Question.expected)
        return int(db.scalar(query) or 0)

    return n("training"), n("qualification"), n("qualification", True), n("work")


def _kept(m: Membership) -> tuple[int, int, int, int]:
    return m.n_training, m.n_qualification, m.right_qualification, m.n_work


def _seeded(db, seed: int):
    rng = random.Random(seed)
    study = service.create_study(db, f"s{seed}", k=2)
    raters = [create_user(db, f"r{i}@example.org", "rater", "a long password") for i in range(3)]
    for r in raters:
        service.join(db, study, r)
    for i in range(24):
        kind = KINDS[i % 4]
        q = StepQuestion(task="2 + 2?", premises=(), step=f"{i}")
        expected = None if kind == "work" else rng.random() < 0.5
        service.post_question(db, study, f"d{i}", q, kind=kind, expected=expected)
    return rng, study, raters


def test_the_kept_counts_equal_a_recount_after_random_answers_and_skips():
    engine = make_engine("sqlite://")
    migrate(engine)
    db = session_factory(engine)()
    rng, _, raters = _seeded(db, 7)
    for _ in range(60):
        rater = rng.choice(raters)
        turn = handout.next_turn(db, rater)
        if turn.assignment is None or turn.question is None:
            continue
        if turn.question.kind == "work" and rng.random() < 0.2:
            handout.skip(db, rater, turn.assignment.id)
            continue
        yes = (
            rng.choice([True, False, None]) if turn.question.kind == "work" else rng.random() < 0.5
        )
        shown = service.shown_sha256(turn.question.payload)
        with contextlib.suppress(Conflict):  # a work question that closed meanwhile
            service.submit_answer(db, rater, turn.assignment.id, yes=yes, confidence=3, shown=shown)
    members = db.scalars(select(Membership)).all()
    assert sum(m.n_training + m.n_qualification + m.n_work for m in members) > 10
    for m in members:
        db.refresh(m)
        assert _kept(m) == _recount(db, m)
    for a in db.scalars(select(Assignment)).all():
        has_answer = db.scalar(select(Answer.id).where(Answer.assignment_id == a.id)) is not None
        assert a.done == (has_answer or a.skipped_at is not None), a.id


def test_the_migration_fills_the_counts_from_the_answers_already_stored(tmp_path):
    url = f"sqlite:///{tmp_path / 'j.db'}"
    engine = make_engine(url)
    migrate(engine)
    db = session_factory(engine)()
    rng, _, raters = _seeded(db, 3)
    for rater in raters:
        for _ in range(8):
            turn = handout.next_turn(db, rater)
            if turn.assignment is None or turn.question is None:
                break
            shown = service.shown_sha256(turn.question.payload)
            yes = rng.random() < 0.5
            service.submit_answer(db, rater, turn.assignment.id, yes=yes, confidence=3, shown=shown)
    expected = {m.id: _kept(m) for m in db.scalars(select(Membership)).all()}
    assert any(sum(v) for v in expected.values())
    db.close()
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:  # back to before the counts, then up again
        config.attributes["connection"] = connection
        command.downgrade(config, "0004")
        command.upgrade(config, "head")
    db = session_factory(engine)()
    for m in db.scalars(select(Membership)).all():
        assert _kept(m) == expected[m.id] == _recount(db, m)
    assert all(a.done for a in db.scalars(select(Assignment)).all())  # all were answered
