"""Studies, questions, assignments and answers: the judge server's core operations.

No judgement is lost and none is counted twice:

* :func:`post_question` is idempotent on (study, debate id, question id), so a verifier
  that restarts and posts its question again finds the one it posted before;
* :func:`submit_answer` first takes a slot with ``UPDATE questions SET n_answers =
  n_answers + 1 WHERE id = ? AND n_answers < k`` (atomic in SQLite and PostgreSQL), then
  inserts the answer (unique per assignment) and its audit entry, and commits all three
  together before returning; a retry or a double click finds the stored answer and
  returns it again, and a question closes at its k-th answer.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> from proofgames.judge.accounts import create_user
    >>> from proofgames.judges import StepQuestion
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> study = create_study(db, "s", k=1)
    >>> rater = create_user(db, "r@example.org", "rater", "a long password")
    >>> join(db, study, rater)
    >>> q = StepQuestion(task="2 + 2?", premises=(), step="2 + 2 = 4")
    >>> question, created = post_question(db, study, "debate-1", q)
    >>> created, post_question(db, study, "debate-1", q)[1]
    (True, False)
    >>> a, _ = next_assignment(db, rater)
    >>> submit_answer(db, rater, a.id, yes=True, confidence=4, shown=shown_sha256(q.to_dict()))
    'recorded'
    >>> submit_answer(db, rater, a.id, yes=True, confidence=4, shown=shown_sha256(q.to_dict()))
    'duplicate'
    >>> question_result(db, study, "debate-1", q.question_id)["closed"]
    True
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

from sqlalchemy import exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..judges.interface import StepQuestion
from .accounts import audit
from .db import write_gate
from .errors import BadInput, Conflict, NotFound, readable
from .models import Answer, Assignment, Membership, Question, Study, User, utcnow
from .security import sha256

MAX_K = 100
LEASE = dt.timedelta(minutes=20)
"""How long an assignment holds its slot on a question before others may take it."""
MAX_DEBATE_ID = 200

Submitted = Literal["recorded", "duplicate"]


def shown_sha256(payload: dict[str, Any]) -> str:
    """The hash of exactly what a rater is shown (the question's canonical JSON)."""
    return sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False))


def check_k(k: object) -> int:
    """``k`` as an int in [1, MAX_K]; raises :class:`BadInput` otherwise."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise BadInput(f"k (answers per question) must be an integer in [1, {MAX_K}], not {k!r}")
    return k


def create_study(db: Session, name: str, k: int, actor: User | None = None) -> Study:
    """A new study; raises :class:`BadInput` for a bad name or k, or a taken name."""
    name = readable("a study's name", name.strip())
    if not 1 <= len(name) <= 200:
        raise BadInput("a study's name must have 1 to 200 characters")
    study = Study(name=name, k=check_k(k))
    db.add(study)
    try:
        db.flush()
    except IntegrityError:
        db.rollback()
        raise BadInput(f"a study named {name!r} exists already") from None
    audit(db, actor, "create_study", name=name, k=k)
    db.commit()
    return study


def get_study(db: Session, study_id: int) -> Study:
    """The study with this id; raises :class:`NotFound`."""
    study = db.get(Study, study_id)
    if study is None:
        raise NotFound(f"no study with id {study_id}")
    return study


def study_by_name(db: Session, name: str) -> Study:
    """The study with this name; raises :class:`NotFound` (:class:`BadInput` if unreadable)."""
    readable("a study's name", name)
    study = db.scalar(select(Study).where(Study.name == name))
    if study is None:
        raise NotFound(f"no study named {name[:80]!r}")
    return study


def join(db: Session, study: Study, user: User) -> None:
    """Make ``user`` a rater of ``study`` (nothing happens if they are one already)."""
    query = select(Membership).where(Membership.study_id == study.id, Membership.user_id == user.id)
    if db.scalar(query) is None:
        db.add(Membership(study_id=study.id, user_id=user.id))
        db.commit()


def post_question(
    db: Session,
    study: Study,
    debate_id: str,
    question: StepQuestion,
    k: int | None = None,
    actor: User | None = None,
) -> tuple[Question, bool]:
    """Post a question for ``debate_id``; returns (the question, whether it is new).

    Posting the same question for the same debate again returns the stored one.
    """
    if not isinstance(debate_id, str) or not 1 <= len(debate_id) <= MAX_DEBATE_ID:
        raise BadInput(f"debate_id must be a string of 1 to {MAX_DEBATE_ID} characters")
    readable("debate_id", debate_id)
    k = study.k if k is None else check_k(k)
    key = (Question.study_id == study.id, Question.debate_id == debate_id)
    found = db.scalar(select(Question).where(*key, Question.question_id == question.question_id))
    if found is not None:
        return found, False
    row = Question(
        study_id=study.id,
        debate_id=debate_id,
        question_id=question.question_id,
        payload=question.to_dict(),
        k=k,
        n_answers=0,
        closed=False,
    )
    db.add(row)
    try:
        db.flush()
        audit(db, actor, "post_question", debate_id=debate_id, question_id=question.question_id)
        db.commit()
    except IntegrityError:  # the same question posted concurrently: keep the first
        db.rollback()
        found = db.scalar(
            select(Question).where(*key, Question.question_id == question.question_id)
        )
        assert found is not None
        return found, False
    return row, True


def find_question(db: Session, study: Study, debate_id: str, question_id: str) -> Question:
    """The question posted under this key; raises :class:`NotFound`."""
    readable("debate_id", debate_id)
    readable("question_id", question_id)
    row = db.scalar(
        select(Question).where(
            Question.study_id == study.id,
            Question.debate_id == debate_id,
            Question.question_id == question_id,
        )
    )
    if row is None:
        raise NotFound(f"no question {question_id[:64]!r} for debate {debate_id[:64]!r}")
    return row


def question_result(db: Session, study: Study, debate_id: str, question_id: str) -> dict[str, Any]:
    """A question's state and answers, as the API returns them."""
    row = find_question(db, study, debate_id, question_id)
    every = db.scalars(select(Answer).where(Answer.question_pk == row.id).order_by(Answer.id)).all()
    answers = [a for a in every if a.yes is not None]  # "can't tell" takes no slot
    yes = sum(bool(a.yes) for a in answers)
    return {
        "debate_id": row.debate_id,
        "question_id": row.question_id,
        "k": row.k,
        "closed": row.closed,
        "n_answers": len(answers),
        "cant_tell": len(every) - len(answers),
        "p_yes": yes / len(answers) if answers else None,
        "answers": [
            {"answer_id": a.id, "rater": a.rater_id, "yes": a.yes, "confidence": a.confidence}
            for a in answers
        ],
    }


#: How often :func:`next_assignment` chooses again when its choice was taken meanwhile.
MAX_TRIES = 20


def next_assignment(db: Session, rater: User) -> tuple[Assignment, Question] | None:
    """The rater's current open assignment, or a new one on the oldest open question.

    A question is handed out to at most k raters at once: its answers plus the
    assignments still within their :data:`LEASE` stay below k. A rater who walks away
    blocks a slot for one lease; then another rater gets the question, and whichever
    answer comes first counts (a late one is refused: the question has closed).
    """
    mine = _current(db, rater)
    if mine is not None:
        return mine
    for _ in range(MAX_TRIES):
        with write_gate(db):  # SQLite: choose and insert as one step (the session holds a
            question = _open_question(db, rater)  # connection)
            if question is None:
                db.rollback()
                return None
            if not _slot_free(db, question.id):  # taken while we waited for its row lock
                db.rollback()
                continue
            assignment = Assignment(question_pk=question.id, rater_id=rater.id)
            db.add(assignment)
            try:
                db.commit()
            except IntegrityError:  # the same rater asked twice at once: the other won
                db.rollback()
            else:
                return assignment, question
        mine = _current(db, rater)
        if mine is not None:
            return mine
    return None


def _current(db: Session, rater: User) -> tuple[Assignment, Question] | None:
    """The rater's open assignment, if any."""
    row = db.execute(
        select(Assignment, Question)
        .join(Question, Question.id == Assignment.question_pk)
        .outerjoin(Answer, Answer.assignment_id == Assignment.id)
        .where(
            Assignment.rater_id == rater.id,
            Assignment.skipped_at.is_(None),
            Answer.id.is_(None),
            Question.closed.is_(False),
        )
        .order_by(Assignment.id)
        .limit(1)
    ).first()
    return None if row is None else (row[0], row[1])


def skip(db: Session, rater: User, assignment_id: int) -> None:
    """The rater passes on a step: its slot is free for another rater at once.

    The rater is not handed that question again. Skipping twice is one skip.

    Raises:
        NotFound: Not the rater's assignment.
        Conflict: It was answered already.
    """
    assignment, _ = own_assignment(db, rater, assignment_id)
    if _answered(db, assignment):
        raise Conflict("this step was answered already: it cannot be skipped")
    if assignment.skipped_at is None:
        assignment.skipped_at = utcnow()
        audit(db, rater, "skip", assignment=assignment.id)
        db.commit()


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


def _open_question(db: Session, rater: User) -> Question | None:
    """The oldest open question of the rater's studies that has a free slot for them.

    PostgreSQL locks the row it returns (``FOR UPDATE SKIP LOCKED``) until the caller
    commits, so concurrent raters are handed different questions.
    """
    studies = select(Membership.study_id).where(Membership.user_id == rater.id)
    taken = select(Assignment.question_pk).where(Assignment.rater_id == rater.id)
    pending = (  # assignments still being answered, within their lease
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
    return db.scalar(
        select(Question)
        .where(
            Question.study_id.in_(studies),
            Question.closed.is_(False),
            Question.id.not_in(taken),
            Question.n_answers + pending < Question.k,
        )
        .order_by(Question.id)
        .limit(1)
        .with_for_update(skip_locked=True, of=Question)
    )


def own_assignment(db: Session, rater: User, assignment_id: int) -> tuple[Assignment, Question]:
    """The rater's own assignment; anyone else's looks exactly like a missing one."""
    row = db.get(Assignment, assignment_id)
    if row is None or row.rater_id != rater.id:
        raise NotFound(f"assignment {assignment_id} is not yours or does not exist")
    question = db.get(Question, row.question_pk)
    assert question is not None
    return row, question


def check_answer(yes: object, confidence: object, elapsed_ms: object) -> None:
    """Raise :class:`BadInput` unless the answer's fields are well formed."""
    if not isinstance(yes, bool):
        raise BadInput(f"answer must be yes or no, not {yes!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, int) or not 1 <= confidence <= 5:
        raise BadInput(f"confidence must be an integer from 1 to 5, not {confidence!r}")
    if elapsed_ms is not None and (
        isinstance(elapsed_ms, bool)
        or not isinstance(elapsed_ms, int)
        or not 0 <= elapsed_ms <= 10**9
    ):
        raise BadInput(f"elapsed_ms must be an integer from 0 to 10^9, not {elapsed_ms!r}")


def submit_answer(
    db: Session,
    rater: User,
    assignment_id: int,
    *,
    yes: bool,
    confidence: int,
    shown: str,
    elapsed_ms: int | None = None,
) -> Submitted:
    """Record a rater's answer, committed before this returns.

    Returns:
        ``"recorded"`` for a new answer, ``"duplicate"`` when this assignment was
        answered already (a retry or double click: nothing new is stored).

    Raises:
        NotFound: Not the rater's assignment.
        Conflict: The question closed (k answers) before this one, or ``shown`` is not
            the hash of what the question shows.
        BadInput: A malformed field.
    """
    check_answer(yes, confidence, elapsed_ms)
    assignment, question = own_assignment(db, rater, assignment_id)
    if _answered(db, assignment):
        return "duplicate"
    if assignment.skipped_at is not None:
        raise Conflict("you skipped this step: its answer is not taken")
    if shown != shown_sha256(question.payload):
        raise Conflict("the answer was given to a different text than this question shows")
    with write_gate(db):  # taken while this session holds its connection: no deadlock
        status = _record(db, rater, assignment, question, yes, confidence, shown, elapsed_ms)
    if status is not None:
        return status
    if _answered(db, assignment):  # a concurrent retry of this very answer took the slot
        return "duplicate"
    raise Conflict("this question has closed: it has all the answers it needs")


def _record(
    db: Session,
    rater: User,
    assignment: Assignment,
    question: Question,
    yes: bool,
    confidence: int,
    shown: str,
    elapsed_ms: int | None,
) -> Submitted | None:
    """Take a slot, store the answer and its audit entry, commit: all or nothing.

    Returns None when no slot was left (the question has closed, perhaps by a
    concurrent retry of this same answer).
    """
    if not _take_slot(db, question):
        db.rollback()
        return None
    db.add(
        Answer(
            assignment_id=assignment.id,
            question_pk=question.id,
            rater_id=rater.id,
            yes=yes,
            confidence=confidence,
            elapsed_ms=elapsed_ms,
            shown_sha256=shown,
        )
    )
    audit(
        db, rater, "answer", assignment_id=assignment.id, question_id=question.question_id,
        debate_id=question.debate_id, yes=yes, confidence=confidence, elapsed_ms=elapsed_ms,
        shown=question.payload, shown_sha256=shown,
    )  # fmt: skip
    try:
        db.commit()
    except IntegrityError:  # a concurrent retry of this very answer won: keep one
        db.rollback()
        return "duplicate"
    return "recorded"


def _answered(db: Session, assignment: Assignment) -> bool:
    return db.scalar(select(Answer.id).where(Answer.assignment_id == assignment.id)) is not None


def _take_slot(db: Session, question: Question) -> bool:
    """Count one more answer unless the question has k; close it at k (uncommitted)."""
    took = db.execute(
        update(Question)
        .where(Question.id == question.id, Question.n_answers < Question.k)
        .values(n_answers=Question.n_answers + 1)
    )
    if took.rowcount != 1:  # type: ignore[attr-defined]
        return False
    db.execute(
        update(Question)
        .where(Question.id == question.id, Question.n_answers >= Question.k)
        .values(closed=True, closed_at=utcnow())
    )
    return True
