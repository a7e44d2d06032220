"""Pages of one's own account: password change, live sessions, and password reset links.

* ``/account``: who you are, your live sessions (each by a handle, not its secret id),
  a button to log out the others (or one of them), and the password change form. A
  change needs the current password, checked under the login limits (a wrong one counts
  as a failed login), revokes every session, and starts a new one here.
* ``/reset/{token}``: the link an admin sends to set a password (one use, 24 hours);
  it revokes every session of the user and logs them in.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Path, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from . import accounts, credentials, flash
from .admin_pages import show
from .errors import JudgeError
from .models import User
from .pages import page
from .web import check_csrf, cookie_user, get_db, require, runtime, session_id, set_session_cookie

router = APIRouter()
Db = Annotated[Session, Depends(get_db)]
Secret = Annotated[str, Form(max_length=200)]
ResetToken = Annotated[str, Path(max_length=300)]


def logged_in(request: Request, db: Db) -> User:
    """The logged-in user, admin or rater (dependency)."""
    return require(cookie_user(request, db))


LoggedIn = Annotated[User, Depends(logged_in)]


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _account_page(request: Request, user: User, db: Session, **ctx: Any) -> Response:
    current = session_id(request)
    sessions = [
        {
            "handle": credentials.session_handle(row.id),
            "created_at": row.created_at.isoformat(timespec="seconds") + "Z",
            "expires_at": row.expires_at.isoformat(timespec="seconds") + "Z",
            "current": row.id == current,
        }
        for row in credentials.live_sessions(db, user)
    ]
    return show(request, db, "account.html", user, sessions=sessions, **ctx)


@router.get("/account", response_class=HTMLResponse)
def account(request: Request, user: LoggedIn, db: Db) -> Response:
    """Your account: live sessions and the password change form."""
    return _account_page(request, user, db)


@router.post("/account/password", response_class=HTMLResponse)
def change_password(
    request: Request,
    user: LoggedIn,
    db: Db,
    current_password: Secret,
    new_password: Secret,
    csrf_token: Secret,
) -> Response:
    """Change your password: every session ends, and a new one starts here."""
    check_csrf(request, csrf_token)
    try:
        credentials.change_password(db, user, current_password, new_password, _client(request))
    except JudgeError as exc:
        return _account_page(request, user, db, status=exc.status, error=str(exc))
    sid = accounts.start_session(db, user, runtime(request).settings.session_lifetime)
    response = flash.redirect(
        request,
        db,
        "/account",
        to_session=sid,
        message="Password changed: every other session was logged out.",
    )
    set_session_cookie(request, response, sid)
    return response


@router.post("/account/sessions/revoke-others")
def revoke_others(request: Request, user: LoggedIn, db: Db, csrf_token: Secret) -> Response:
    """Log out every other session of yours."""
    check_csrf(request, csrf_token)
    current = session_id(request)
    assert current is not None  # logged in through it
    ended = credentials.revoke_other_sessions(db, user, current)
    return flash.redirect(request, db, "/account", message=f"{ended} other sessions logged out.")


@router.post("/account/sessions/revoke")
def revoke_session(
    request: Request,
    user: LoggedIn,
    db: Db,
    session: Annotated[str, Form(max_length=40)],
    csrf_token: Secret,
) -> Response:
    """Log out one of your sessions, named by its handle (anyone else's: 404)."""
    check_csrf(request, csrf_token)
    credentials.revoke_session(db, user, session)
    if credentials.session_handle(session_id(request) or "") == session:
        return flash.redirect(request, db, "/login")
    return flash.redirect(request, db, "/account", message="Session logged out.")


@router.get("/reset/{token}", response_class=HTMLResponse, name="reset_page")
def reset_page(request: Request, token: ResetToken, db: Db) -> Response:
    """The form to choose a new password through an admin's reset link."""
    user = credentials.reset_user(db, token)
    return page(request, "reset.html", None, token=token, email=user.email)


@router.post("/reset/{token}", response_class=HTMLResponse)
def reset(
    request: Request, token: ResetToken, db: Db, password: Secret, csrf_token: Secret
) -> Response:
    """Set the password (once), log out every session, and log in here."""
    check_csrf(request, csrf_token)
    try:
        user = credentials.reset_password(db, token, password)
    except JudgeError as exc:
        if exc.status != 422:
            raise
        email = credentials.reset_user(db, token).email
        return page(request, "reset.html", None, 422, token=token, email=email, error=str(exc))
    sid = accounts.start_session(db, user, runtime(request).settings.session_lifetime)
    response = flash.redirect(
        request, db, "/account", to_session=sid, message="Password set: you are logged in."
    )
    set_session_cookie(request, response, sid)
    return response
