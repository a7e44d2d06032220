"""The JSON API for credential management (``/api/v1``, an admin's bearer token).

| method and path | what |
|---|---|
| ``GET /tokens`` | your API tokens (id, label, created, revoked) |
| ``DELETE /tokens/{id}`` | revoke one of yours (refused at once; another's: 404) |
| ``GET /studies/{id}/invitations?page=`` | the study's unused invitations |
| ``DELETE /invitations/{id}`` | revoke an unused invitation (its link answers 410) |
| ``GET /studies/{id}/members?page=`` | the study's raters, active or not |
| ``POST /studies/{id}/raters/{user}/deactivate`` | stop a rater (``/reactivate``) |
| ``GET /users?page=`` | every account |
| ``POST /admins`` ``{email}`` | a new admin, and the link to set their password |
| ``POST /users/{id}/password-reset`` | a one-use reset link (24 hours) |
| ``POST /users/{id}/revoke-sessions`` | log a user out everywhere |
| ``POST /users/{id}/disable`` | disable (sessions and tokens revoked); ``/enable`` |
| ``GET /audit?action=&page=`` | the audit log, newest first |
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from . import accounts, credentials, service
from .admin_users import audit_rows
from .errors import NotFound
from .models import Invitation, Membership, User
from .paging import PageNumber, Pager
from .web import Id, JsonRoute, bearer_admin, get_db

router = APIRouter(prefix="/api/v1", route_class=JsonRoute)
Db = Annotated[Session, Depends(get_db)]


def admin(request: Request, db: Db) -> User:
    """The admin calling with an API token (dependency)."""
    return bearer_admin(request, db)


Admin = Annotated[User, Depends(admin)]


class AdminBody(BaseModel):
    """``POST /api/v1/admins``."""

    model_config = ConfigDict(strict=True, extra="forbid")
    email: str = Field(max_length=254)


def _when(value: Any) -> str | None:
    return None if value is None else value.isoformat(timespec="seconds") + "Z"


def _user(user: User) -> dict[str, Any]:
    return {
        "id": user.id,
        "email": user.email,
        "role": user.role,
        "created_at": _when(user.created_at),
        "disabled_at": _when(user.disabled_at),
    }


@router.get("/tokens")
def tokens(user: Admin, db: Db) -> dict[str, Any]:
    """Your API tokens, newest first (never the tokens themselves)."""
    rows = credentials.tokens(db, user)
    return {
        "tokens": [
            {
                "id": t.id,
                "label": t.label,
                "created_at": _when(t.created_at),
                "revoked_at": _when(t.revoked_at),
            }
            for t in rows
        ]
    }


@router.delete("/tokens/{token_id}")
def revoke_token(token_id: Id, user: Admin, db: Db) -> dict[str, Any]:
    """Revoke one of your API tokens (this one too): refused from the next request on."""
    done = credentials.revoke_token(db, user, token_id)
    return {"id": token_id, "revoked": True, "already": not done}


def _invitation(row: Invitation) -> dict[str, Any]:
    return {
        "id": row.id,
        "email": row.email,
        "created_at": _when(row.created_at),
        "expires_at": _when(row.expires_at),
    }


@router.get("/studies/{study_id}/invitations")
def invitations(study_id: Id, user: Admin, db: Db, page: PageNumber = 1) -> dict[str, Any]:
    """The study's unused, unrevoked invitations (expired ones too), newest first."""
    study = service.get_study(db, study_id)
    total, _ = credentials.invitations(db, study, limit=0)
    pager = Pager.of(page, total)
    _, rows = credentials.invitations(db, study, pager.offset, pager.size)
    return {"total": total, "page": page, "invitations": [_invitation(r) for r in rows]}


@router.delete("/invitations/{invitation_id}")
def revoke_invitation(invitation_id: Id, user: Admin, db: Db) -> dict[str, Any]:
    """Revoke an unused invitation (409 if used); its link then answers 410."""
    row = db.get(Invitation, invitation_id)
    if row is None:
        raise NotFound(f"no invitation {invitation_id}")
    credentials.revoke_invitation(db, user, service.get_study(db, row.study_id), invitation_id)
    return {"id": invitation_id, "revoked": True}


@router.get("/studies/{study_id}/members")
def members(study_id: Id, user: Admin, db: Db, page: PageNumber = 1) -> dict[str, Any]:
    """The study's raters, and whether each is active."""
    study = service.get_study(db, study_id)
    where = Membership.study_id == study.id
    total = int(db.scalar(select(func.count()).select_from(Membership).where(where)) or 0)
    pager = Pager.of(page, total)
    query = select(Membership, User).join(User, User.id == Membership.user_id).where(where)
    rows = db.execute(query.order_by(Membership.id).offset(pager.offset).limit(pager.size))
    return {
        "total": total,
        "page": page,
        "raters": [
            {
                **_user(u),
                "deactivated_at": _when(m.deactivated_at),
                "consented_at": _when(m.consented_at),
            }
            for m, u in rows
        ],
    }


@router.post("/studies/{study_id}/raters/{user_id}/{action}")
def set_active(study_id: Id, user_id: Id, action: str, user: Admin, db: Db) -> dict[str, Any]:
    """``deactivate`` or ``reactivate`` a rater in the study; audited."""
    study = service.get_study(db, study_id)
    rater = credentials.user_by_id(db, user_id)
    done = accounts.membership_action(db, study, rater, user, action)
    return {"study": study.id, "user": rater.id, "status": f"{action}d", "already": not done}


@router.get("/users")
def users(user: Admin, db: Db, page: PageNumber = 1) -> dict[str, Any]:
    """Every account, by id."""
    total = int(db.scalar(select(func.count()).select_from(User)) or 0)
    pager = Pager.of(page, total)
    query = select(User).order_by(User.id).offset(pager.offset).limit(pager.size)
    return {"total": total, "page": page, "users": [_user(u) for u in db.scalars(query)]}


def _reset(request: Request, db: Session, actor: User, target: User) -> dict[str, Any]:
    token = credentials.reset_link_token(db, actor, target)
    url = str(request.url_for("reset_page", token=token))
    return {"user": target.id, "reset_url": url, "valid_hours": 24}


@router.post("/admins", status_code=201)
def create_admin(body: AdminBody, request: Request, user: Admin, db: Db) -> dict[str, Any]:
    """A new admin with a random password nobody sees, and the link to choose theirs."""
    made = credentials.create_admin(db, user, body.email, secrets.token_urlsafe(24))
    return {**_user(made), **_reset(request, db, user, made)}


@router.post("/users/{user_id}/password-reset")
def password_reset(user_id: Id, request: Request, user: Admin, db: Db) -> dict[str, Any]:
    """A one-use link that sets the user's password (shown once)."""
    return _reset(request, db, user, credentials.user_by_id(db, user_id))


@router.post("/users/{user_id}/revoke-sessions")
def revoke_sessions(user_id: Id, user: Admin, db: Db) -> dict[str, Any]:
    """Log the user out everywhere."""
    ended = credentials.revoke_user_sessions(db, user, credentials.user_by_id(db, user_id))
    return {"user": user_id, "revoked_sessions": ended}


@router.post("/users/{user_id}/disable")
def disable(user_id: Id, user: Admin, db: Db) -> dict[str, Any]:
    """Disable an account: its sessions and tokens are revoked and its logins refused."""
    counts = credentials.disable_user(db, user, credentials.user_by_id(db, user_id))
    return {"user": user_id, "disabled": True, "revoked": counts}


@router.post("/users/{user_id}/enable")
def enable(user_id: Id, user: Admin, db: Db) -> dict[str, Any]:
    """Let a disabled account log in again."""
    credentials.enable_user(db, user, credentials.user_by_id(db, user_id))
    return {"user": user_id, "disabled": False}


@router.get("/audit")
def audit(
    user: Admin,
    db: Db,
    page: PageNumber = 1,
    action: Annotated[str, Query(max_length=40)] = "",
) -> dict[str, Any]:
    """The audit log, newest first, 50 entries a page, optionally of one action."""
    pager, rows, actions = audit_rows(db, action, page)
    entries = [{k: v for k, v in row.items() if k != "summary"} for row in rows]
    return {"total": pager.total, "page": page, "actions": actions, "entries": entries}
