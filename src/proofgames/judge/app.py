"""The judge server's ASGI app: :func:`create_app` wires database, pages, API and guards.

Example:
    >>> app = create_app(Settings(database_url="sqlite://"))
    >>> app.title, app.state.runtime.settings.max_body_bytes
    ('proofgames judge', 262144)
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.exc import OperationalError
from starlette.types import ASGIApp

from ..errors import ConfigurationError
from . import account_pages, admin_api, admin_pages, admin_users, api, design_pages, pages
from .accounts import server_secret
from .db import make_engine, migrate, session_factory
from .errors import JudgeError, Unauthorized
from .security import Keys
from .web import SQLITE_THREADS, Guard, Runtime, Settings

HERE = Path(__file__).resolve().parent

__all__ = ["Settings", "build", "create_app", "from_environment"]

SETTINGS_ENV = "PROOFGAMES_JUDGE_SETTINGS"
"""The environment variable a worker process of ``judge serve --workers N`` reads its
:class:`Settings` from (JSON)."""

DEFAULT_THREADS = 40
"""Worker threads of a server on PostgreSQL (AnyIO's default: its waits are on the network)."""


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error_page(request: Request, status: int, detail: str) -> Response:
    if _is_api(request):
        return JSONResponse({"error": detail}, status_code=status)
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(
        request,
        "error.html",
        {"status": status, "detail": detail, "user": None, "csrf": ""},
        status_code=status,
    )


async def _judge_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, JudgeError)
    if isinstance(exc, Unauthorized) and not _is_api(request) and request.method == "GET":
        return RedirectResponse("/login", status_code=303)
    return _error_page(request, exc.status, str(exc))


async def _invalid(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors()[:10]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return _error_page(request, 422, "invalid request: " + "; ".join(problems))


async def _busy(request: Request, exc: Exception) -> Response:
    return _error_page(request, 503, "the database is busy; retry in a moment")


def create_app(settings: Settings) -> FastAPI:
    """The FastAPI app for ``settings`` (migrates the database to the newest schema)."""
    engine = make_engine(settings.database_url)
    migrate(engine)
    sessions = session_factory(engine)
    with sessions() as db:
        keys = Keys(server_secret(db))
    threads = settings.worker_threads or (
        SQLITE_THREADS if engine.dialect.name == "sqlite" else DEFAULT_THREADS
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield

    app = FastAPI(
        title="proofgames judge", docs_url=None, redoc_url=None, openapi_url=None,
        lifespan=lifespan,
    )  # fmt: skip
    app.state.runtime = Runtime(settings=settings, sessions=sessions, keys=keys)
    app.state.templates = Jinja2Templates(directory=HERE / "templates")
    app.state.engine = engine
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(admin_pages.router)
    app.include_router(design_pages.router)
    app.include_router(admin_users.router)
    app.include_router(admin_api.router)
    app.include_router(account_pages.router)
    app.add_exception_handler(JudgeError, _judge_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(OperationalError, _busy)
    return app


def build(settings: Settings) -> ASGIApp:
    """The app wrapped in its guard (body limit, security headers): what is served."""
    return Guard(create_app(settings), settings.max_body_bytes)


def settings_json(settings: Settings) -> str:
    """``settings`` as the JSON text of :data:`SETTINGS_ENV`.

    Example:
        >>> text = settings_json(Settings(database_url="sqlite:///j.db"))
        >>> settings_from_json(text) == Settings(database_url="sqlite:///j.db")
        True
    """
    return json.dumps(dataclasses.asdict(settings))


def settings_from_json(text: str) -> Settings:
    """The :class:`Settings` in ``text`` (from :func:`settings_json`).

    Raises:
        ConfigurationError: Not the JSON of a settings object.
    """
    try:
        fields = json.loads(text)
        return Settings(**fields)
    except (ValueError, TypeError) as exc:
        raise ConfigurationError(f"{SETTINGS_ENV} does not hold judge settings: {exc}") from exc


def from_environment() -> ASGIApp:
    """The app a worker process of ``judge serve --workers N`` serves (uvicorn factory).

    Raises:
        ConfigurationError: :data:`SETTINGS_ENV` is unset or not settings.
    """
    text = os.environ.get(SETTINGS_ENV)
    if text is None:
        raise ConfigurationError(f"{SETTINGS_ENV} is not set: start workers with judge serve")
    return build(settings_from_json(text))
