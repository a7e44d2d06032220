"""The statements a rater's requests run, each built once per shape and then reused.

Building an SQLAlchemy statement (comparisons, joins, coercions) costs about as much as
running it on SQLite: under load, a rater's next step and answer spent a fifth of their
time building the same dozen statements again and again. Here each statement is built
once, with its values as bound parameters (``:rater``, ``:study``, ``:now``, ...), and
SQLAlchemy's compiled cache then reuses its SQL. A statement whose shape depends on a
study's design (its ordering, ``one_step_per_debate``, the kinds of question a stage
hands out) is built once for each shape (:func:`functools.cache`).

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> db.execute(memberships(), {"rater": 1}).all()
    []
    >>> work_query(True) is work_query(True)
    True
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    Insert,
    Integer,
    Select,
    Update,
    bindparam,
    case,
    cast,
    exists,
    false,
    func,
    insert,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.sql.dml import ReturningInsert

from .models import (
    Answer,
    Assignment,
    AuditEntry,
    Membership,
    Question,
    Study,
    User,
    WebSession,
)

PRIME = 2_147_483_647
"""The modulus of the per-rater random order (a prime: each multiplier permutes keys)."""

RATER = bindparam("rater", type_=Integer)
STUDY = bindparam("study", type_=Integer)
NOW = bindparam("now", type_=DateTime)
LEASE_START = bindparam("lease_start", type_=DateTime)  # now - LEASE
MULTIPLIER = bindparam("multiplier", type_=BigInteger)
CAP = bindparam("cap", type_=Integer)


@functools.cache
def session_user() -> Select[Any]:
    """The user of a live session ``:sid`` at ``:now`` (one statement: session and user)."""
    return (
        select(User)
        .join(WebSession, WebSession.user_id == User.id)
        .where(
            WebSession.id == bindparam("sid"),
            WebSession.revoked_at.is_(None),
            WebSession.expires_at > NOW,
            User.disabled_at.is_(None),
        )
    )


@functools.cache
def memberships() -> Select[Membership, Study]:
    """``(Membership, Study)`` of every study of ``:rater``, oldest study first."""
    return (
        select(Membership, Study)
        .join(Study, Study.id == Membership.study_id)
        .where(Membership.user_id == RATER)
        .order_by(Study.id)
    )


def kind_in(kinds: tuple[str, ...]) -> Any:
    """``Question.kind`` is one of ``kinds``, as plain comparisons.

    Not ``IN (...)``: SQLAlchemy expands an IN list only when it runs a statement, and
    :mod:`.fastsql` runs these compiled once.
    """
    return or_(*(Question.kind == kind for kind in kinds))


def pending() -> Any:
    """Assignments of the correlated question still being answered, within their lease."""
    return (
        select(func.count(Assignment.id))
        .where(
            Assignment.question_pk == Question.id,
            Assignment.created_at >= LEASE_START,
            Assignment.skipped_at.is_(None),
            ~exists().where(Answer.assignment_id == Assignment.id),
        )
        .correlate(Question)
        .scalar_subquery()
    )


def _work_filter(one_step_per_debate: bool) -> tuple[Any, ...]:
    """The conditions on the work questions of ``:study`` that ``:rater`` may be handed now."""
    taken = select(Assignment.question_pk).where(Assignment.rater_id == RATER)
    conditions: tuple[Any, ...] = (
        Question.study_id == STUDY,
        Question.kind == "work",
        Question.closed.is_(False),
        Question.id.not_in(taken),
        Question.n_answers + pending() < Question.k,
    )
    if one_step_per_debate:
        seen = (
            select(Question.debate_id)
            .join(Assignment, Assignment.question_pk == Question.id)
            .where(Assignment.rater_id == RATER, Question.study_id == STUDY)
        )
        conditions += (Question.debate_id.not_in(seen),)
    return conditions


@functools.cache
def work_query(one_step_per_debate: bool) -> Select[Any]:
    """The ids of the work questions of ``:study`` that ``:rater`` may be handed now."""
    return select(Question.id).where(*_work_filter(one_step_per_debate))


@functools.cache
def stage_counts(one_step_per_debate: bool) -> Select[Any]:
    """One statement for the counts a rater's stage needs: rows ``(what, kind, n)``.

    ``size``: how many training and qualification questions ``:study`` has; ``left``:
    the work steps waiting for ``:rater``, counted up to ``:cap``. (What the rater
    answered is kept on their membership: :class:`~.models.Membership`.)
    """
    sizes = (
        select(literal("size"), Question.kind, func.count(Question.id))
        .where(Question.study_id == STUDY, kind_in(("training", "qualification")))
        .group_by(Question.kind)
    )
    waiting = work_query(one_step_per_debate).limit(CAP).subquery()
    n_left = select(func.count()).select_from(waiting).scalar_subquery()
    left = select(literal("left"), literal("work"), n_left)
    return select(union_all(sizes, left).subquery())


@functools.cache
def current(kinds: tuple[str, ...]) -> Select[Assignment, Question]:
    """``(Assignment, Question)``: the open assignment of ``:rater`` in ``:study``, of ``kinds``."""
    return (
        select(Assignment, Question)
        .join(Question, Question.id == Assignment.question_pk)
        .outerjoin(Answer, Answer.assignment_id == Assignment.id)
        .where(
            Assignment.rater_id == RATER,
            Assignment.done == false(),  # the (rater_id, done) index: no walk of the rest
            Assignment.skipped_at.is_(None),
            Answer.id.is_(None),
            Question.study_id == STUDY,
            kind_in(kinds),
            Question.closed.is_(False),
        )
        .order_by(Assignment.id)
        .limit(1)
    )


def _ordered(query: Select[Any], random: bool) -> Select[Any]:
    if random:  # a different permutation of the keys for each rater (``:multiplier``)
        key = cast(Question.shuffle, BigInteger) * MULTIPLIER % PRIME
        return query.order_by(key, Question.id)
    return query.order_by(Question.id)


@functools.cache
def open_question(random: bool, one_step_per_debate: bool) -> Select[Any]:
    """The next open work question with a free slot for ``:rater`` (rows locked on PostgreSQL)."""
    query = select(Question).where(*_work_filter(one_step_per_debate))
    return _ordered(query, random).limit(1).with_for_update(skip_locked=True, of=Question)


@functools.cache
def first_unseen(kinds: tuple[str, ...], random: bool) -> Select[Any]:
    """The first question of these kinds in ``:study`` never handed to ``:rater``."""
    seen = select(Assignment.question_pk).where(Assignment.rater_id == RATER)
    query = select(Question).where(
        Question.study_id == STUDY, kind_in(kinds), Question.id.not_in(seen)
    )
    return _ordered(query, random).limit(1)


@functools.cache
def answering() -> Select[Assignment, Question, Study, int, Membership]:
    """Everything an answer to assignment ``:assignment`` of ``:rater`` needs, in one row.

    ``(Assignment, Question, Study, answer id or None, Membership or None)``.
    """
    return (
        select(Assignment, Question, Study, Answer.id, Membership)
        .join(Question, Question.id == Assignment.question_pk)
        .join(Study, Study.id == Question.study_id)
        .outerjoin(Answer, Answer.assignment_id == Assignment.id)
        .outerjoin(
            Membership,
            (Membership.study_id == Study.id) & (Membership.user_id == Assignment.rater_id),
        )
        .where(Assignment.id == bindparam("assignment"), Assignment.rater_id == RATER)
    )


@functools.cache
def take_slot() -> Any:
    """Count one more answer to question ``:question`` unless it has k; close it at k.

    Returns the row's new ``(n_answers, closed, closed_at)``, or nothing when it had k.

    The right-hand sides of ``SET`` see the row as it was, so ``closed`` becomes true
    exactly when this answer is the k-th.
    """
    full = Question.n_answers + 1 >= Question.k
    return (
        update(Question)
        .where(Question.id == bindparam("question"), Question.n_answers < Question.k)
        .values(
            n_answers=Question.n_answers + 1,
            closed=full,
            closed_at=case((full, NOW), else_=Question.closed_at),
        )
        .returning(Question.n_answers, Question.closed, Question.closed_at)
        .execution_options(synchronize_session=False)
    )


@functools.cache
def insert_assignment() -> ReturningInsert[Assignment]:
    """Insert one :class:`~.models.Assignment` and return it (no unit of work to flush)."""
    return insert(Assignment).returning(Assignment)


@functools.cache
def count_answer() -> Update:
    """Add one answer to a kind's count on ``:rater``'s membership of ``:study``.

    ``:training``, ``:qualification``, ``:work`` and ``:right`` are 0 or 1: the kind of
    the question answered, and (qualification) whether the answer was the expected one.
    """
    return (
        update(Membership)
        .where(Membership.study_id == STUDY, Membership.user_id == RATER)
        .values(
            n_training=Membership.n_training + bindparam("training", type_=Integer),
            n_qualification=Membership.n_qualification + bindparam("qualification", type_=Integer),
            right_qualification=Membership.right_qualification + bindparam("right", type_=Integer),
            n_work=Membership.n_work + bindparam("work", type_=Integer),
        )
        .execution_options(synchronize_session=False)
    )


@functools.cache
def finish_assignment() -> Update:
    """Mark assignment ``:assignment`` done (answered or skipped)."""
    return (
        update(Assignment)
        .where(Assignment.id == bindparam("assignment"))
        .values(done=True)
        .execution_options(synchronize_session=False)
    )


@functools.cache
def insert_answer() -> Insert:
    """Insert one :class:`~.models.Answer` row (Core: no unit of work to flush)."""
    return insert(Answer.metadata.tables["answers"])


@functools.cache
def insert_audit() -> Insert:
    """Insert one :class:`~.models.AuditEntry` row (Core: no unit of work to flush)."""
    return insert(AuditEntry.metadata.tables["audit_log"])
