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
    >>> from proofgames.judge.handout import next_assignment
    >>> a, _ = next_assignment(db, rater)
    >>> submit_answer(db, rater, a.id, yes=True, confidence=4, shown=shown_sha256(q.to_dict()))
    'recorded'
    >>> submit_answer(db, rater, a.id, yes=True, confidence=4, shown=shown_sha256(q.to_dict()))
    'duplicate'
    >>> question_result(db, study, "debate-1", q.question_id)["closed"]
    True
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..judges.interface import StepQuestion
from . import fastsql, statements
from .accounts import audit
from .db import write_gate
from .design import check_kind, is_open
from .errors import BadInput, Conflict, NotFound, readable
from .models import Answer, Assignment, Membership, Question, Study, User, utcnow
from .security import sha256

MAX_K = 100
MAX_DEBATE_ID = 200
MAX_RATIONALE = 5_000
PRIME = 2_147_483_647
"""Random order keys (``Question.shuffle``) are in [1, PRIME - 1]."""

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
    *,
    kind: str = "work",
    expected: bool | None = None,
    explanation: str = "",
) -> tuple[Question, bool]:
    """Post a question for ``debate_id``; returns (the question, whether it is new).

    Posting the same question for the same debate again returns the stored one. A
    question of a kind other than ``work`` (see :mod:`proofgames.judge.design`) carries
    its expected answer and the explanation shown as feedback.
    """
    if not isinstance(debate_id, str) or not 1 <= len(debate_id) <= MAX_DEBATE_ID:
        raise BadInput(f"debate_id must be a string of 1 to {MAX_DEBATE_ID} characters")
    readable("debate_id", debate_id)
    kind, expected, explanation = check_kind(kind, expected, explanation)
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
        kind=kind,
        expected=expected,
        explanation=explanation,
        shuffle=secrets.randbelow(PRIME - 1) + 1,
    )
    db.add(row)
    try:
        db.flush()
        audit(
            db, actor, "post_question", debate_id=debate_id, question_id=question.question_id,
            kind=kind,
        )  # fmt: skip
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


def own_assignment(db: Session, rater: User, assignment_id: int) -> tuple[Assignment, Question]:
    """The rater's own assignment; anyone else's looks exactly like a missing one."""
    row = db.get(Assignment, assignment_id)
    if row is None or row.rater_id != rater.id:
        raise NotFound(f"assignment {assignment_id} is not yours or does not exist")
    question = db.get(Question, row.question_pk)
    assert question is not None
    return row, question


def check_answer(
    yes: object,
    confidence: object,
    elapsed_ms: object,
    probability: object = None,
    rationale: object = "",
) -> None:
    """Raise :class:`BadInput` unless the answer's fields are well formed.

    ``yes`` is True, False or None ("can't tell"); ``confidence`` 1 to 5 (or None where
    :func:`settle` may derive it); ``probability`` None or a number in [0, 1];
    ``rationale`` at most :data:`MAX_RATIONALE` readable characters.
    """
    if yes is not None and not isinstance(yes, bool):
        raise BadInput(f"answer must be yes, no or can't tell, not {yes!r}")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, int) or not 1 <= confidence <= 5
    ):
        raise BadInput(f"confidence must be an integer from 1 to 5, not {confidence!r}")
    if elapsed_ms is not None and (
        isinstance(elapsed_ms, bool)
        or not isinstance(elapsed_ms, int)
        or not 0 <= elapsed_ms <= 10**9
    ):
        raise BadInput(f"elapsed_ms must be an integer from 0 to 10^9, not {elapsed_ms!r}")
    if probability is not None and (
        isinstance(probability, bool)
        or not isinstance(probability, (int, float))
        or not math.isfinite(probability)
        or not 0 <= probability <= 1
    ):
        raise BadInput(f"probability must be a number from 0 to 1, not {probability!r}")
    if not isinstance(rationale, str) or len(rationale) > MAX_RATIONALE:
        raise BadInput(f"the rationale must be text of at most {MAX_RATIONALE:,} characters")
    readable("the rationale", rationale)


def settle(
    study: Study, yes: bool | None, confidence: int | None, probability: float | None
) -> tuple[bool | None, int]:
    """The (yes, confidence) stored for an answer in ``study``.

    In a probability study the rater's P(yes) decides: above 1/2 is yes, below is no,
    exactly 1/2 is "can't tell"; a ``yes`` that contradicts it is refused, and the
    confidence, unless given, is ``1 + round(4 |2p - 1|)``. Elsewhere a probability is
    refused, and a yes or no needs its confidence ("can't tell" is stored with 1).

    Example:
        >>> settle(Study(name="s", k=1, probability=True), None, None, 0.9)
        (True, 4)
    """
    if study.probability:
        if probability is None:
            raise BadInput("this study asks for a probability from 0 to 1 that the step follows")
        derived = None if probability == 0.5 else probability > 0.5
        if yes is not None and yes != derived:
            raise BadInput(f"the answer {yes} contradicts the probability {probability}")
        return derived, confidence or 1 + round(4 * abs(2 * probability - 1))
    if probability is not None:
        raise BadInput("this study takes yes, no or can't tell, not a probability")
    if confidence is None:
        if yes is not None:
            raise BadInput("confidence must be an integer from 1 to 5, not None")
        confidence = 1
    return yes, confidence


def _may_answer(study: Study, member: Membership | None) -> None:
    """Raise :class:`Conflict` if the study takes no answer from its rater ``member`` now."""
    why = is_open(study, utcnow())
    if why is not None:
        raise Conflict(f"{why}: the answer is not taken")
    if member is None or member.deactivated_at is not None:
        raise Conflict("you no longer take part in this study: the answer is not taken")


@dataclass(frozen=True)
class Receipt:
    """What :func:`record_answer` did, and to what (for the feedback that follows)."""

    status: Submitted
    assignment: Assignment
    question: Question
    study: Study


def submit_answer(db: Session, rater: User, assignment_id: int, **answer: Any) -> Submitted:
    """:func:`record_answer`, returning only its status (``answer``: its keyword arguments).

    Example: see the module doc.
    """
    return record_answer(db, rater, assignment_id, **answer).status


def record_answer(
    db: Session,
    rater: User,
    assignment_id: int,
    *,
    yes: bool | None,
    confidence: int | None = None,
    shown: str,
    elapsed_ms: int | None = None,
    probability: float | None = None,
    rationale: str = "",
) -> Receipt:
    """Record a rater's answer, committed before this returns; one query loads what it needs.

    A yes or no to a work question takes one of its k slots; "can't tell", and any
    answer to a check, training or qualification question, is stored without one.

    Returns:
        A :class:`Receipt` whose status is ``"recorded"`` for a new answer,
        ``"duplicate"`` when this assignment was answered already (a retry or double
        click: nothing new is stored), with what the answer was to (for feedback).

    Raises:
        NotFound: Not the rater's assignment.
        Conflict: The question closed (k answers) before this one, ``shown`` is not the
            hash of what the question shows, the step was skipped, the study is closed,
            or the rater was deactivated.
        BadInput: A malformed field (see :func:`check_answer` and :func:`settle`).
    """
    check_answer(yes, confidence, elapsed_ms, probability, rationale)
    found = fastsql.rows(
        db, statements.answering(), {"assignment": assignment_id, "rater": rater.id}
    )
    if not found:
        raise NotFound(f"assignment {assignment_id} is not yours or does not exist")
    assignment, question, study, answer_id, member = _answering(found[0])
    if answer_id is not None:
        return Receipt("duplicate", assignment, question, study)
    if assignment.skipped_at is not None:
        raise Conflict("you skipped this step: its answer is not taken")
    _may_answer(study, member)
    yes, confidence = settle(study, yes, confidence, probability)
    if shown != shown_sha256(question.payload):
        raise Conflict("the answer was given to a different text than this question shows")
    answer = {
        "assignment_id": assignment.id,
        "question_pk": question.id,
        "rater_id": rater.id,
        "yes": yes,
        "confidence": confidence,
        "probability": probability,
        "rationale": rationale,
        "elapsed_ms": elapsed_ms,
        "shown_sha256": shown,
    }
    with write_gate(db):  # taken while this session holds its connection: no deadlock
        status = _record(db, rater, question, answer, question.kind == "work" and yes is not None)
    if status is None and answered(db, assignment):  # a concurrent retry of this very
        status = "duplicate"  # answer took the slot
    if status is None:
        raise Conflict("this question has closed: it has all the answers it needs")
    return Receipt(status, assignment, question, study)


def _answering(
    row: fastsql.Row,
) -> tuple[Assignment, Question, Study, int | None, Membership | None]:
    """The objects in a row of :func:`.statements.answering` (transient copies)."""
    assignment, question, study = fastsql.entities(row, Assignment, Question, Study)
    cut = sum(fastsql.width(m) for m in (Assignment, Question, Study))
    member = row[cut + 1 :]
    membership = None if member[0] is None else fastsql.entity(Membership, member)
    return assignment, question, study, row[cut], membership


def _record(
    db: Session, rater: User, question: Question, answer: dict[str, Any], slot: bool
) -> Submitted | None:
    """Take a slot (if ``slot``), store the answer and its audit entry, commit: all or nothing.

    ``answer`` holds the columns of the :class:`Answer` row. Returns None when no slot
    was left (the question has closed, perhaps by a concurrent retry of this same answer).
    """
    if slot and not _take_slot(db, question):
        db.rollback()
        return None
    detail = {
        "assignment_id": answer["assignment_id"], "question_id": question.question_id,
        "debate_id": question.debate_id, "kind": question.kind,
        **{f: answer[f] for f in ("yes", "confidence", "probability", "rationale", "elapsed_ms")},
        "shown": question.payload, "shown_sha256": answer["shown_sha256"],
    }  # fmt: skip
    try:  # two prebuilt inserts: no unit of work to flush on the busiest path
        fastsql.rows(db, statements.insert_answer(), answer)
        fastsql.rows(db, statements.finish_assignment(), {"assignment": answer["assignment_id"]})
        fastsql.rows(db, statements.count_answer(), _counted(question, rater, answer["yes"]))
        fastsql.rows(db, statements.insert_audit(), {"actor_id": rater.id, "action": "answer",
                                                     "detail": detail})  # fmt: skip
        db.commit()
    except IntegrityError:  # a concurrent retry of this very answer won: keep one
        db.rollback()
        return "duplicate"
    _expire_counts(db, question, rater, answer["assignment_id"])
    return "recorded"


def _expire_counts(db: Session, question: Question, rater: User, assignment_id: int) -> None:
    """Mark stale the session's own objects of the rows an answer changed.

    See :func:`.fastsql.expire`: the answer's statements change rows, not objects.
    """
    fastsql.expire(db, Assignment, assignment_id, ("done",))
    for held in list(db.identity_map.values()):
        if isinstance(held, Membership) and (held.study_id, held.user_id) == (
            question.study_id,
            rater.id,
        ):
            db.expire(held, ["n_training", "n_qualification", "right_qualification", "n_work"])


def _counted(question: Question, rater: User, yes: bool | None) -> dict[str, int]:
    """The bound values of :func:`.statements.count_answer` for an answer to ``question``."""
    kind = question.kind
    right = kind == "qualification" and yes is not None and yes == question.expected
    return {
        "study": question.study_id,
        "rater": rater.id,
        "training": int(kind == "training"),
        "qualification": int(kind == "qualification"),
        "right": int(right),
        "work": int(kind == "work"),
    }


def answer_of(db: Session, assignment: Assignment) -> Answer | None:
    """The assignment's answer, if it has one."""
    found: Answer | None = db.scalar(select(Answer).where(Answer.assignment_id == assignment.id))
    return found


def answered(db: Session, assignment: Assignment) -> bool:
    """Whether the assignment has its answer."""
    return db.scalar(select(Answer.id).where(Answer.assignment_id == assignment.id)) is not None


def _take_slot(db: Session, question: Question) -> bool:
    """Count one more answer unless the question has k; close it at k (uncommitted).

    One statement: the right-hand sides of ``SET`` see the row as it was, so ``closed``
    becomes true exactly when this answer is the k-th.
    """
    took = fastsql.rows(db, statements.take_slot(), {"question": question.id, "now": utcnow()})
    if not took:
        return False
    question.n_answers, question.closed, question.closed_at = took[0]
    fastsql.expire(db, Question, question.id, ("n_answers", "closed", "closed_at"))
    return True
