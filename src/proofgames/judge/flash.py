"""One-time messages across a redirect (Post/Redirect/Get) that keep secrets out of URLs.

A form that makes a secret to show once (an invitation link, an API token, a password
reset link) stores it, then redirects; the page it redirects to shows the secret once.
The secret travels in a short-lived cookie signed with the server's key and bound to
the session, never in a URL (so not in server or proxy logs). The page that shows it
deletes the cookie: reloading shows the page without the secret, and does nothing
again.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> value = seal(db, "session-1", {"message": "Invited ann@example.org."})
    >>> unseal(db, "session-1", value)
    {'message': 'Invited ann@example.org.'}
    >>> unseal(db, "session-2", value) is None  # another session's: ignored
    True
"""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import RedirectResponse
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from .accounts import server_secret
from .security import sha256
from .web import runtime, session_id

FLASH_COOKIE = "pg_flash"
#: How long a one-time message waits for the redirected page (seconds).
FLASH_SECONDS = 120
_SALT = "proofgames-judge-flash"


def _serializer(db: Session) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(server_secret(db), salt=_SALT)


def seal(db: Session, binding: str, data: dict[str, Any]) -> str:
    """``data`` signed and bound to a session id (a cookie value)."""
    return str(_serializer(db).dumps({"to": sha256(binding), "data": data}))


def unseal(db: Session, binding: str, value: str) -> dict[str, Any] | None:
    """The data sealed for this session, if genuine and recent; else None."""
    try:
        found = _serializer(db).loads(value, max_age=FLASH_SECONDS)
    except BadSignature:
        return None
    if not isinstance(found, dict) or found.get("to") != sha256(binding):
        return None
    data = found.get("data")
    return data if isinstance(data, dict) else None


def redirect(
    request: Request, db: Session, url: str, *, to_session: str | None = None, **data: Any
) -> Response:
    """A 303 redirect to ``url`` that shows ``data`` once on the page it leads to.

    ``to_session`` names the session that will read it, when the redirect also starts a
    new one (after a password change); by default, the request's.
    """
    response = RedirectResponse(url, status_code=303)
    sid = to_session or session_id(request)
    if sid is not None and data:
        response.set_cookie(
            FLASH_COOKIE,
            seal(db, sid, data),
            max_age=FLASH_SECONDS,
            httponly=True,
            samesite="strict",
            secure=runtime(request).settings.secure_cookies,
        )
    return response


def take(request: Request, db: Session) -> dict[str, Any]:
    """The one-time data for this request's page ({} if none); :func:`clear` it after."""
    value, sid = request.cookies.get(FLASH_COOKIE), session_id(request)
    if not value or sid is None:
        return {}
    return unseal(db, sid, value) or {}


def clear(request: Request, response: Response) -> Response:
    """Delete the one-time cookie, if the request had one (so a reload shows nothing)."""
    if FLASH_COOKIE in request.cookies:
        response.delete_cookie(FLASH_COOKIE, httponly=True, samesite="strict")
    return response
