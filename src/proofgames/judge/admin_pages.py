"""The admin's pages: studies, a study's progress (paginated), raters, invitations, tokens.

Every form posts, stores and redirects (Post/Redirect/Get): reloading the page after it
repeats nothing. A secret made by a form (an invitation link, an API token) is shown once
on the page it redirects to, carried there in a signed one-time cookie, never in a URL
(:mod:`proofgames.judge.flash`). Long lists come in pages of
:data:`~proofgames.judge.paging.PAGE_SIZE` (``?page=N``); a study's counts and agreement
are computed in SQL, so its page stays small and fast at any number of questions.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import Float, case, cast, func, select
from sqlalchemy.orm import Session

from . import accounts, credentials, export, flash, service
from .errors import JudgeError, whole_number
from .models import Answer, Membership, Question, Study, User
from .pages import page
from .paging import PageNumber, Pager
from .web import Id, check_csrf, cookie_user, get_db, require, runtime

router = APIRouter(prefix="/admin")
Db = Annotated[Session, Depends(get_db)]
Field = Annotated[str, Form(max_length=254)]


def admin(request: Request, db: Db) -> User:
    """The logged-in admin (dependency): 401 if not logged in, 403 for a rater."""
    return require(cookie_user(request, db), "admin")


Admin = Annotated[User, Depends(admin)]


def show(request: Request, db: Session, name: str, user: User, **ctx: Any) -> Response:
    """Render an admin page with its one-time message (if any), then forget the message."""
    status = ctx.pop("status", 200)
    response = page(request, name, user, status, **{**ctx, **flash.take(request, db)})
    return flash.clear(request, response)


def _studies_page(request: Request, user: User, db: Session, **ctx: Any) -> Response:
    counts = dict(
        db.execute(select(Question.study_id, func.count()).group_by(Question.study_id)).all()
    )
    studies = [
        {"study": s, "questions": counts.get(s.id, 0)}
        for s in db.scalars(select(Study).order_by(Study.id))
    ]
    tokens = credentials.tokens(db, user)
    return show(request, db, "admin.html", user, studies=studies, tokens=tokens, **ctx)


@router.get("", response_class=HTMLResponse)
def studies(request: Request, user: Admin, db: Db) -> Response:
    """Every study, your API tokens, and forms for a new study and a new API token."""
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
        return _studies_page(request, user, db, status=exc.status, error=str(exc))
    return flash.redirect(request, db, f"/admin/studies/{study.id}")


@router.post("/tokens", response_class=HTMLResponse)
def create_token(
    request: Request, user: Admin, db: Db, label: Field, csrf_token: Field
) -> Response:
    """Create an API token for HumanJudge; it is shown once, on the page redirected to."""
    check_csrf(request, csrf_token)
    try:
        token = accounts.create_api_token(db, user, label)
    except JudgeError as exc:
        return _studies_page(request, user, db, status=exc.status, error=str(exc))
    return flash.redirect(request, db, "/admin", new_token=token, message="API token created.")


@router.post("/tokens/{token_id}/revoke", response_class=HTMLResponse)
def revoke_token(
    request: Request, token_id: Id, user: Admin, db: Db, csrf_token: Field
) -> Response:
    """Revoke one of your API tokens: it is refused from now on (another's: 404)."""
    check_csrf(request, csrf_token)
    done = credentials.revoke_token(db, user, token_id)
    message = f"API token {token_id} revoked." if done else "It was revoked already."
    return flash.redirect(request, db, "/admin", message=message)


def summary(db: Session, study: Study) -> dict[str, Any]:
    """A study's counts and agreement, computed in SQL (two queries, one row each).

    The same numbers as :func:`proofgames.judge.export.progress`, without loading the
    questions or answers: per question, the number of yes/no answers ``n`` and of yes
    ``y`` are grouped in SQL, then summed over the questions with ``n >= 2``.
    """
    counted = select(func.count(), func.coalesce(func.sum(case((Question.closed, 1), else_=0)), 0))
    n_questions, n_closed = db.execute(counted.where(Question.study_id == study.id)).one()
    yes = case((Answer.yes.is_(True), 1), else_=0)
    per = (
        select(func.count().label("n"), func.sum(yes).label("y"))
        .join(Question, Question.id == Answer.question_pk)
        .where(Question.study_id == study.id, Answer.yes.is_not(None))
        .group_by(Answer.question_pk)
        .subquery()
    )
    n, y = per.c.n, per.c.y
    pair = cast(y * (y - 1) + (n - y) * (n - y - 1), Float) / cast(n * (n - 1), Float)
    several = n >= 2
    row = db.execute(
        select(
            func.coalesce(func.sum(n), 0),
            func.coalesce(func.sum(case((several, 1), else_=0)), 0),
            func.coalesce(func.sum(case((several, pair), else_=0.0)), 0.0),
            func.coalesce(func.sum(case((several, y), else_=0)), 0),
            func.coalesce(func.sum(case((several, n), else_=0)), 0),
        )
    ).one()
    answers, items, pairs, yes_total, total = (int(row[0]), int(row[1]), float(row[2]), *row[3:])
    agreement: dict[str, Any] = {"items": items, "pairwise": None, "fleiss_kappa": None}
    if items:
        observed = pairs / items
        expected = (yes_total / total) ** 2 + ((total - yes_total) / total) ** 2
        agreement["pairwise"] = observed
        agreement["fleiss_kappa"] = (
            None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
        )
    return {
        "questions": int(n_questions),
        "closed": int(n_closed),
        "open": int(n_questions) - int(n_closed),
        "answers": answers,
        "agreement": agreement,
    }


def question_rows(db: Session, study: Study, pager: Pager) -> list[dict[str, Any]]:
    """One page of a study's questions, each with its yes count (two bounded queries)."""
    query = select(Question).where(Question.study_id == study.id).order_by(Question.id)
    questions = list(db.scalars(query.offset(pager.offset).limit(pager.size)))
    yes = func.sum(case((Answer.yes.is_(True), 1), else_=0))
    ids = [q.id for q in questions]
    counts: dict[int, int] = {
        pk: int(n)
        for pk, n in db.execute(
            select(Answer.question_pk, yes)
            .where(Answer.question_pk.in_(ids))
            .group_by(Answer.question_pk)
        )
    }
    return [
        {
            "debate_id": q.debate_id,
            "step": q.payload.get("step", ""),
            "kind": q.kind,
            "n": q.n_answers,
            "k": q.k,
            "yes": counts.get(q.id, 0),
            "closed": q.closed,
        }
        for q in questions
    ]


def _study_page(
    request: Request, user: User, db: Session, study: Study, number: int = 1, **ctx: Any
) -> Response:
    progress = summary(db, study)
    pager = Pager.of(number, progress["questions"])
    people = {
        "raters": db.scalar(
            select(func.count()).select_from(Membership).where(Membership.study_id == study.id)
        ),
        "invitations": credentials.invitations(db, study, limit=0)[0],
    }
    return show(
        request,
        db,
        "study.html",
        user,
        study=study,
        progress=progress,
        rows=question_rows(db, study, pager),
        pager=pager,
        people=people,
        invitation_days=runtime(request).settings.invitation_days,
        **ctx,
    )


@router.get("/studies/{study_id}", response_class=HTMLResponse)
def study(request: Request, study_id: Id, user: Admin, db: Db, page: PageNumber = 1) -> Response:
    """A study's progress, agreement, one page of its questions, and the invitation form."""
    return _study_page(request, user, db, service.get_study(db, study_id), page)


@router.post("/studies/{study_id}/invitations", response_class=HTMLResponse)
def invite(
    request: Request, study_id: Id, user: Admin, db: Db, email: Field, csrf_token: Field
) -> Response:
    """Invite a rater, then redirect: the one-use link is shown once on the study's page."""
    check_csrf(request, csrf_token)
    found = service.get_study(db, study_id)
    lifetime = export.days(runtime(request).settings.invitation_days)
    try:
        token = accounts.invite(db, user, found, email, lifetime)
    except JudgeError as exc:
        return _study_page(request, user, db, found, status=exc.status, error=str(exc))
    url = str(request.url_for("invitation_page", token=token))
    return flash.redirect(
        request, db, f"/admin/studies/{found.id}", invite_url=url, message=f"Invited {email}."
    )


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


@router.get("/studies/{study_id}/invitations", response_class=HTMLResponse)
def invitations(
    request: Request, study_id: Id, user: Admin, db: Db, page: PageNumber = 1
) -> Response:
    """The study's unused invitations (newest first), each with a revoke button."""
    found = service.get_study(db, study_id)
    total, _ = credentials.invitations(db, found, limit=0)
    pager = Pager.of(page, total)
    _, rows = credentials.invitations(db, found, pager.offset, pager.size)
    return show(request, db, "invitations.html", user, study=found, invitations=rows, pager=pager)


@router.post("/studies/{study_id}/invitations/{invitation_id}/revoke")
def revoke_invitation(
    request: Request, study_id: Id, invitation_id: Id, user: Admin, db: Db, csrf_token: Field
) -> Response:
    """Revoke an unused invitation: its link then says it was revoked (410)."""
    check_csrf(request, csrf_token)
    found = service.get_study(db, study_id)
    credentials.revoke_invitation(db, user, found, invitation_id)
    return flash.redirect(
        request,
        db,
        f"/admin/studies/{found.id}/invitations",
        message=f"Invitation {invitation_id} revoked: its link no longer works.",
    )


@router.get("/studies/{study_id}/raters", response_class=HTMLResponse)
def raters(request: Request, study_id: Id, user: Admin, db: Db, page: PageNumber = 1) -> Response:
    """The study's raters, with their answer counts and a (de)activate button each."""
    found = service.get_study(db, study_id)
    where = Membership.study_id == found.id
    count = select(func.count()).select_from(Membership).where(where)
    pager = Pager.of(page, int(db.scalar(count) or 0))
    answers = (
        select(Answer.rater_id.label("rater"), func.count().label("n"))
        .join(Question, Question.id == Answer.question_pk)
        .where(Question.study_id == found.id)
        .group_by(Answer.rater_id)
        .subquery()
    )
    query = (
        select(Membership, User, func.coalesce(answers.c.n, 0))
        .join(User, User.id == Membership.user_id)
        .outerjoin(answers, answers.c.rater == User.id)
        .where(where)
        .order_by(Membership.id)
        .offset(pager.offset)
        .limit(pager.size)
    )
    rows = [{"membership": m, "user": u, "answers": int(n)} for m, u, n in db.execute(query)]
    return show(request, db, "raters.html", user, study=found, raters=rows, pager=pager)


@router.post("/studies/{study_id}/raters/{user_id}/{action}")
def set_active(
    request: Request,
    study_id: Id,
    user_id: Id,
    action: str,
    user: Admin,
    db: Db,
    csrf_token: Field,
) -> Response:
    """Deactivate (or reactivate) a rater in the study; audited."""
    check_csrf(request, csrf_token)
    found = service.get_study(db, study_id)
    rater = credentials.user_by_id(db, user_id)
    done = accounts.membership_action(db, found, rater, user, action)
    message = f"{rater.email} {action}d." if done else f"{rater.email} was {action}d already."
    return flash.redirect(request, db, f"/admin/studies/{found.id}/raters", message=message)
