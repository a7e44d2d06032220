"""The admin's pages for accounts (admins, resets, sessions, disabling) and the audit log.

* ``/admin/users``: every account, a page at a time, with a form to create another
  admin. For each user: a password-reset link (one use, 24 hours, shown once), "log out
  everywhere" (revokes every session), and disable / enable (disabling revokes their
  sessions and API tokens, and refuses their logins).
* ``/admin/audit``: the audit log, newest first, a page at a time, filtered by action.

A new admin gets a random password nobody sees and a reset link to choose their own:
the admin who creates the account never knows its password.
"""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from . import credentials, flash
from .admin_pages import Admin, show
from .errors import JudgeError, NotFound, readable
from .models import AuditEntry, User, WebSession, utcnow
from .paging import PageNumber, Pager
from .web import Id, check_csrf, get_db

router = APIRouter(prefix="/admin")
Db = Annotated[Session, Depends(get_db)]
Field = Annotated[str, Form(max_length=254)]
ActionFilter = Annotated[str, Query(max_length=40)]
USER_ACTIONS = ("reset", "revoke-sessions", "disable", "enable")


def _users_page(request: Request, user: User, db: Session, number: int, **ctx: Any) -> Response:
    pager = Pager.of(number, int(db.scalar(select(func.count()).select_from(User)) or 0))
    live = (
        select(WebSession.user_id.label("uid"), func.count().label("n"))
        .where(WebSession.revoked_at.is_(None), WebSession.expires_at > utcnow())
        .group_by(WebSession.user_id)
        .subquery()
    )
    query = (
        select(User, func.coalesce(live.c.n, 0))
        .outerjoin(live, live.c.uid == User.id)
        .order_by(User.id)
        .offset(pager.offset)
        .limit(pager.size)
    )
    rows = [{"user": u, "sessions": int(n)} for u, n in db.execute(query)]
    return show(request, db, "users.html", user, users=rows, pager=pager, **ctx)


@router.get("/users", response_class=HTMLResponse)
def users(request: Request, user: Admin, db: Db, page: PageNumber = 1) -> Response:
    """Every account, with its live sessions and the actions on it."""
    return _users_page(request, user, db, page)


@router.post("/users", response_class=HTMLResponse)
def create_admin(
    request: Request, user: Admin, db: Db, email: Field, csrf_token: Field
) -> Response:
    """Create another admin; shows once the link with which they choose their password."""
    check_csrf(request, csrf_token)
    try:
        made = credentials.create_admin(db, user, email, secrets.token_urlsafe(24))
    except JudgeError as exc:
        return _users_page(request, user, db, 1, status=exc.status, error=str(exc), email=email)
    link = _reset_url(request, credentials.reset_link_token(db, user, made))
    return flash.redirect(
        request,
        db,
        "/admin/users",
        message=f"Admin {made.email} created: send them the link to choose their password.",
        reset_url=link,
        reset_for=made.email,
    )


def _reset_url(request: Request, token: str) -> str:
    return str(request.url_for("reset_page", token=token))


@router.post("/users/{user_id}/{action}")
def user_action(
    request: Request, user_id: Id, action: str, user: Admin, db: Db, csrf_token: Field
) -> Response:
    """One of :data:`USER_ACTIONS` on an account; its result shown once on the users page."""
    check_csrf(request, csrf_token)
    if action not in USER_ACTIONS:
        raise NotFound(f"no action {action[:40]!r}: one of {', '.join(USER_ACTIONS)}")
    target = credentials.user_by_id(db, user_id)
    shown: dict[str, Any] = {}
    if action == "reset":
        token = credentials.reset_link_token(db, user, target)
        shown = {"reset_url": _reset_url(request, token), "reset_for": target.email}
        message = f"Password-reset link for {target.email} (one use, 24 hours):"
    elif action == "revoke-sessions":
        ended = credentials.revoke_user_sessions(db, user, target)
        message = f"{target.email} logged out everywhere ({ended} sessions revoked)."
    elif action == "disable":
        counts = credentials.disable_user(db, user, target)
        message = (
            f"{target.email} disabled: {counts['sessions']} sessions and"
            f" {counts['tokens']} API tokens revoked."
        )
    else:
        credentials.enable_user(db, user, target)
        message = f"{target.email} enabled: they can log in again."
    return flash.redirect(request, db, "/admin/users", message=message, **shown)


def _summary(detail: Any, limit: int = 400) -> str:
    text = json.dumps(detail, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def audit_rows(
    db: Session, action: str, number: int
) -> tuple[Pager, list[dict[str, Any]], list[str]]:
    """One page of the audit log (newest first), the pager, and every action's name."""
    readable("the action", action)
    where = [] if not action else [AuditEntry.action == action]
    total = int(db.scalar(select(func.count()).select_from(AuditEntry).where(*where)) or 0)
    pager = Pager.of(number, total)
    query = (
        select(AuditEntry, User.email)
        .outerjoin(User, User.id == AuditEntry.actor_id)
        .where(*where)
        .order_by(AuditEntry.id.desc())
        .offset(pager.offset)
        .limit(pager.size)
    )
    rows = [
        {
            "id": entry.id,
            "at": entry.at.isoformat(timespec="seconds") + "Z",
            "actor": email,
            "action": entry.action,
            "detail": entry.detail,
            "summary": _summary(entry.detail),
        }
        for entry, email in db.execute(query)
    ]
    actions = list(db.scalars(select(AuditEntry.action).distinct().order_by(AuditEntry.action)))
    return pager, rows, actions


@router.get("/audit", response_class=HTMLResponse)
def audit(
    request: Request, user: Admin, db: Db, page: PageNumber = 1, action: ActionFilter = ""
) -> Response:
    """The audit log, newest first, 50 entries a page, optionally of one action."""
    pager, rows, actions = audit_rows(db, action, page)
    return show(
        request, db, "audit.html", user, entries=rows, pager=pager, action=action, actions=actions
    )
