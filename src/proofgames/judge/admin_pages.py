"""The admin's pages: studies, a study's progress and agreement, invitations, exports."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from . import accounts, export, service
from .errors import JudgeError, whole_number
from .models import Question, Study, User
from .pages import page
from .web import Id, check_csrf, cookie_user, get_db, require, runtime

router = APIRouter(prefix="/admin")
Db = Annotated[Session, Depends(get_db)]
Field = Annotated[str, Form(max_length=254)]


def admin(request: Request, db: Db) -> User:
    """The logged-in admin (dependency): 401 if not logged in, 403 for a rater."""
    return require(cookie_user(request, db), "admin")


Admin = Annotated[User, Depends(admin)]


def _studies_page(
    request: Request, user: User, db: Session, status: int = 200, **ctx: object
) -> Response:
    counts = dict(
        db.execute(select(Question.study_id, func.count()).group_by(Question.study_id)).all()
    )
    studies = [
        {"study": s, "questions": counts.get(s.id, 0)}
        for s in db.scalars(select(Study).order_by(Study.id))
    ]
    return page(request, "admin.html", user, status, studies=studies, **ctx)


@router.get("", response_class=HTMLResponse)
def studies(request: Request, user: Admin, db: Db) -> Response:
    """Every study, and forms for a new study and a new API token."""
    return _studies_page(request, user, db)


@router.post("/studies", response_class=HTMLResponse)
def create_study(
    request: Request, user: Admin, db: Db, name: Field, k: Field, csrf_token: Field
) -> Response:
    """Create a study, then show it."""
    check_csrf(request, csrf_token)
    try:
        number = whole_number(k)
        study = service.create_study(db, name, -1 if number is None else number, actor=user)
    except JudgeError as exc:
        return _studies_page(request, user, db, exc.status, error=str(exc))
    return RedirectResponse(f"/admin/studies/{study.id}", status_code=303)


@router.post("/tokens", response_class=HTMLResponse)
def create_token(
    request: Request, user: Admin, db: Db, label: Field, csrf_token: Field
) -> Response:
    """Create an API token for HumanJudge (shown once)."""
    check_csrf(request, csrf_token)
    token = accounts.create_api_token(db, user, label)
    return _studies_page(request, user, db, new_token=token, message="API token created.")


def _study_page(
    request: Request, user: User, db: Session, study: Study, status: int = 200, **ctx: object
) -> Response:
    return page(
        request,
        "study.html",
        user,
        status,
        study=study,
        progress=export.progress(db, study),
        invitation_days=runtime(request).settings.invitation_days,
        **ctx,
    )


@router.get("/studies/{study_id}", response_class=HTMLResponse)
def study(request: Request, study_id: Id, user: Admin, db: Db) -> Response:
    """A study's progress, agreement between raters, invitations and exports."""
    return _study_page(request, user, db, service.get_study(db, study_id))


@router.post("/studies/{study_id}/invitations", response_class=HTMLResponse)
def invite(
    request: Request, study_id: Id, user: Admin, db: Db, email: Field, csrf_token: Field
) -> Response:
    """Invite a rater: shows the one-use link to send them."""
    check_csrf(request, csrf_token)
    found = service.get_study(db, study_id)
    lifetime = export.days(runtime(request).settings.invitation_days)
    try:
        token = accounts.invite(db, user, found, email, lifetime)
    except JudgeError as exc:
        return _study_page(request, user, db, found, exc.status, error=str(exc))
    url = str(request.url_for("invitation_page", token=token))
    return _study_page(request, user, db, found, invite_url=url, message=f"Invited {email}.")


@router.get("/studies/{study_id}/export.{fmt}")
def export_study(study_id: Id, fmt: str, user: Admin, db: Db, emails: bool = False) -> Response:
    """Download every answer of the study (JSONL, CSV or Parquet; emails only if asked)."""
    found = service.get_study(db, study_id)
    body, media = export.render(export.rows(db, found, emails=emails), fmt)
    filename = f"study-{found.id}-answers.{fmt}"
    return Response(
        body,
        media_type=media,
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
