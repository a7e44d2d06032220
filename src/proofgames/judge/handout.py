"""Handing steps to raters: where each rater stands in each study, and their next step.

:func:`next_turn` walks the rater's studies (oldest first) and returns the first thing to
do: accept a study's consent, or answer a step of the stage they are in (see
:mod:`proofgames.judge.design`). A work question goes to at most ``k`` raters at once:
its answers plus the assignments still within their :data:`LEASE` stay below ``k``. A
rater who walks away blocks a slot for one lease (or until they skip); then another
rater gets it, and whichever answer comes first counts.

Gold and attention questions are interleaved with the work: before each work turn a
keyed hash of (server secret, study, rater, turn) decides, with probability
``gold_rate``, to hand out a check instead, so a rater cannot tell which turns are
checks. Every rater answers every check; checks never close.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> from proofgames.judge.accounts import create_user
    >>> from proofgames.judge.service import create_study, join, post_question
    >>> from proofgames.judges import StepQuestion
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> study = create_study(db, "s", k=1)
    >>> rater = create_user(db, "r@example.org", "rater", "a long password")
    >>> join(db, study, rater)
    >>> _ = post_question(db, study, "d-1", StepQuestion(task="2 + 2?", premises=(), step="4"))
    >>> turn = next_turn(db, rater)
    >>> turn.stage.name, turn.stage.done, turn.stage.total, turn.question.debate_id
    ('work', 0, 1, 'd-1')
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import BigInteger, Select, case, cast, exists, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from .accounts import audit, server_secret
from .db import commit_unsynced, write_gate
from .design import CHECKED_KINDS, is_open
from .errors import Conflict, NotFound
from .models import Answer, Assignment, Membership, Question, Study, User, utcnow
from .service import answered, own_assignment

LEASE = dt.timedelta(minutes=20)
"""How long an assignment holds its slot on a work question before others may take it."""
MAX_TRIES = 20
"""How often a choice is made again when the chosen question was taken meanwhile."""
COUNT_CAP = 100
"""The most waiting work steps counted for a rater's progress (beyond: "100+ more")."""
PRIME = 2_147_483_647
"""The modulus of the per-rater random order (a prime: each multiplier permutes keys)."""
STAGE_KINDS = {
    "training": ("training",),
    "qualification": ("qualification",),
    "work": ("work", *CHECKED_KINDS),
}
"""The kinds of question a rater answers in each stage that hands out steps."""


@dataclass(frozen=True)
class Stage:
    """Where a rater stands in one study.

    ``name`` is ``consent``, ``training``, ``qualification`` or ``work`` (the rater has
    something to do), or ``failed``, ``done``, ``closed`` or ``deactivated`` (they do
    not; ``note`` says why). ``done`` of ``total`` is their progress in the stage; in
    the work without a quota, ``more`` says that over :data:`COUNT_CAP` steps are
    waiting and ``total`` counts only that many of them (a count that stays cheap).
    """

    study: Study
    name: str
    done: int = 0
    total: int = 0
    note: str = ""
    more: bool = False


@dataclass(frozen=True)
class Turn:
    """A rater's next step (``stage`` and, unless it is consent, the step itself).

    With nothing to do, ``stage`` is None and ``waiting`` says where they stand in each
    of their studies.
    """

    stage: Stage | None
    assignment: Assignment | None = None
    question: Question | None = None
    waiting: tuple[Stage, ...] = field(default_factory=tuple)


def _answered(db: Session, study: Study, rater: User) -> dict[str, tuple[int, int]]:
    """Per kind: (answers the rater gave, of which right) in this study.

    It walks the rater's own assignments (indexed by rater), not the study's answers
    (``study_id + 0`` keeps SQLite from starting at the study's questions instead).
    """
    right = func.sum(case((Answer.yes == Question.expected, 1), else_=0))
    rows = db.execute(
        select(Question.kind, func.count(Answer.id), right)
        .select_from(Assignment)
        .join(Answer, Answer.assignment_id == Assignment.id)
        .join(Question, Question.id == Assignment.question_pk)
        .where(Assignment.rater_id == rater.id, Question.study_id + 0 == study.id)
        .group_by(Question.kind)
    ).all()
    return {kind: (int(n), int(ok or 0)) for kind, n, ok in rows}


def _sizes(db: Session, study: Study) -> dict[str, int]:
    """How many training and qualification questions the study has."""
    rows = db.execute(
        select(Question.kind, func.count(Question.id))
        .where(Question.study_id == study.id, Question.kind.in_(("training", "qualification")))
        .group_by(Question.kind)
    ).all()
    return {kind: int(n) for kind, n in rows}


def stage_of(db: Session, study: Study, rater: User, membership: Membership) -> Stage:
    """Where ``rater`` stands in ``study`` now."""
    if membership.deactivated_at is not None:
        return Stage(study, "deactivated", note="you no longer take part in this study")
    why = is_open(study, utcnow())
    if why is not None:
        return Stage(study, "closed", note=why)
    if membership.consented_at is None and (study.consent or study.instructions):
        return Stage(study, "consent")
    sizes, answered = _sizes(db, study), _answered(db, study, rater)
    for stage in ("training", "qualification"):
        done = answered.get(stage, (0, 0))[0]
        if done < sizes.get(stage, 0):
            return Stage(study, stage, done, sizes[stage])
    n, right = answered.get("qualification", (0, 0))
    if n and right < study.pass_mark * n - 1e-9:
        note = f"{right} of {n} qualification steps right; this study needs {study.pass_mark:.0%}"
        return Stage(study, "failed", note=note)
    done = answered.get("work", (0, 0))[0]
    if study.quota is not None and done >= study.quota:
        return Stage(study, "done", done, study.quota, "you have answered this study's quota")
    if study.quota is not None:
        return Stage(study, "work", done, study.quota)
    waiting = _work_query(study, rater, select(Question.id)).limit(COUNT_CAP).subquery()
    left = int(db.scalar(select(func.count()).select_from(waiting)) or 0)
    return Stage(study, "work", done, done + left, more=left >= COUNT_CAP)


def _memberships(db: Session, rater: User) -> list[tuple[Membership, Study]]:
    rows = db.execute(
        select(Membership, Study)
        .join(Study, Study.id == Membership.study_id)
        .where(Membership.user_id == rater.id)
        .order_by(Study.id)
    ).all()
    return [(m, s) for m, s in rows]


def next_turn(db: Session, rater: User) -> Turn:
    """The rater's next step: their open assignment, or a new one (see the module doc)."""
    waiting = []
    for membership, study in _memberships(db, rater):
        stage = stage_of(db, study, rater, membership)
        if stage.name == "consent":
            return Turn(stage)
        if stage.name in STAGE_KINDS:
            found = _current(db, rater, study, STAGE_KINDS[stage.name]) or _new(db, rater, stage)
            if found is not None:
                return Turn(stage, *found)
            if stage.name == "work":
                stage = Stage(study, "done", stage.done, stage.total, "no step is waiting for you")
        waiting.append(stage)
    return Turn(None, waiting=tuple(waiting))


def next_assignment(db: Session, rater: User) -> tuple[Assignment, Question] | None:
    """The rater's next step as (assignment, question), or None (see :func:`next_turn`)."""
    turn = next_turn(db, rater)
    if turn.assignment is None or turn.question is None:
        return None
    return turn.assignment, turn.question


def consent(db: Session, rater: User, study: Study) -> None:
    """Record that ``rater`` accepted ``study``'s consent text and read its instructions."""
    membership = db.scalar(
        select(Membership).where(Membership.study_id == study.id, Membership.user_id == rater.id)
    )
    if membership is None:
        raise NotFound(f"study {study.id} is not yours or does not exist")
    if membership.consented_at is None:
        membership.consented_at = utcnow()
        audit(db, rater, "consent", study=study.id)
        db.commit()


def _current(
    db: Session, rater: User, study: Study, kinds: tuple[str, ...]
) -> tuple[Assignment, Question] | None:
    """The rater's open assignment in this study and stage, if any."""
    row = db.execute(
        select(Assignment, Question)
        .join(Question, Question.id == Assignment.question_pk)
        .outerjoin(Answer, Answer.assignment_id == Assignment.id)
        .where(
            Assignment.rater_id == rater.id,
            Assignment.skipped_at.is_(None),
            Answer.id.is_(None),
            Question.study_id == study.id,
            Question.kind.in_(kinds),
            Question.closed.is_(False),
        )
        .order_by(Assignment.id)
        .limit(1)
    ).first()
    return None if row is None else (row[0], row[1])


def _new(db: Session, rater: User, stage: Stage) -> tuple[Assignment, Question] | None:
    """A new assignment for the stage.

    The next training or qualification step in order; in the work, a check when one is
    due and work is left (no rater ends on checks alone), else a work step.
    """
    study = stage.study
    if stage.name != "work":
        return _take(db, rater, lambda: _first_unseen(db, study, rater, (stage.name,)), False)
    if _check_due(db, study, rater) and _work_left(db, study, rater):
        found = _take(db, rater, lambda: _first_unseen(db, study, rater, CHECKED_KINDS), False)
        if found is not None:
            return found
    return _take(db, rater, lambda: _open_question(db, study, rater), True)


def _take(
    db: Session, rater: User, choose: Callable[[], Question | None], limited: bool
) -> tuple[Assignment, Question] | None:
    """Choose a question and assign it to the rater, trying again if it was taken."""
    for _ in range(MAX_TRIES):
        with write_gate(db):  # SQLite: choose and insert as one step
            question = choose()
            if question is None:
                db.rollback()
                return None
            if limited and _postgres(db) and not _slot_free(db, question.id):  # taken
                # while this statement waited for the row lock (SQLite: the gate held)
                db.rollback()
                continue
            assignment = Assignment(question_pk=question.id, rater_id=rater.id)
            db.add(assignment)
            try:
                commit_unsynced(db)  # a lost assignment is handed out again
            except IntegrityError:  # the same rater asked twice at once: the other won
                db.rollback()
            else:
                return assignment, question
    return None


def _postgres(db: Session) -> bool:
    """Whether the session's database is PostgreSQL (SQLite chooses under the gate)."""
    return db.get_bind().dialect.name == "postgresql"


def _multiplier(rater: User) -> int:
    """The rater's multiplier for the random order: in [1, PRIME - 1]."""
    digest = hashlib.sha256(f"order:{rater.id}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (PRIME - 1)


def _ordered(query: Select[Any], study: Study, rater: User) -> Select[Any]:
    if study.ordering == "random":  # a different permutation of the keys for each rater
        key = cast(Question.shuffle, BigInteger) * _multiplier(rater) % PRIME
        return query.order_by(key, Question.id)
    return query.order_by(Question.id)


def _first_unseen(
    db: Session, study: Study, rater: User, kinds: tuple[str, ...]
) -> Question | None:
    """The first question of these kinds the rater was never handed (training in order)."""
    seen = select(Assignment.question_pk).where(Assignment.rater_id == rater.id)
    query = select(Question).where(
        Question.study_id == study.id, Question.kind.in_(kinds), Question.id.not_in(seen)
    )
    if kinds != ("training",) and kinds != ("qualification",):
        query = _ordered(query, study, rater)
    else:
        query = query.order_by(Question.id)
    return db.scalar(query.limit(1))


def _work_left(db: Session, study: Study, rater: User) -> bool:
    """Whether a work step is waiting for the rater (checks come only between work)."""
    query = _work_query(study, rater, select(Question.id)).limit(1)
    return db.scalar(query) is not None


def _check_due(db: Session, study: Study, rater: User) -> bool:
    """Whether this work turn hands out a check (probability ``gold_rate``, keyed)."""
    if study.gold_rate <= 0:
        return False
    turns = db.scalar(
        select(func.count(Assignment.id))
        .join(Question, Question.id == Assignment.question_pk)
        .where(
            Assignment.rater_id == rater.id,
            Question.study_id == study.id,
            Question.kind.in_(STAGE_KINDS["work"]),
        )
    )
    key = f"gold:{server_secret(db)}:{study.id}:{rater.id}:{turns}".encode()
    draw = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
    return draw < study.gold_rate


def _pending() -> Any:
    """Assignments of the correlated question still being answered, within their lease."""
    return (
        select(func.count(Assignment.id))
        .where(
            Assignment.question_pk == Question.id,
            Assignment.created_at >= utcnow() - LEASE,
            Assignment.skipped_at.is_(None),
            ~exists().where(Answer.assignment_id == Assignment.id),
        )
        .correlate(Question)
        .scalar_subquery()
    )


def _work_query(study: Study, rater: User, query: Select[Any]) -> Select[Any]:
    """Restrict ``query`` to the work questions this rater may be handed now."""
    taken = select(Assignment.question_pk).where(Assignment.rater_id == rater.id)
    query = query.where(
        Question.study_id == study.id,
        Question.kind == "work",
        Question.closed.is_(False),
        Question.id.not_in(taken),
        Question.n_answers + _pending() < Question.k,
    )
    if study.one_step_per_debate:
        seen = (
            select(Question.debate_id)
            .join(Assignment, Assignment.question_pk == Question.id)
            .where(Assignment.rater_id == rater.id, Question.study_id == study.id)
        )
        query = query.where(Question.debate_id.not_in(seen))
    return query


def _open_question(db: Session, study: Study, rater: User) -> Question | None:
    """The next open work question with a free slot for the rater.

    PostgreSQL locks the row it returns (``FOR UPDATE SKIP LOCKED``) until the caller
    commits, so concurrent raters are handed different questions.
    """
    query = _ordered(_work_query(study, rater, select(Question)), study, rater)
    found: Question | None = db.scalar(
        query.limit(1).with_for_update(skip_locked=True, of=Question)
    )
    return found


def _slot_free(db: Session, question_pk: int) -> bool:
    """Whether the question still has a slot, counted afresh once its row is locked.

    On PostgreSQL the choice in :func:`_open_question` was made on the snapshot its
    statement began with; a rater whose assignment committed while this one waited for
    the row lock is not in it. This second statement sees it (READ COMMITTED), so a
    question never goes to more than k raters at once (issue 36, defect 7).
    """
    k, answers = db.execute(
        select(Question.k, Question.n_answers).where(Question.id == question_pk)
    ).one()
    pending = db.scalar(
        select(func.count(Assignment.id)).where(
            Assignment.question_pk == question_pk,
            Assignment.created_at >= utcnow() - LEASE,
            Assignment.skipped_at.is_(None),
            ~exists().where(Answer.assignment_id == Assignment.id),
        )
    )
    return bool(answers + int(pending or 0) < k)


def skip(db: Session, rater: User, assignment_id: int) -> None:
    """The rater passes on a step: its slot is free for another rater at once.

    The rater is not handed that question again. Skipping twice is one skip. Training
    and qualification steps cannot be skipped (every rater answers each of them).

    Raises:
        NotFound: Not the rater's assignment.
        Conflict: It was answered already, or it is a training or qualification step.
    """
    assignment, question = own_assignment(db, rater, assignment_id)
    if answered(db, assignment):
        raise Conflict("this step was answered already: it cannot be skipped")
    if question.kind in ("training", "qualification"):
        raise Conflict(f"a {question.kind} step cannot be skipped: every rater answers it")
    if assignment.skipped_at is None:
        assignment.skipped_at = utcnow()
        audit(db, rater, "skip", assignment=assignment.id)
        db.commit()
