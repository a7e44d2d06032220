"""Database engines for the judge server: SQLite in WAL mode by default, or PostgreSQL.

:func:`make_engine` opens a URL; :func:`migrate` brings its schema to the newest Alembic
revision (idempotent, run at every start); :func:`open_database` is what the commands
use: it refuses an in-memory URL, checks the file or server, and migrates, raising one
:class:`~proofgames.errors.ConfigurationError` that names the URL (password redacted) and
the cause. SQLite gets ``journal_mode=WAL``,
``synchronous=FULL`` (a commit is on disk before the server acknowledges it),
``foreign_keys=ON`` and a 30 s busy timeout so concurrent writers queue instead of
failing.

Example:
    >>> engine = make_engine("sqlite://")
    >>> migrate(engine)
    >>> current_revision(engine) == head_revision()
    True
    >>> sqlite_url("/tmp/judge.db")
    'sqlite:////tmp/judge.db'
    >>> open_database("sqlite://")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.errors.ConfigurationError: cannot use the judge database sqlite://: it is in ...
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import weakref
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

try:  # the cross-process write gate (not on Windows: one process there)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool, StaticPool

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


def redacted(url: str) -> str:
    """``url`` with any password replaced by ``***``: what messages and logs may show.

    Example:
        >>> redacted("postgresql://judge:secret@db.example.org/judge")
        'postgresql://judge:***@db.example.org/judge'
        >>> redacted("sqlite:////data/judge.db")
        'sqlite:////data/judge.db'
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # malformed: hide whatever sits where a password would
        return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", url)
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)


def make_engine(url: str) -> Engine:
    """Open a database by URL (``sqlite:///path``, ``postgresql+psycopg://...``).

    Connecting is lazy: nothing is opened or created until the engine is first used
    (:func:`open_database` opens, checks and migrates).

    Raises:
        ConfigurationError: The URL is malformed, names an unsupported database, or its
            driver is not installed.
    """
    shown = redacted(url)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise ConfigurationError(f"judge database URL {shown!r} is malformed: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigurationError(
            f"judge database URL {shown!r}: unsupported database {backend!r}"
            " (use sqlite or postgresql)"
        )
    try:
        return _sqlite_engine(parsed) if backend == "sqlite" else _postgres_engine(parsed)
    except (ImportError, ArgumentError) as exc:
        raise ConfigurationError(
            f"judge database URL {shown!r}: its driver cannot be loaded ({exc}); use"
            " sqlite:///PATH or postgresql+psycopg://..."
        ) from exc


def _sqlite_engine(parsed: URL) -> Engine:
    kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False, "timeout": 30}}
    if parsed.database in (None, "", ":memory:"):
        kwargs["poolclass"] = StaticPool
    else:  # one connection for each of the server's 40 worker threads
        kwargs.update(pool_size=20, max_overflow=30)
    engine = create_engine(parsed, **kwargs)
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "checkin", _resync)
    return engine


RELAXED = "proofgames.unsynced"
"""Marks a pooled SQLite connection whose last commit did not wait for the disk."""


def _resync(dbapi_connection: Any, record: Any) -> None:
    """Back to ``synchronous=FULL`` before the pool hands the connection out again."""
    if record is not None and record.info.pop(RELAXED, False):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()


def _postgres_engine(parsed: URL) -> Engine:
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    # an unreachable host fails after 10 s instead of hanging (a URL's own value wins)
    connect_args = {} if "connect_timeout" in parsed.query else {"connect_timeout": 10}
    return create_engine(
        parsed, pool_size=20, max_overflow=20, pool_pre_ping=True, connect_args=connect_args
    )


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest migration (does nothing when it is current)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def head_revision() -> str:
    """The newest migration's revision (what :func:`migrate` brings a database to)."""
    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The schema's Alembic revision, or None for an empty database."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


#: What opening, checking or migrating a database raises when the database is at fault.
OPEN_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, CommandError, OSError, sqlite3.Error)


def in_memory(url: str) -> bool:
    """Whether a URL names an in-memory SQLite database (a malformed one: False).

    Example:
        >>> [in_memory(u) for u in ("sqlite://", "sqlite:///:memory:?cache=shared")]
        [True, True]
        >>> in_memory("sqlite:///file:j?mode=memory&uri=true"), in_memory("sqlite:///j.db")
        (True, False)
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return False
    if parsed.get_backend_name() != "sqlite":
        return False
    name = parsed.database or ""
    return (
        name in ("", ":memory:")
        or name.startswith("file::memory:")
        or "memory" in str(parsed.query.get("mode", ""))
    )


def _sqlite_problem(path: Path, create: bool) -> str | None:
    """Why SQLite cannot keep a judge database at ``path``; None when it looks usable."""
    folder = path.parent
    if path.is_dir():
        return f"{path} is a folder, not a database file"
    if not path.exists():
        if not create:
            return f"{path} does not exist (a judge database is made by 'proofgames judge serve')"
        if not folder.is_dir():
            state = "is not a folder" if folder.exists() else "does not exist"
            return f"cannot create {path}: its folder {folder} {state}"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"cannot create {path}: its folder {folder} is not writable"
        return None
    if not os.access(path, os.R_OK | os.W_OK):
        return f"{path} is not readable and writable"
    if not Path(f"{path}-wal").exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable (SQLite keeps its journal beside {path.name})"
    return None


def _known_revisions() -> set[str]:
    return {script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}


def _schema_problem(engine: Engine, create: bool) -> str | None:
    """Why the database is not a judge database (None: it is one, or empty and ``create``)."""
    with engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
        tables = inspect(connection).get_table_names()
    if revision is None and not create:
        return "it is not a judge database (no migrated judge schema)"
    if revision is None and tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        return f"it is not a judge database (it holds other tables: {shown})"
    if revision is not None and revision not in _known_revisions():
        return f"its schema revision {revision!r} is not one of this proofgames' migrations"
    return None


def _cause(exc: Exception, password: str | None) -> str:
    """One line of what the driver said (the password, if it appears, redacted)."""
    said = str(getattr(exc, "orig", None) or exc)
    line = "; ".join(part.strip() for part in said.splitlines() if part.strip())
    if password:
        line = line.replace(password, "***")
    return line or type(exc).__name__


def open_database(url: str, *, create: bool = True) -> Engine:
    """Open a judge database for a server or a command: checked and migrated.

    Args:
        url: a SQLAlchemy URL (``sqlite:///PATH``, ``postgresql://...``).
        create: make the database when a SQLite file does not exist yet (the server);
            False refuses a missing file and a database without the judge's schema.

    Raises:
        ConfigurationError: One line naming the URL (password redacted) and the cause:
            malformed or unsupported, in memory, a folder, a missing or unwritable
            folder or file, not a SQLite or not a judge database, an unreachable or
            refusing server.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     engine = open_database(sqlite_url(f"{folder}/judge.db"))
        ...     print(current_revision(engine) == head_revision()); engine.dispose()
        True
        >>> open_database("sqlite:////nonexistent/typo.db", create=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ConfigurationError: cannot open ...typo.db does not exist ...
    """
    shown = redacted(url)
    if in_memory(url):
        raise ConfigurationError(
            f"cannot use the judge database {shown}: it is in memory, and the server and"
            " each command open their own connection, so accounts made in one are not seen"
            " by another and every answer is lost at exit; give a file path or a"
            " postgresql:// URL"
        )
    engine = make_engine(url)
    parsed = make_url(url)
    problem = None
    if parsed.get_backend_name() == "sqlite":
        problem = _sqlite_problem(Path(str(parsed.database).removeprefix("file:")), create)
    try:
        # SQLite: read the schema without the WAL pragma, which would change another's file
        probe = (
            create_engine(url, poolclass=NullPool) if engine.dialect.name == "sqlite" else engine
        )
        problem = problem or _schema_problem(probe, create)
        if problem is None:
            migrate(engine)
    except OPEN_ERRORS as exc:
        problem = _cause(exc, parsed.password)
    if problem is not None:
        engine.dispose()
        raise ConfigurationError(f"cannot open the judge database {shown}: {problem}")
    return engine


class _Gate:
    """One writer at a time: a lock for this process's threads, and a lock file's ``flock``.

    For a database file, an exclusive ``flock`` on a file beside it (``<database>-gate``)
    holds off the server's other worker processes; the kernel releases it if a process
    dies.
    """

    def __init__(self, path: str | None) -> None:
        self._threads = threading.Lock()
        self._path = path if fcntl is not None else None  # None: this process's lock only
        self._fd: int | None = None  # opened on first use (only with a path)

    def __enter__(self) -> _Gate:
        self._threads.acquire()
        if self._path is None:
            return self
        try:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._threads.release()


_GATES: weakref.WeakKeyDictionary[Engine, _Gate] = weakref.WeakKeyDictionary()
_GATES_LOCK = threading.Lock()


def write_gate(db: Session) -> AbstractContextManager[object]:
    """A lock that lets one writer at a time at a SQLite database, across processes.

    SQLite has one writer; threads that collide on its lock back off with sleeps of up
    to 100 ms, which ruins latency under load. Queuing them on a lock instead costs
    nothing. It also makes "choose a question, then assign it" one step: the choice is
    read outside a write transaction, so two writers choosing at once could both pick
    the last free slot. For a database file the lock spans the server's worker processes
    (``judge serve --workers N``), through a lock file beside it; an in-memory database
    lives in one process. PostgreSQL (row locks) needs no gate. Take it only while the
    session holds its connection (inside a transaction), and release it before the
    session needs another: a thread waiting on the gate must never hold what the holder
    needs.

    Example:
        >>> from proofgames.judge.db import make_engine, session_factory
        >>> db = session_factory(make_engine("sqlite://"))()
        >>> with write_gate(db):
        ...     pass
    """
    bind = db.get_bind()
    if not isinstance(bind, Engine) or bind.dialect.name != "sqlite":
        return nullcontext()
    with _GATES_LOCK:
        gate = _GATES.get(bind)
        if gate is None:
            gate = _GATES[bind] = _Gate(_gate_path(bind))
        return gate


def _gate_path(engine: Engine) -> str | None:
    """The lock file of a SQLite database file (None: in memory)."""
    database = engine.url.database
    if database in (None, "", ":memory:") or str(database).startswith("file::memory:"):
        return None
    return str(Path(str(database).removeprefix("file:")).resolve()) + "-gate"


def unsynced(db: Session) -> None:
    """Let this transaction commit without waiting for the disk: for what may be lost.

    Call it before the transaction's first write (SQLite changes its safety level only
    outside a write transaction). An assignment (a question handed to a rater) is such a
    write: if it is lost, the question is handed out again. Answers are not: they are
    committed with ``synchronous=FULL`` (SQLite) or the server's synchronous commit
    (PostgreSQL), and on SQLite that durable commit also puts every earlier one on disk
    (the WAL is written in order). A ``kill -9`` of the server loses neither kind; the
    operating system has the data. SQLite: ``synchronous=NORMAL`` until the pool takes
    the connection back; PostgreSQL: ``SET LOCAL synchronous_commit TO OFF``.
    """
    bind = db.get_bind()
    name = bind.dialect.name if isinstance(bind, Engine) else ""
    if name == "sqlite":  # reset to FULL when the pool takes the connection back
        connection = db.connection()
        connection.exec_driver_sql("PRAGMA synchronous=NORMAL")
        connection.connection.info[RELAXED] = True
    elif name == "postgresql":
        db.connection().exec_driver_sql("SET LOCAL synchronous_commit TO OFF")


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)
