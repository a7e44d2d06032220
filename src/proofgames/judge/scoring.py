"""Raters measured against known answers: feedback, accuracy, calibration and pay.

* :func:`feedback` is what a rater is shown after a training step, and after a gold or
  attention step where the study allows it: right or wrong, the explanation, and in a
  probability study the Brier score ``(p - y)^2`` of their answer (0 is perfect, 0.25 a
  coin flip, 1 certain and wrong; the Brier rule is proper: reporting one's true belief
  minimises its expectation).
* :func:`rater_rows` gives one row per rater of a study: their work answers, accuracy
  on the checks (gold and attention) with a 95 % Wilson interval, attention failures,
  qualification score, mean Brier score and calibration on known answers, and the time
  the server measured (hand-out to answer, each capped at the lease) with the amount at
  the study's pay rate. Pseudonymous unless ``emails`` is asked for.

Example:
    >>> brier(0.8, True), brier(0.5, False)
    (0.03999999999999998, 0.25)
    >>> [(row["bin"], row["n"], row["right"]) for row in calibration([(0.9, True), (0.9, False)])]
    [('0.9-1.0', 2, 0.5)]
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..analysis.intervals import wilson_interval
from .design import CHECKED_KINDS
from .handout import LEASE
from .models import Answer, Assignment, Membership, Question, Study, User

KNOWN = (*CHECKED_KINDS, "training", "qualification")
"""The kinds of question with a known answer."""


def brier(probability: float, truth: bool) -> float:
    """The Brier score of P(yes) = ``probability`` when the answer is ``truth``."""
    return (probability - float(truth)) ** 2


def feedback(study: Study, question: Question, answer: Answer) -> dict[str, Any] | None:
    """What the rater is shown after this answer, or None.

    None for work and qualification steps, and for checks in a study without feedback.
    """
    show = question.kind == "training" or (question.kind in CHECKED_KINDS and study.feedback)
    expected = question.expected
    if not show or expected is None:
        return None
    return {
        "kind": question.kind,
        "expected": question.expected,
        "correct": None if answer.yes is None else answer.yes == question.expected,
        "explanation": question.explanation,
        "brier": None if answer.probability is None else brier(answer.probability, expected),
    }


def calibration(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> list[dict[str, Any]]:
    """Reliability table of (stated P(yes), truth) pairs.

    Per non-empty bin of P(yes): the number, the mean stated probability and the share
    that were yes. A calibrated rater's ``mean_p`` and ``right`` agree in every bin.
    """
    grouped: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for p, truth in pairs:
        grouped[min(int(p * bins), bins - 1)].append((p, truth))
    return [
        {
            "bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}",
            "n": len(items),
            "mean_p": sum(p for p, _ in items) / len(items),
            "right": sum(t for _, t in items) / len(items),
        }
        for b, items in sorted(grouped.items())
    ]


def _stated(answer: Answer) -> float | None:
    """P(yes) as the rater stated it, or as their yes/no with confidence 1-5 implies."""
    if answer.probability is not None:
        return answer.probability
    if answer.yes is None:
        return None
    sure = 0.5 + answer.confidence / 10  # confidence 1..5 -> 0.6..1.0 on the chosen side
    return sure if answer.yes else 1 - sure


def _answers(db: Session, study: Study) -> dict[int, list[tuple[Answer, Question, dt.timedelta]]]:
    query = (
        select(Answer, Question, Assignment.created_at)
        .join(Question, Question.id == Answer.question_pk)
        .join(Assignment, Assignment.id == Answer.assignment_id)
        .where(Question.study_id == study.id)
        .order_by(Answer.id)
    )
    out: dict[int, list[tuple[Answer, Question, dt.timedelta]]] = defaultdict(list)
    for answer, question, handed_out in db.execute(query):
        spent = min(max(answer.created_at - handed_out, dt.timedelta(0)), LEASE)
        out[answer.rater_id].append((answer, question, spent))
    return out


def _known(rows: list[tuple[Answer, Question, dt.timedelta]]) -> dict[str, Any]:
    checks = [(a, q) for a, q, _ in rows if q.kind in CHECKED_KINDS]
    right = sum(a.yes == q.expected for a, q in checks)
    quals = [(a, q) for a, q, _ in rows if q.kind == "qualification"]
    pairs = [
        (p, bool(q.expected))
        for a, q, _ in rows
        if q.kind in KNOWN and (p := _stated(a)) is not None
    ]
    low, high = wilson_interval(right, len(checks)) if checks else (None, None)
    return {
        "checks": len(checks),
        "checks_right": right,
        "check_accuracy": right / len(checks) if checks else None,
        "check_accuracy_low": low,
        "check_accuracy_high": high,
        "attention_failed": sum(a.yes != q.expected for a, q in checks if q.kind == "attention"),
        "qualification": len(quals),
        "qualification_right": sum(a.yes == q.expected for a, q in quals),
        "brier": sum(brier(p, t) for p, t in pairs) / len(pairs) if pairs else None,
        "calibration": calibration(pairs),
    }


def rater_rows(db: Session, study: Study, emails: bool = False) -> list[dict[str, Any]]:
    """One row per rater of ``study`` (see the module doc)."""
    members = db.execute(
        select(Membership, User.email)
        .join(User, User.id == Membership.user_id)
        .where(Membership.study_id == study.id)
        .order_by(Membership.user_id)
    ).all()
    by_rater = _answers(db, study)
    out = []
    for member, email in members:
        rows = by_rater.get(member.user_id, [])
        work = [a for a, q, _ in rows if q.kind == "work"]
        seconds = sum(spent.total_seconds() for _, _, spent in rows)
        hours = seconds / 3600
        rate = study.pay_cents_per_hour
        out.append(
            {
                "rater_id": member.user_id,
                **({"rater_email": email} if emails else {}),
                "consented": member.consented_at is not None,
                "deactivated": member.deactivated_at is not None,
                "work_answers": sum(a.yes is not None for a in work),
                "cant_tell": sum(a.yes is None for a in work),
                **_known(rows),
                "answers": len(rows),
                "server_hours": hours,
                "amount_cents": None if rate is None else round(hours * rate),
            }
        )
    return out
