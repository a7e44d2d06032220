"""The floor for the judge load benchmark: a minimal FastAPI + SQLite endpoint pair.

What the judge server does for a rater, stripped to its durable core and nothing else:
``GET /next`` hands out one open question (an ``UPDATE ... RETURNING`` that marks it
taken), ``POST /answer/{id}`` inserts the answer and commits. SQLite in WAL mode with
``synchronous=FULL`` (each commit on disk before the reply), as the judge server runs
it; one uvicorn worker; plain ``sqlite3``, one connection per worker thread. No
authentication, CSRF, sessions, audit log, validation or templates: what no real server
may skip is what this one skips, so the ratio to it is the cost of everything else.

Run: ``python benchmarks/judge_floor.py DB PORT`` (made and seeded by
``bench_judge_load.py``).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import sys
import threading
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

SCHEMA = """
CREATE TABLE IF NOT EXISTS questions (id INTEGER PRIMARY KEY, step TEXT NOT NULL,
                                      taken INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS answers (id INTEGER PRIMARY KEY, question INTEGER NOT NULL UNIQUE,
                                    yes INTEGER NOT NULL, confidence INTEGER NOT NULL);
"""


def connect(path: str) -> sqlite3.Connection:
    """A connection with the judge server's pragmas."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


def seed(path: str, questions: int) -> None:
    """``questions`` open questions."""
    db = connect(path)
    db.executescript(SCHEMA)
    db.executemany(
        "INSERT INTO questions (step) VALUES (?)", [(f"7 * 5 = {i}",) for i in range(questions)]
    )
    db.close()


class Body(BaseModel):
    """The answer."""

    yes: bool
    confidence: int


class OneWriter:
    """A thread lock, then an ``flock`` that the other worker processes queue on too."""

    def __init__(self, lock_path: str) -> None:
        self.threads = threading.Lock()
        self.fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)

    def __enter__(self) -> None:
        self.threads.acquire()
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.threads.release()


def app(path: str) -> FastAPI:
    """The two endpoints over the database at ``path``."""
    local = threading.local()
    write = OneWriter(path + "-floor-gate")  # one writer at a time, as SQLite has it anyway

    def db() -> sqlite3.Connection:
        if not hasattr(local, "db"):
            local.db = connect(path)
        conn: sqlite3.Connection = local.db
        return conn

    api = FastAPI()

    @api.get("/next")
    def next_question() -> dict[str, Any]:
        with write:
            row = (
                db()
                .execute(
                    "UPDATE questions SET taken = 1 WHERE id = "
                    "(SELECT id FROM questions WHERE taken = 0 LIMIT 1) RETURNING id, step"
                )
                .fetchone()
            )
        return {"id": None} if row is None else {"id": row[0], "step": row[1]}

    @api.post("/answer/{question}")
    def answer(question: int, body: Body) -> dict[str, Any]:
        with write:
            db().execute(
                "INSERT INTO answers (question, yes, confidence) VALUES (?, ?, ?)",
                (question, body.yes, body.confidence),
            )
        return {"status": "recorded"}

    return api


def from_environment() -> FastAPI:
    """The app of one of several worker processes (the database path in the environment)."""
    return app(os.environ[DB_ENV])


DB_ENV = "PROOFGAMES_FLOOR_DB"

if __name__ == "__main__":
    path, port = sys.argv[1], int(sys.argv[2])
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if workers == 1:
        uvicorn.run(app(path), host="127.0.0.1", port=port, log_level="warning")
    else:  # the workers queue on one lock file to write, as the judge server's do
        os.environ[DB_ENV] = path
        uvicorn.run(
            "judge_floor:from_environment", factory=True, workers=workers, host="127.0.0.1",
            port=port, log_level="warning", app_dir=os.path.dirname(os.path.abspath(__file__)),
        )  # fmt: skip
