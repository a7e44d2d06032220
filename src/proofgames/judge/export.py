"""A study's answers as rows, their agreement, and export as JSONL, CSV or Parquet.

Agreement between raters is reported two ways over the questions with two or more
answers: the mean fraction of rater pairs that agree, and Fleiss' kappa (generalised
to a varying number of raters per question).

Example:
    >>> agreement([[True, True], [True, False], [False, False, False]])["pairwise"]
    0.6666666666666666
    >>> body, media = render([{"a": 1, "b": "x,y"}], "csv")
    >>> body.decode().splitlines(), media
    (['a,b', '1,"x,y"'], 'text/csv; charset=utf-8')
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..reporting.json import dumps
from .errors import BadInput
from .models import Answer, Assignment, Question, Study, User

FORMATS = ("jsonl", "csv", "parquet")


def days(n: float) -> dt.timedelta:
    """``n`` days as a timedelta."""
    return dt.timedelta(days=n)


def rows(db: Session, study: Study, emails: bool = False) -> list[dict[str, Any]]:
    """One row per answer in ``study``: who, what they were shown, what they said, when.

    Pseudonymous by default: a rater is their number (``rater_id``); ``emails`` adds
    ``rater_email`` (for paying people, say). ``server_ms`` is the time from handing the
    question out to storing the answer, measured by the server; ``elapsed_ms`` is what
    the rater's browser reported (optional, not trusted).
    """
    query = (
        select(Answer, Question, User.email, Assignment.created_at)
        .join(Question, Question.id == Answer.question_pk)
        .join(User, User.id == Answer.rater_id)
        .join(Assignment, Assignment.id == Answer.assignment_id)
        .where(Question.study_id == study.id)
        .order_by(Answer.id)
    )
    out = []
    for answer, question, email, handed_out in db.execute(query):
        shown = question.payload
        server_ms = (answer.created_at - handed_out) // dt.timedelta(milliseconds=1)
        out.append(
            {
                "study": study.name,
                "debate_id": question.debate_id,
                "question_id": question.question_id,
                "answer_id": answer.id,
                "rater_id": answer.rater_id,
                **({"rater_email": email} if emails else {}),
                "kind": question.kind,
                "expected": question.expected,
                "yes": answer.yes,
                "cant_tell": answer.yes is None,
                "confidence": answer.confidence,
                "probability": answer.probability,
                "rationale": answer.rationale,
                "elapsed_ms": answer.elapsed_ms,
                "server_ms": max(0, server_ms),
                "answered_at": answer.created_at.isoformat() + "Z",
                "shown_sha256": answer.shown_sha256,
                "task": shown["task"],
                "premises": dumps(shown["premises"], ensure_ascii=False),
                "step": shown["step"],
                "prompt": shown["prompt"],
                "k": question.k,
            }
        )
    return out


def _csv_safe(value: object) -> object:
    """Neutralise spreadsheet formulas: a text cell starting with = + - @ gets a quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def render(data: Sequence[dict[str, Any]], fmt: str) -> tuple[bytes, str]:
    """``data`` in format ``fmt``: (body, media type).

    Raises:
        BadInput: Unknown format, or Parquet without ``pyarrow`` installed.
    """
    if fmt == "jsonl":
        text = "".join(dumps(row, ensure_ascii=False) + "\n" for row in data)
        return text.encode("utf-8"), "application/x-ndjson"
    if fmt == "csv":
        buffer = io.StringIO()
        if data:
            writer = csv.DictWriter(buffer, fieldnames=list(data[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: _csv_safe(v) for k, v in row.items()} for row in data)
        return buffer.getvalue().encode("utf-8"), "text/csv; charset=utf-8"
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise BadInput("Parquet export needs pyarrow: pip install pyarrow") from None
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(list(data)), sink)
        return sink.getvalue(), "application/vnd.apache.parquet"
    raise BadInput(f"export format must be one of {FORMATS}, not {fmt[:20]!r}")


def agreement(answers: Sequence[Sequence[bool]]) -> dict[str, float | int | None]:
    """Agreement over questions with two or more answers (each a list of yes/no).

    Returns ``items`` (questions used), ``pairwise`` (mean fraction of agreeing pairs)
    and ``fleiss_kappa`` (None when undefined: no items, or everyone always agrees on
    one answer).
    """
    items = [list(a) for a in answers if len(a) >= 2]
    if not items:
        return {"items": 0, "pairwise": None, "fleiss_kappa": None}
    per_item = []
    yes_total = no_total = 0
    for item in items:
        n, yes = len(item), sum(item)
        no = n - yes
        per_item.append((yes * (yes - 1) + no * (no - 1)) / (n * (n - 1)))
        yes_total, no_total = yes_total + yes, no_total + no
    observed = sum(per_item) / len(per_item)
    total = yes_total + no_total
    expected = (yes_total / total) ** 2 + (no_total / total) ** 2
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return {"items": len(items), "pairwise": observed, "fleiss_kappa": kappa}


def progress(db: Session, study: Study) -> dict[str, Any]:
    """A study's work questions (open, closed), answers, and agreement between raters."""
    questions = db.scalars(
        select(Question)
        .where(Question.study_id == study.id, Question.kind == "work")
        .order_by(Question.id)
    ).all()
    by_question: dict[int, list[bool]] = defaultdict(list)
    query = select(Answer.question_pk, Answer.yes).join(Question, Question.id == Answer.question_pk)
    query = query.where(
        Question.study_id == study.id, Question.kind == "work", Answer.yes.is_not(None)
    )
    for question_pk, yes in db.execute(query):
        by_question[question_pk].append(bool(yes))
    closed = sum(q.closed for q in questions)
    return {
        "questions": len(questions),
        "closed": closed,
        "open": len(questions) - closed,
        "answers": sum(len(v) for v in by_question.values()),
        "agreement": agreement(list(by_question.values())),
        "rows": [
            {
                "debate_id": q.debate_id,
                "step": q.payload["step"],
                "n": q.n_answers,
                "k": q.k,
                "yes": sum(by_question.get(q.id, [])),
                "closed": q.closed,
            }
            for q in questions
        ],
    }
