"""Starting the judge server: the embedded demo study and the uvicorn runner.

On an empty database :func:`seed_demo` makes an admin, a study ``demo`` (k = 1), an API
token, an invitation for one rater and the demo debate's question (a lie at one step of
an arithmetic transcript), so ``proofgames judge serve`` is usable at once. :func:`run`
binds the port and opens (and migrates) the database before it seeds or prints anything,
so a busy port or a bad database fails with one
:class:`~proofgames.errors.ConfigurationError` and no credentials.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> seeded = seed_demo(session_factory(engine), "http://127.0.0.1:8000", "a long password")
    >>> sorted(seeded)
    ['admin_email', 'admin_password', 'api_token', 'invitation_url', 'study']
    >>> seed_demo(session_factory(engine), "http://127.0.0.1:8000", "x") is None
    True
"""

from __future__ import annotations

import secrets
import socket
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from ..errors import ConfigurationError
from ..language.demo import demo_question
from . import accounts, service
from .export import days
from .models import User

DEMO_ADMIN = "admin@example.org"
DEMO_RATER = "rater@example.org"


def seed_demo(
    sessions: sessionmaker[Session], base_url: str, admin_password: str | None = None
) -> dict[str, str] | None:
    """Fill an empty database with the demo; None (nothing done) if it has users."""
    with sessions() as db:
        if db.scalar(select(func.count()).select_from(User)):
            return None
        password = admin_password or secrets.token_urlsafe(12)
        admin = accounts.create_user(db, DEMO_ADMIN, "admin", password)
        study = service.create_study(db, "demo", 1, actor=admin)
        token = accounts.create_api_token(db, admin, "demo")
        invitation = accounts.invite(db, admin, study, DEMO_RATER, days(7))
        service.post_question(db, study, "demo-debate-1", demo_question())
        return {
            "admin_email": DEMO_ADMIN,
            "admin_password": password,
            "api_token": token,
            "invitation_url": f"{base_url.rstrip('/')}/invite/{invitation}",
            "study": study.name,
        }


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (port 0: any free port).

    Raises:
        ConfigurationError: The address cannot be resolved or bound (a busy port, ...).

    Example:
        >>> with listen("127.0.0.1", 0) as sock:
        ...     listen("127.0.0.1", sock.getsockname()[1])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ConfigurationError: cannot listen on 127.0.0.1:...: ...in use
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def _base_url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run(
    database_url: str,
    host: str,
    port: int,
    *,
    demo: bool = True,
    admin_password: str | None = None,
    secure_cookies: bool = False,
    trusted_proxies: tuple[str, ...] = (),
    workers: int = 1,
    announce: Any = print,
) -> None:
    """Bind, open and migrate, seed the demo on an empty database, and serve until stopped.

    A client's address is the connection's own: ``X-Forwarded-For`` counts only from the
    addresses in ``trusted_proxies`` (a reverse proxy in front of the server), so a
    client cannot choose the address its failed logins are counted under.

    Raises:
        ConfigurationError: The port cannot be bound or the database opened (see
            :func:`proofgames.judge.db.open_database`); nothing is seeded or printed then.
    """
    import uvicorn

    from .app import build
    from .db import open_database, redacted, session_factory
    from .web import Settings

    with listen(host, port) as sock:
        base = _base_url(host, sock.getsockname()[1])
        engine = open_database(database_url)
        try:
            settings = Settings(database_url=database_url, secure_cookies=secure_cookies)
            app = build(settings)
            seeded = seed_demo(session_factory(engine), base, admin_password) if demo else None
        finally:
            engine.dispose()
        if seeded:
            announce("demo seeded (shown once):")
            for key, value in seeded.items():
                announce(f"  {key}: {value}")
        shown = f" ({workers} worker processes)" if workers > 1 else ""
        announce(f"judge server on {base}{shown} (database {redacted(database_url)})")
        options: dict[str, Any] = {
            "log_level": "warning", "timeout_graceful_shutdown": 5,
            "proxy_headers": bool(trusted_proxies),
            "forwarded_allow_ips": list(trusted_proxies) or None,
        }  # fmt: skip
        if workers > 1:
            _supervise(settings, workers, options, sock)
            return
        server = uvicorn.Server(uvicorn.Config(app, **options))
        server.run(sockets=[sock])
    if not server.started:
        raise ConfigurationError(f"the judge server on {base} did not start")


def _supervise(settings: Any, workers: int, options: dict[str, Any], sock: socket.socket) -> None:
    """Serve ``sock`` from ``workers`` processes (uvicorn's supervisor) until stopped.

    Each worker builds the app from the settings passed in its environment
    (:func:`proofgames.judge.app.from_environment`); the supervisor restarts one that dies.
    """
    import inspect
    import os

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from .app import SETTINGS_ENV, settings_json

    os.environ[SETTINGS_ENV] = settings_json(settings)
    config = uvicorn.Config(
        "proofgames.judge.app:from_environment", factory=True, workers=workers, **options
    )
    if "target" in inspect.signature(Multiprocess).parameters:  # uvicorn before 0.40
        server = uvicorn.Server(config)
        Multiprocess(config, target=server.run, sockets=[sock]).run()  # type: ignore[call-arg]
    else:
        Multiprocess(config, sockets=[sock]).run()
