"""The admin's pages for a study's design, its known-answer questions and its raters' scores.

* ``/admin/studies/{id}/design``: the consent text, instructions, checks, qualification,
  quota, order, answer form, dates and pay rate (see :mod:`proofgames.judge.design`),
  and a box to add training, qualification, gold and attention questions as JSON lines;
* ``/admin/studies/{id}/scores``: one row per rater (:func:`proofgames.judge.scoring.
  rater_rows`): checks right with intervals, qualification, Brier score, hours and pay,
  with a CSV for payment (pseudonymous unless emails are asked for).

Every form posts, then redirects (reloading never posts again); a bad field is a 422
page naming it, and nothing is changed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..errors import OracleError
from ..judges.interface import StepQuestion
from ..reporting.json import dumps
from . import design, export, scoring, service
from .admin_pages import Admin
from .errors import BadInput, JudgeError
from .models import Question, Study, User
from .pages import page
from .web import Id, check_csrf, get_db

router = APIRouter(prefix="/admin/studies")
Db = Annotated[Session, Depends(get_db)]
Short = Annotated[str, Form(max_length=200)]
Long = Annotated[str, Form(max_length=design.MAX_TEXT)]
MAX_UPLOAD_LINES = 2_000
NUMBER = re.compile(r"^\d{1,7}(\.\d{1,6})?$")


def _number(name: str, text: str, whole: bool = False) -> float | int | None:
    """A form's number (blank: None); raises :class:`BadInput` naming the field."""
    text = text.strip()
    if text == "":
        return None
    if not NUMBER.match(text) or (whole and "." in text):
        kind = "a whole number" if whole else "a number such as 0.1"
        raise BadInput(f"{name} must be {kind}, not {text[:40]!r}")
    return int(text) if whole else float(text)


def _time(name: str, text: str) -> dt.datetime | None:
    """A ``datetime-local`` field, read as UTC (blank: None)."""
    if text.strip() == "":
        return None
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadInput(f"{name} must be a date and time such as 2027-01-31T09:00") from None
    if value.tzinfo is not None:
        raise BadInput(f"{name} is read as UTC: give it without a zone")
    return value


def _design_page(
    request: Request, user: User, db: Session, study: Study, status: int = 200, **ctx: Any
) -> Response:
    kinds = dict(
        db.execute(
            select(Question.kind, func.count(Question.id))
            .where(Question.study_id == study.id)
            .group_by(Question.kind)
        ).all()
    )
    return page(request, "design.html", user, status, study=study, kinds=kinds, **ctx)


@router.get("/{study_id}/design", response_class=HTMLResponse)
def design_page(request: Request, study_id: Id, user: Admin, db: Db, saved: str = "") -> Response:
    """The study's design, and the box for its known-answer questions."""
    message = {"design": "Design saved.", "questions": "Questions added."}.get(saved)
    return _design_page(request, user, db, service.get_study(db, study_id), message=message)


@router.post("/{study_id}/design", response_class=HTMLResponse)
def save_design(
    request: Request,
    study_id: Id,
    user: Admin,
    db: Db,
    csrf_token: Short,
    consent: Long = "",
    instructions: Long = "",
    gold_rate: Short = "0",
    pass_mark: Short = "0.8",
    quota: Short = "",
    ordering: Short = "oldest",
    starts_at: Short = "",
    ends_at: Short = "",
    pay_cents_per_hour: Short = "",
    one_step_per_debate: Short = "",
    probability: Short = "",
    feedback: Short = "",
) -> Response:
    """Save the whole design at once (checked first: a bad field changes nothing)."""
    check_csrf(request, csrf_token)
    study = service.get_study(db, study_id)
    try:
        design.set_design(
            db, study, actor=user, consent=consent, instructions=instructions,
            gold_rate=_number("gold_rate", gold_rate) or 0.0,
            pass_mark=_number("pass_mark", pass_mark) if pass_mark.strip() else 0.8,
            quota=_number("quota", quota, whole=True), ordering=ordering,
            starts_at=_time("starts_at", starts_at), ends_at=_time("ends_at", ends_at),
            pay_cents_per_hour=_number("pay_cents_per_hour", pay_cents_per_hour, whole=True),
            one_step_per_debate=one_step_per_debate == "on", probability=probability == "on",
            feedback=feedback == "on",
        )  # fmt: skip
    except JudgeError as exc:
        db.rollback()
        return _design_page(request, user, db, study, exc.status, error=str(exc))
    return RedirectResponse(f"/admin/studies/{study_id}/design?saved=design", status_code=303)


def parse_known(text: str) -> list[dict[str, Any]]:
    """Known-answer questions, one JSON object per line; all checked before any is stored.

    Each line: ``{"kind": "gold", "expected": true, "explanation": "...", "debate_id":
    "...", "question": {"task": ..., "premises": [...], "step": ...}}``.

    Raises:
        BadInput: Naming the first bad line and what is wrong with it.
    """
    lines = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines or len(lines) > MAX_UPLOAD_LINES:
        raise BadInput(f"give 1 to {MAX_UPLOAD_LINES:,} questions, one JSON object per line")
    out = []
    for number, line in lines:
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or set(row) - {
                "kind", "expected", "explanation", "debate_id", "question"
            }:  # fmt: skip
                raise BadInput("it must be an object with kind, expected, explanation, "
                               "debate_id and question")  # fmt: skip
            kind, expected, explanation = design.check_kind(
                row.get("kind"), row.get("expected"), row.get("explanation", "")
            )
            if kind == "work":
                raise BadInput("work questions come from the verifier, through the API")
            debate = row.get("debate_id")
            if not isinstance(debate, str) or not 1 <= len(debate) <= service.MAX_DEBATE_ID:
                raise BadInput("debate_id must be a string of 1 to 200 characters")
            given = row.get("question")
            if not isinstance(given, dict):
                raise BadInput("question must be an object with task, premises and step")
            question = StepQuestion.from_dict(given)
        except (ValueError, OracleError, RecursionError) as exc:
            raise BadInput(f"line {number}: {exc}") from None
        out.append(
            {"kind": kind, "expected": expected, "explanation": explanation,
             "debate_id": debate, "question": question}
        )  # fmt: skip
    return out


@router.post("/{study_id}/known", response_class=HTMLResponse)
def add_known(
    request: Request,
    study_id: Id,
    user: Admin,
    db: Db,
    csrf_token: Short,
    lines: Annotated[str, Form(max_length=2_000_000)] = "",
) -> Response:
    """Add training, qualification, gold and attention questions (all or none)."""
    check_csrf(request, csrf_token)
    study = service.get_study(db, study_id)
    try:
        rows = parse_known(lines)
        for row in rows:
            service.post_question(
                db, study, row["debate_id"], row["question"], actor=user, kind=row["kind"],
                expected=row["expected"], explanation=row["explanation"],
            )  # fmt: skip
    except JudgeError as exc:
        db.rollback()
        return _design_page(request, user, db, study, exc.status, error=str(exc), lines=lines)
    return RedirectResponse(f"/admin/studies/{study_id}/design?saved=questions", status_code=303)


@router.get("/{study_id}/scores", response_class=HTMLResponse)
def scores(request: Request, study_id: Id, user: Admin, db: Db) -> Response:
    """Each rater's checks, qualification, calibration, hours and pay."""
    study = service.get_study(db, study_id)
    rows = scoring.rater_rows(db, study)
    return page(request, "scores.html", user, study=study, rows=rows)


@router.get("/{study_id}/scores.csv")
def scores_csv(study_id: Id, user: Admin, db: Db, emails: bool = False) -> Response:
    """The scores as CSV (for payment: add ``emails=true``)."""
    study = service.get_study(db, study_id)
    rows = [
        {**r, "calibration": dumps(r["calibration"])}
        for r in scoring.rater_rows(db, study, emails=emails)
    ]
    body, media = export.render(rows, "csv")
    name = f"study-{study.id}-raters.csv"
    return Response(
        body, media_type=media, headers={"content-disposition": f"attachment; filename={name}"}
    )
