"""Web plumbing shared by the judge server's pages and API: settings, auth, CSRF, limits.

* :class:`Settings` holds what ``proofgames judge serve`` is started with.
* :class:`Guard` wraps the ASGI app: it refuses bodies over the limit with 413 before
  any handler runs (it reads at most ``max_body_bytes + 1`` bytes), and adds security
  headers (a strict Content-Security-Policy: no inline script, no framing) to every
  response.
* The ``*_user`` functions find who is asking: a signed session cookie that names a
  live session in the database, or a bearer API token (admins only).

Example:
    >>> Settings(database_url="sqlite://").session_lifetime.total_seconds()
    43200.0
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Path, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .accounts import session_reader, session_user, token_user
from .errors import Forbidden, Unauthorized
from .models import User
from .security import Keys

MAX_ID = 2**31 - 1
"""The largest row id: an INTEGER key on PostgreSQL too."""
Id = Annotated[int, Path(ge=1, le=MAX_ID)]
"""A row id in a URL: a positive integer the database can hold (others: 422)."""
SESSION_COOKIE = "pg_session"
_SID = "proofgames.session_id"  # the request scope's key for its checked session id
NONCE_COOKIE = "pg_nonce"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


SQLITE_THREADS = 4
"""Worker threads of a server on SQLite (one writer at a time; the load benchmark).

With AnyIO's default of 40, fifty raters kept forty threads runnable at once, passing
the interpreter's lock among themselves: the server spent 6.53-6.60 ms of CPU an answer
(p99 362-375 ms); with 4 threads, 6.15-6.28 ms (p99 288-293 ms). Two 12 s runs of each,
alternated, one core (``benchmarks/bench_judge_load.py``'s set-up).
"""


@dataclass(frozen=True)
class Settings:
    """How the judge server runs.

    Args:
        database_url: SQLAlchemy URL (``sqlite:///judge.db`` or ``postgresql://...``).
        session_hours: Lifetime of a login session (cookie and database row).
        invitation_days: Lifetime of an invitation link.
        max_body_bytes: The largest request body accepted (larger: 413).
        secure_cookies: Mark cookies ``Secure`` (serve over HTTPS when set).
        long_poll_s: The longest a ``wait=`` request for a question's answers is held.
        worker_threads: How many worker threads run the blocking handlers at once
            (None: :data:`SQLITE_THREADS` on SQLite, AnyIO's 40 on PostgreSQL).
    """

    database_url: str
    session_hours: float = 12.0
    invitation_days: float = 7.0
    max_body_bytes: int = 256 * 1024
    secure_cookies: bool = False
    long_poll_s: float = 25.0
    worker_threads: int | None = None

    @property
    def session_lifetime(self) -> dt.timedelta:
        """:attr:`session_hours` as a timedelta."""
        return dt.timedelta(hours=self.session_hours)


@dataclass
class Runtime:
    """What the handlers need: the settings, a session maker and the signing keys."""

    settings: Settings
    sessions: sessionmaker[Session]
    keys: Keys


T = TypeVar("T")


class JsonRoute(APIRoute):
    """A JSON API route whose reply (a dict) is encoded as it is.

    FastAPI would otherwise make a response model of the ``dict[str, Any]`` annotation
    and validate each reply against it, in a worker thread of its own for a ``def``
    endpoint: one more thread hop a request, checking nothing.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["response_model"] = None
        super().__init__(path, endpoint, **kwargs)


def json_reply(content: dict[str, Any]) -> Response:
    """``content`` (JSON values only) as a JSON reply, without FastAPI's encoder pass.

    A route returning a dict has it walked by ``jsonable_encoder`` first, which converts
    nothing in a dict of JSON values; the busiest rater routes skip that walk.

    Example:
        >>> json_reply({"status": "recorded"}).body
        b'{"status":"recorded"}'
    """
    return JSONResponse(content)


def runtime(request: Request) -> Runtime:
    """The app's :class:`Runtime` (kept on ``app.state``)."""
    value: Runtime = request.app.state.runtime
    return value


async def get_db(request: Request) -> AsyncIterator[Session]:
    """A database session for one request (FastAPI dependency).

    Opened and closed on the event loop, not in a worker thread: opening touches no
    database, and closing a SQLite session only hands its connection back to the pool
    (a PostgreSQL one rolls back over the network, so it closes in a thread).
    """
    db = runtime(request).sessions()
    try:
        yield db
    finally:
        bind = db.get_bind()
        if bind.dialect.name == "sqlite":
            db.close()
        else:
            await run_in_threadpool(db.close)


async def briefly(db: Session, read: Callable[..., T], *args: Any) -> T:
    """Run ``read(*args)``, a short read of ``db``, for a request on the event loop.

    On SQLite (a local file, read in microseconds, and never blocked by a writer in WAL
    mode) it runs at once: a hop to a worker thread would cost more than the read. On
    PostgreSQL (a network round trip) it runs in a worker thread.
    """
    if db.get_bind().dialect.name == "sqlite":
        return read(*args)
    return await run_in_threadpool(read, *args)


def session_id(request: Request) -> str | None:
    """The id in a genuine, unexpired session cookie, else None.

    Checked once a request (the signature check is a keyed hash): a rater's post asks
    twice, for the session's user and for the CSRF token's binding.
    """
    scope = request.scope
    if _SID in scope:
        found: str | None = scope[_SID]
        return found
    cookie = request.cookies.get(SESSION_COOKIE)
    sid = None
    if cookie:
        rt = runtime(request)
        sid = rt.keys.unsign_session(cookie, max_age=rt.settings.session_lifetime.total_seconds())
    scope[_SID] = sid
    return sid


def cookie_user(request: Request, db: Session) -> User | None:
    """The user of the request's session cookie, if it names a live session."""
    sid = session_id(request)
    return None if sid is None else session_user(db, sid)


def cookie_reader(request: Request, db: Session) -> User | None:
    """:func:`cookie_user` as a read-only copy (see :func:`.accounts.session_reader`)."""
    sid = session_id(request)
    return None if sid is None else session_reader(db, sid)


def bearer_admin(request: Request, db: Session) -> User:
    """The admin whose API token the request carries; raises :class:`Unauthorized`."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("this API needs an 'Authorization: Bearer <token>' header")
    user = token_user(db, token.strip())
    if user is None:
        raise Unauthorized("the API token is not valid")
    return user


def csrf_binding(request: Request) -> str | None:
    """What the CSRF token is bound to: the session id, else the pre-login nonce."""
    sid = session_id(request)
    if sid is not None:
        return sid
    cookie = request.cookies.get(NONCE_COOKIE)
    if not cookie:
        return None
    rt = runtime(request)
    return rt.keys.unsign_nonce(cookie, max_age=rt.settings.session_lifetime.total_seconds())


def set_session_cookie(request: Request, response: Response, sid: str) -> None:
    """Log the client in: the signed session cookie (``SameSite=Lax``, ``HttpOnly``)."""
    rt = runtime(request)
    response.set_cookie(
        SESSION_COOKIE,
        rt.keys.sign_session(sid),
        max_age=int(rt.settings.session_lifetime.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=rt.settings.secure_cookies,
    )
    response.delete_cookie(NONCE_COOKIE)


def check_csrf(request: Request, token: str | None) -> None:
    """Raise :class:`Forbidden` unless ``token`` is this client's CSRF token."""
    binding = csrf_binding(request)
    given = token or request.headers.get("x-csrf-token", "")
    if binding is None or not given or not runtime(request).keys.csrf_ok(binding, given):
        raise Forbidden("the form's CSRF token is missing or wrong: reload the page and retry")


def _error(status: int, text: str) -> list[Message]:
    body = text.encode("utf-8")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", b"%d" % len(body)),
    ]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


class Guard:
    """ASGI wrapper: a hard limit on request bodies, and security headers on responses."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body = max_body_bytes

    async def _send_all(self, send: Send, messages: list[Message]) -> None:
        for message in messages:
            await self._secure(send)(message)

    def _secure(self, send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        return wrapped

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an oversized body with 413; else pass the request on, headers added."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = _error(413, f"request body over the {self.max_body:,}-byte limit")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._send_all(send, too_big)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body", False))
            if size > self.max_body:
                await self._send_all(send, too_big)
                return
        body, replayed = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, self._secure(send))


def require(user: User | None, role: str | None = None) -> User:
    """``user`` if logged in (with ``role``, when given); raises otherwise."""
    if user is None:
        raise Unauthorized("log in first")
    if role is not None and user.role != role:
        raise Forbidden(f"this needs the {role} role")
    return user
