"""The rater's hot path: few statements, built once, and an index that stays fast.

Under load a rater's next step and answer spent most of their time in SQLAlchemy, not
SQLite; these tests hold the statement counts the load benchmark was measured with,
and that handing out work does not walk the study's closed questions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import event, text

from proofgames.judge import statements

from .judge_support import WARNING, api_csrf

pytestmark = pytest.mark.filterwarnings(WARNING)


@contextmanager
def counted(judge: Any) -> Iterator[list[str]]:
    """The SQL statements the app runs inside the block (transaction control excluded)."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        if not sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            seen.append(sql)

    engine = judge.app.state.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_next_step_and_its_answer_run_at_most_thirteen_statements(judge):
    for i in range(3):
        assert judge.post_question(f"d-{i}", f"7 * 5 = {i}").status_code == 201
    rater = judge.rater("r@example.org")
    headers = api_csrf(rater)
    for _ in range(2):  # the second round: nothing is loaded lazily on first use only
        with counted(judge) as next_sql:
            step = rater.get("/api/v1/assignments/next").json()
        body = {"yes": True, "confidence": 3, "shown_sha256": step["shown_sha256"]}
        with counted(judge) as answer_sql:
            r = rater.post(f"/api/v1/assignments/{step['assignment']}/answer", json=body,
                           headers=headers)  # fmt: skip
        assert r.json()["status"] == "recorded"
        # session; memberships; progress; open assignment; open question; insert
        assert len(next_sql) <= 6, next_sql
        # session; assignment with its question, study, answer and membership; slot;
        # answer; assignment done; membership's counts; audit entry (the two updates
        # keep "where the rater stands" from walking every step they ever answered)
        assert len(answer_sql) <= 7, answer_sql


def test_the_statements_are_built_once_per_shape():
    assert statements.open_question(False, False) is statements.open_question(False, False)
    assert statements.open_question(True, False) is not statements.open_question(False, False)
    assert statements.current(("work",)) is statements.current(("work",))


def test_the_open_work_is_found_through_the_index_on_closed(judge):
    """Handing out work must not walk the study's closed questions (it slowed with each)."""
    for i in range(30):
        judge.post_question(f"d-{i}", f"7 * 5 = {i}")
    engine = judge.app.state.engine
    with engine.begin() as connection:
        connection.execute(text("UPDATE questions SET closed = 1 WHERE id <= 25"))
    query = statements.open_question(False, False)
    compiled = query.compile(engine, compile_kwargs={"render_postcompile": True})
    values = {"rater": 1, "study": judge.study.id, "lease_start": dt.datetime(2026, 1, 1),
              "multiplier": 3}  # fmt: skip
    params = compiled.construct_params(values)
    positional = tuple(params[name] for name in compiled.positiontup or ())
    with engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", positional).all()
        found = connection.exec_driver_sql(str(compiled), positional).all()
    details = " | ".join(row[3] for row in plan)
    assert "ix_questions_study_kind_closed (study_id=? AND kind=? AND closed=?)" in details
    assert [row[0] for row in found] == [26]  # the first open one, in id order


@pytest.mark.parametrize("threads, expected", [(None, 4), (7, 7)])
def test_a_sqlite_server_runs_its_blocking_handlers_on_few_threads(tmp_path, threads, expected):
    """Forty runnable threads passed the interpreter's lock around (p99 up by a quarter)."""
    import anyio.to_thread
    from fastapi.testclient import TestClient

    from proofgames.judge.app import create_app
    from proofgames.judge.web import Settings

    app = create_app(
        Settings(database_url=f"sqlite:///{tmp_path / 'j.db'}", worker_threads=threads)
    )

    @app.get("/threads")
    async def _threads() -> dict[str, Any]:
        return {"tokens": anyio.to_thread.current_default_thread_limiter().total_tokens}

    app.router.routes.insert(0, app.router.routes.pop())  # before the pages' catch-alls
    with TestClient(app) as client:
        assert client.get("/threads").json() == {"tokens": expected}
