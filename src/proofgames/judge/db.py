"""Database engines for the judge server: SQLite in WAL mode by default, or PostgreSQL.

:func:`make_engine` opens a URL; :func:`migrate` brings its schema to the newest Alembic
revision (idempotent, run at every start). SQLite gets ``journal_mode=WAL``,
``synchronous=FULL`` (a commit is on disk before the server acknowledges it),
``foreign_keys=ON`` and a 30 s busy timeout so concurrent writers queue instead of
failing.

Example:
    >>> engine = make_engine("sqlite://")
    >>> migrate(engine)
    >>> current_revision(engine)
    '0001'
    >>> sqlite_url("/tmp/judge.db")
    'sqlite:////tmp/judge.db'
"""

from __future__ import annotations

import threading
import weakref
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from ..errors import ConfigurationError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def sqlite_url(path: str | Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path)}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(url: str) -> Engine:
    """Open a database by URL (``sqlite:///path``, ``postgresql+psycopg://...``).

    Raises:
        ConfigurationError: The URL is malformed or names an unsupported database.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigurationError(f"judge database URL {url!r} is malformed: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        memory = parsed.database in (None, "", ":memory:")
        kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False, "timeout": 30}}
        if memory:
            kwargs["poolclass"] = StaticPool
        else:  # one connection for each of the server's 40 worker threads
            kwargs.update(pool_size=20, max_overflow=30)
        engine = create_engine(parsed, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return create_engine(parsed, pool_size=20, max_overflow=20, pool_pre_ping=True)
    raise ConfigurationError(
        f"judge database URL {url!r}: unsupported database {backend!r} (use sqlite or postgresql)"
    )


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest migration (does nothing when it is current)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def current_revision(engine: Engine) -> str | None:
    """The schema's Alembic revision, or None for an empty database."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


_GATES: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_GATES_LOCK = threading.Lock()


def write_gate(db: Session) -> AbstractContextManager[object]:
    """A lock that lets one thread of this process write to a SQLite database at a time.

    SQLite has one writer; threads that collide on its lock back off with sleeps of up
    to 100 ms, which ruins latency under load. Queuing them on a Python lock instead
    costs nothing. PostgreSQL (row locks) needs no gate. Take it only while the session
    holds its connection (inside a transaction), and release it before the session
    needs another: a thread waiting on the gate must never hold what the holder needs.
    """
    bind = db.get_bind()
    if not isinstance(bind, Engine) or bind.dialect.name != "sqlite":
        return nullcontext()
    with _GATES_LOCK:
        return _GATES.setdefault(bind, threading.Lock())


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)
