"""``proofgames judge serve|token``: the human-judge web app and its API tokens.

The server's packages (the ``judge`` extra) are imported only when a command runs.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["judge", "serve", "--port", "70000"])
    >>> res.exit_code, "--port must be in [0, 65535]" in res.output
    (2, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import console, fail, one_line_errors

app = typer.Typer(
    no_args_is_help=True,
    help="Human judges: a web app where raters answer single-step questions.",
)

DEFAULT_DB = "proofgames-judge.db"
DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        help="database: a SQLite file path, or a URL (sqlite:///..., postgresql://...)",
    ),
]
EXTRA = "proofgames judge needs its extra: pip install 'proofgames[judge]'"


def _url(db: str) -> str:
    """A SQLAlchemy URL for ``--db`` (a plain path means a SQLite file; ``:memory:`` memory).

    Example:
        >>> _url("postgresql://judge@db/judge"), _url(":memory:")
        ('postgresql://judge@db/judge', 'sqlite://')
    """
    if db == ":memory:":  # refused by open_database, as SQLite's own name for memory
        return "sqlite://"
    return db if "://" in db else f"sqlite:///{Path(db).resolve()}"


@app.command()
def serve(
    db: DbOption = DEFAULT_DB,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    demo: Annotated[bool, typer.Option(help="seed the demo study into an empty database")] = True,
    admin_password: Annotated[
        str | None,
        typer.Option(help="the demo admin's password (default: random, printed once)"),
    ] = None,
    secure_cookies: Annotated[
        bool, typer.Option(help="mark cookies Secure (when served over HTTPS)")
    ] = False,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            help="a reverse proxy's address whose X-Forwarded-For is believed (repeatable; "
            "default: none, the connection's address counts)"
        ),
    ] = None,
) -> None:
    """Serve the judge web app (a demo study on first start of an empty database).

    The port is bound and the database opened and migrated before the demo is seeded or
    its credentials printed; an in-memory database is refused.
    """
    if not 0 <= port <= 65535:
        fail(f"--port must be in [0, 65535], not {port}")
    try:
        from ..judge.serve import run
    except ImportError as exc:
        fail(f"{EXTRA} ({exc})")
    with one_line_errors():
        run(
            _url(db),
            host,
            port,
            demo=demo,
            admin_password=admin_password,
            secure_cookies=secure_cookies,
            trusted_proxies=tuple(trusted_proxy or ()),
            announce=console.print,
        )


@app.command()
def token(
    db: DbOption = DEFAULT_DB,
    email: Annotated[str, typer.Option(help="the admin who owns the token")] = "",
    label: Annotated[str, typer.Option(help="what the token is for")] = "cli",
) -> None:
    """Print a new API token for an admin (for HumanJudge); only its hash is stored.

    The database must exist and be a judge database: this command never creates one.
    """
    try:
        from sqlalchemy import select

        from ..judge.accounts import create_api_token
        from ..judge.db import open_database, redacted, session_factory
        from ..judge.models import User
    except ImportError as exc:
        fail(f"{EXTRA} ({exc})")
    with one_line_errors():
        engine = open_database(_url(db), create=False)
    try:
        with session_factory(engine)() as session:
            query = select(User).where(User.role == "admin")
            if email:
                query = query.where(User.email == email.strip().lower())
            admin = session.scalars(query.order_by(User.id)).first()
            if admin is None:
                who = f"admin {email}" if email else "admin"
                fail(f"no {who} in {redacted(_url(db))}: start 'proofgames judge serve' first")
            console.print(create_api_token(session, admin, label), soft_wrap=True)
    finally:
        engine.dispose()
