"""``proofgames judge serve|token|admin``: the human-judge web app and its credentials.

``admin create`` makes an admin (for a server started with ``--no-demo``, or another
one); ``admin password`` gives an account a new password and logs it out everywhere
(for an admin who lost theirs). The server's packages (the ``judge`` extra) are
imported only when a command runs.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["judge", "serve", "--port", "70000"])
    >>> res.exit_code, "--port must be in [0, 65535]" in res.output
    (2, True)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import console, err_console, fail, one_line_errors

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

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
admin = typer.Typer(
    no_args_is_help=True,
    help="Admins and passwords: create an admin, set a lost password.",
)
app.add_typer(admin, name="admin")
EmailOption = Annotated[str, typer.Option("--email", help="the account's email address")]
StdinOption = Annotated[
    bool,
    typer.Option(
        "--password-stdin",
        help="read the password from the first line of stdin (default: a random one, printed)",
    ),
]


def _url(db: str) -> str:
    """A SQLAlchemy URL for ``--db`` (a plain path means a SQLite file; ``:memory:`` memory).

    Example:
        >>> _url("postgresql://judge@db/judge"), _url(":memory:")
        ('postgresql://judge@db/judge', 'sqlite://')
    """
    if db == ":memory:":  # refused by open_database, as SQLite's own name for memory
        return "sqlite://"
    return db if "://" in db else f"sqlite:///{Path(db).resolve()}"


MAX_WORKERS = 64
"""The most worker processes ``judge serve`` starts."""


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
    workers: Annotated[
        int,
        typer.Option(
            help=f"worker processes sharing the port (1 to {MAX_WORKERS}; SQLite: they "
            "take turns to write through a lock file beside the database)"
        ),
    ] = 1,
) -> None:
    """Serve the judge web app (a demo study on first start of an empty database).

    The port is bound and the database opened and migrated before the demo is seeded or
    its credentials printed; an in-memory database is refused.
    """
    if not 0 <= port <= 65535:
        fail(f"--port must be in [0, 65535], not {port}")
    if not 1 <= workers <= MAX_WORKERS:
        fail(f"--workers must be in [1, {MAX_WORKERS}], not {workers}")
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
            workers=workers,
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
            found = session.scalars(query.order_by(User.id)).first()
            if found is None:
                who = f"admin {email}" if email else "admin"
                fail(f"no {who} in {redacted(_url(db))}: start 'proofgames judge serve' first")
            with one_line_errors():
                made = create_api_token(session, found, label)
            console.print(made, soft_wrap=True)
    finally:
        engine.dispose()


@contextmanager
def _database(db: str, create: bool) -> Iterator[Session]:
    """A session on the judge database ``--db`` (one ``error:`` line if it cannot open)."""
    try:
        from ..judge.db import open_database, session_factory
    except ImportError as exc:
        fail(f"{EXTRA} ({exc})")
    with one_line_errors():
        engine = open_database(_url(db), create=create)
    try:
        with session_factory(engine)() as session, one_line_errors():
            yield session
    finally:
        engine.dispose()


def _password(from_stdin: bool) -> tuple[str, bool]:
    """The password to set, and whether it was generated (then it is printed once)."""
    if not from_stdin:
        import secrets  # only when a password is generated

        return secrets.token_urlsafe(18), True
    line = sys.stdin.readline()
    if not line:
        fail("--password-stdin: stdin is empty; give the password on its first line")
    return line.rstrip("\r\n"), False


def _announce(what: str, password: str, generated: bool) -> None:
    """Say what was done on stderr; print a generated password alone on stdout (once)."""
    err_console.print(what, highlight=False, markup=False)
    if generated:
        console.print(password, soft_wrap=True, highlight=False, markup=False)


@admin.command("create")
def create_admin_command(
    db: DbOption = DEFAULT_DB, email: EmailOption = "", password_stdin: StdinOption = False
) -> None:
    """Create an admin; a random password is printed once unless --password-stdin.

    Makes and migrates the database if needed, like ``serve`` (the message names it). An
    email that is malformed, holds an invisible character or has an account already is
    refused with one ``error:`` line, and so is a password under 10 characters.
    """
    if not email:
        fail("--email is required: the new admin's email address")
    password, generated = _password(password_stdin)
    with _database(db, create=True) as session:
        from ..judge.credentials import create_admin
        from ..judge.db import redacted

        made = create_admin(session, None, email, password).email
    _announce(f"admin {made} created in {redacted(_url(db))}", password, generated)


@admin.command("password")
def set_password_command(
    db: DbOption = DEFAULT_DB, email: EmailOption = "", password_stdin: StdinOption = False
) -> None:
    """Give an account a new password (random and printed once unless --password-stdin).

    Every session of the account is logged out. For an admin who lost their password;
    the database must exist already.
    """
    if not email:
        fail("--email is required: the account's email address")
    password, generated = _password(password_stdin)
    with _database(db, create=False) as session:
        from ..judge.credentials import set_password

        changed = set_password(session, None, email, password).email
    _announce(f"new password set for {changed}; its sessions are logged out", password, generated)
