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

from sqlalchemy import exists, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import fastsql, statements
from .accounts import audit, server_secret
from .db import unsynced, write_gate
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


def _params(study: Study, rater: User, **more: Any) -> dict[str, Any]:
    """The bound values of :mod:`.statements` for ``rater`` in ``study`` now."""
    return {"study": study.id, "rater": rater.id, "lease_start": utcnow() - LEASE, **more}


def _counts(
    db: Session, study: Study, rater: User, membership: Membership
) -> dict[tuple[str, str], tuple[int, int]]:
    """``(what, kind) -> (n, right)``: sizes and work left (one statement), answers kept.

    ``("answered", kind)`` comes from the membership's counts; the rest from
    :func:`.statements.stage_counts`.
    """
    query = statements.stage_counts(study.one_step_per_debate)
    rows = fastsql.rows(db, query, _params(study, rater, cap=COUNT_CAP))
    counts = {(what, kind): (int(n), 0) for what, kind, n in rows}
    counts[("answered", "training")] = (membership.n_training, 0)
    right = membership.right_qualification
    counts[("answered", "qualification")] = (membership.n_qualification, right)
    counts[("answered", "work")] = (membership.n_work, 0)
    return counts


def stage_of(db: Session, study: Study, rater: User, membership: Membership) -> Stage:
    """Where ``rater`` stands in ``study`` now."""
    if membership.deactivated_at is not None:
        return Stage(study, "deactivated", note="you no longer take part in this study")
    why = is_open(study, utcnow())
    if why is not None:
        return Stage(study, "closed", note=why)
    if membership.consented_at is None and (study.consent or study.instructions):
        return Stage(study, "consent")
    counts = _counts(db, study, rater, membership)
    for stage in ("training", "qualification"):
        done, size = counts.get(("answered", stage), (0, 0))[0], counts.get(("size", stage))
        if size is not None and done < size[0]:
            return Stage(study, stage, done, size[0])
    n, right = counts.get(("answered", "qualification"), (0, 0))
    if n and right < study.pass_mark * n - 1e-9:
        note = f"{right} of {n} qualification steps right; this study needs {study.pass_mark:.0%}"
        return Stage(study, "failed", note=note)
    done = counts.get(("answered", "work"), (0, 0))[0]
    if study.quota is not None and done >= study.quota:
        return Stage(study, "done", done, study.quota, "you have answered this study's quota")
    if study.quota is not None:
        return Stage(study, "work", done, study.quota)
    left = counts[("left", "work")][0]
    return Stage(study, "work", done, done + left, more=left >= COUNT_CAP)


def _memberships(db: Session, rater: User) -> list[tuple[Membership, Study]]:
    rows = fastsql.rows(db, statements.memberships(), {"rater": rater.id})
    return [fastsql.entities(r, Membership, Study) for r in rows]


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
    found = fastsql.rows(db, statements.current(kinds), _params(study, rater))
    if not found:
        return None
    assignment, question = fastsql.entities(found[0], Assignment, Question)
    return assignment, question


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
            unsynced(db)  # a lost assignment is handed out again
            try:  # one INSERT ... RETURNING: no unit of work to flush
                values = {"question_pk": question.id, "rater_id": rater.id}
                row = fastsql.rows(db, statements.insert_assignment(), values)[0]
                db.commit()
                assignment = fastsql.entity(Assignment, row)
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
    return 1 + int.from_bytes(digest[:8], "big") % (statements.PRIME - 1)


def _first_unseen(
    db: Session, study: Study, rater: User, kinds: tuple[str, ...]
) -> Question | None:
    """The first question of these kinds the rater was never handed (training in order)."""
    random = study.ordering == "random" and kinds not in (("training",), ("qualification",))
    query = statements.first_unseen(kinds, random)
    found: Question | None = db.scalar(query, _params(study, rater, multiplier=_multiplier(rater)))
    return found


def _work_left(db: Session, study: Study, rater: User) -> bool:
    """Whether a work step is waiting for the rater (checks come only between work)."""
    query = statements.work_query(study.one_step_per_debate).limit(1)
    return db.scalar(query, _params(study, rater)) is not None


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


def _open_question(db: Session, study: Study, rater: User) -> Question | None:
    """The next open work question with a free slot for the rater.

    PostgreSQL locks the row it returns (``FOR UPDATE SKIP LOCKED``) until the caller
    commits, so concurrent raters are handed different questions.
    """
    query = statements.open_question(study.ordering == "random", study.one_step_per_debate)
    found = fastsql.rows(db, query, _params(study, rater, multiplier=_multiplier(rater)))
    return fastsql.entity(Question, found[0]) if found else None


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
        assignment.done = True
        audit(db, rater, "skip", assignment=assignment.id)
        db.commit()
