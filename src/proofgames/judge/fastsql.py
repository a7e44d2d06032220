"""The rater's hot statements run on SQLite's driver directly, compiled once.

Under load, a rater's next step and answer spent over half of the server's time in
SQLAlchemy's per-statement machinery (execution contexts, result objects, the ORM's
loading), not in SQLite. :func:`rows` runs one of :mod:`.statements`' prebuilt Core
statements with the same SQL SQLAlchemy would send: the statement is compiled once per
shape (SQLAlchemy's compiler, so the SQL and its parameter order are SQLAlchemy's own),
and each call binds its values through the column types' own converters, runs the
cursor of the session's connection (inside the session's transaction), and converts the
result columns back through the same types. What does not change:

* the transaction: the statements run on the connection the :class:`~sqlalchemy.orm.Session`
  holds, so ``db.commit()`` and ``db.rollback()`` cover them;
* errors: a driver error is raised as SQLAlchemy's (``IntegrityError`` and the rest),
  as callers catch it;
* column defaults computed in Python (``created_at``) are filled in as SQLAlchemy would;
* ``before_cursor_execute`` listeners see each statement.

On other databases (PostgreSQL: a network round trip costs more than the machinery)
:func:`rows` runs the statement through SQLAlchemy as before. :func:`entity` builds a
model object from the columns of a row (a transient object: read it, never add it to a
session).

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> from proofgames.judge import statements
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> rows(db, statements.memberships(), {"rater": 1})
    []
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import exc
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import instance_dict, manager_of_class
from sqlalchemy.sql import Executable
from sqlalchemy.sql.dml import Insert, Update

from .models import Base

M = TypeVar("M", bound=Base)
Row = tuple[Any, ...]
Processor = Callable[[Any], Any] | None


@dataclass(frozen=True)
class Prepared:
    """One statement compiled for one dialect (and, for a DML statement, one set of keys).

    ``defaults`` are the columns whose Python-side defaults SQLAlchemy would compute
    (name, default); ``binds`` convert each positional value; ``results`` each result
    column.
    """

    sql: str
    compiled: Any
    names: tuple[str, ...]
    binds: tuple[Processor, ...]
    results: tuple[Processor, ...]
    defaults: tuple[tuple[str, Any], ...]


def _result_columns(stmt: Any) -> Sequence[Any]:
    if isinstance(stmt, Insert | Update):
        return list(stmt.exported_columns)
    return list(stmt.selected_columns)


def _prepare(stmt: Any, dialect: Dialect, keys: frozenset[str]) -> Prepared | None:
    """Compile ``stmt``; None when it needs what only SQLAlchemy's execution does."""
    dml = isinstance(stmt, Insert | Update)
    compiled = stmt.compile(dialect=dialect, column_keys=sorted(keys) if dml else None)
    names = tuple(compiled.positiontup or ())
    if "POSTCOMPILE" in compiled.string or (not names and compiled.binds):
        return None  # expanding IN lists or a named paramstyle: SQLAlchemy's path
    prefetch = list(compiled.insert_prefetch) + list(compiled.update_prefetch)
    defaults = []
    for column in prefetch:
        default = column.onupdate if column in compiled.update_prefetch else column.default
        if default is None or not (default.is_scalar or default.is_callable):
            return None
        defaults.append((column.key, default))
    binds = tuple(
        compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    )
    results = tuple(
        col.type.dialect_impl(dialect).result_processor(dialect, None)
        for col in _result_columns(stmt)
    )
    return Prepared(str(compiled), compiled, names, binds, results, tuple(defaults))


@functools.lru_cache(maxsize=512)
def prepared(stmt: Executable, dialect: Dialect, keys: frozenset[str]) -> Prepared | None:
    """``stmt`` compiled for ``dialect`` and these parameter names (cached), or None.

    None: the statement needs what only SQLAlchemy's execution does (an expanding IN
    list, a named parameter style, a default that is not a plain value or function);
    :func:`rows` then runs it through SQLAlchemy.
    """
    return _prepare(stmt, dialect, keys)


def _default(default: Any) -> Any:
    return default.arg if default.is_scalar else default.arg(None)


def _run(conn: Connection, prep: Prepared, params: Mapping[str, Any]) -> list[Row]:
    values = prep.compiled.construct_params(params)
    for key, default in prep.defaults:
        if values.get(key) is None:
            values[key] = _default(default)
    args = tuple(
        value if convert is None else convert(value)
        for value, convert in zip((values[n] for n in prep.names), prep.binds, strict=True)
    )
    cursor = conn.connection.cursor()
    conn.dispatch.before_cursor_execute(conn, cursor, prep.sql, args, None, False)
    dbapi = conn.dialect.loaded_dbapi
    try:
        cursor.execute(prep.sql, args)
        fetched = cursor.fetchall() if prep.results else []
    except dbapi.Error as error:
        raise exc.DBAPIError.instance(prep.sql, args, error, dbapi.Error) from error
    finally:
        cursor.close()
    if not any(prep.results):
        return [tuple(row) for row in fetched]
    return [
        tuple(v if f is None else f(v) for v, f in zip(row, prep.results, strict=True))
        for row in fetched
    ]


def rows(db: Session, stmt: Executable, params: Mapping[str, Any]) -> list[Row]:
    """The rows of ``stmt`` run with ``params`` in ``db``'s transaction (see the module doc).

    A statement without a result (an INSERT or UPDATE without RETURNING) gives ``[]``.
    """
    conn = db.connection()
    if conn.dialect.name == "sqlite":
        prep = prepared(stmt, conn.dialect, frozenset(params))
        if prep is not None:
            return _run(conn, prep, params)
    result = conn.execute(stmt, dict(params))
    return [tuple(row) for row in result] if result.returns_rows else []


@functools.cache
def _columns(model: type[Base]) -> tuple[str, ...]:
    """The attribute names of the model's columns, in the order a select of it gives."""
    return tuple(attr.key for attr in model.__mapper__.column_attrs)


def width(model: type[Base]) -> int:
    """How many columns of a row a model's entity takes (all of its mapped ones)."""
    return len(_columns(model))


def entity(model: type[M], values: Sequence[Any]) -> M:
    """A transient ``model`` object with ``values`` (its table's columns, in order)."""
    made: M = manager_of_class(model).new_instance()  # no constructor: no change events
    instance_dict(made).update(zip(_columns(model), values, strict=True))
    return made


def entities(row: Sequence[Any], *models: type[Base]) -> tuple[Any, ...]:
    """One transient object per model from a row of their columns, side by side."""
    made, at = [], 0
    for model in models:
        made.append(entity(model, row[at : at + width(model)]))
        at += width(model)
    return tuple(made)


def expire(db: Session, model: type[Base], key: Any, names: Sequence[str]) -> None:
    """Mark ``names`` stale on the session's own object for row ``key``, if it holds one.

    A statement run here changes the row, not an object the session loaded before it:
    the session would otherwise go on showing the old values (it is told, as the ORM
    would have been).
    """
    held = db.identity_map.get(db.identity_key(model, key))
    if held is not None:
        db.expire(held, list(names))
