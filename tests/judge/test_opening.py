"""Opening the judge's database and port: every problem is one ``error:`` line, exit 2.

``judge serve`` and ``judge token`` name the URL (password redacted) and the cause; an
in-memory database is refused; ``judge token`` never creates a database; ``judge serve``
binds its port and opens its database before it seeds or prints anything.
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
import subprocess
import sys

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from proofgames.judge.db import make_engine, migrate

from .judge_support import ROOT, cli, free_port, refused, unwritable

COMMANDS = [["judge", "serve", "--port", "0"], ["judge", "token"]]
IDS = ["serve", "token"]


def judge_db(path):
    """A migrated, empty judge database at ``path`` (its connections closed)."""
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    return path


def proofgames(*args, cwd, timeout=60):
    """``python -m proofgames ARGS`` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "proofgames", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_a_file_that_is_not_a_sqlite_database_is_refused_untouched(command, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    refused(cli(*command, "--db", str(notes)), f"sqlite:///{notes}", "file is not a database")
    assert notes.read_text() == "not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_a_folder_is_refused(command, tmp_path):
    refused(cli(*command, "--db", str(tmp_path)), f"sqlite:///{tmp_path}", "is a folder")


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_a_missing_folder_is_refused_and_not_made(command, tmp_path):
    path = tmp_path / "nosuch" / "judge.db"
    refused(cli(*command, "--db", str(path)), f"sqlite:///{path}", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_a_new_database_in_an_unwritable_folder_is_refused(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with unwritable(folder):
        res = cli("judge", "serve", "--port", "0", "--db", str(folder / "judge.db"))
    refused(res, f"folder {folder} is not writable")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_an_unwritable_database_file_is_refused(command, tmp_path):
    path = judge_db(tmp_path / "judge.db")
    with unwritable(path):
        refused(cli(*command, "--db", str(path)), f"{path} is not readable and writable")


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_a_database_in_an_unwritable_folder_is_refused(command, tmp_path):
    path = judge_db(tmp_path / "judge.db")
    with unwritable(tmp_path):
        refused(cli(*command, "--db", str(path)), f"folder {tmp_path} is not writable")


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_an_unreachable_postgres_is_refused_with_the_password_redacted(command):
    url = f"postgresql://judge:s3cret@127.0.0.1:{free_port()}/judge"
    line = refused(cli(*command, "--db", url), "judge:***@127.0.0.1", "Connection refused")
    assert "s3cret" not in line


def test_an_unknown_postgres_host_is_refused():
    url = "postgresql://judge@nosuch.invalid/judge"
    refused(cli("judge", "token", "--db", url), url, "nosuch.invalid")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("mysql://judge:s3cret@db/judge", "unsupported database 'mysql'"),
        ("nosuch://judge:s3cret@db/judge", "unsupported database 'nosuch'"),
        ("postgresql+nosuchdriver://judge:s3cret@db/judge", "driver cannot be loaded"),
    ],
)
@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_an_unsupported_url_is_refused_with_the_password_redacted(command, url, words):
    line = refused(cli(*command, "--db", url), "judge:***@db/judge", words)
    assert "s3cret" not in line


MEMORY = [
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite:///:memory:?cache=shared",
    "sqlite://?timeout=5",
    "sqlite:///file::memory:?uri=true",
    "sqlite:///file:judge?mode=memory&cache=shared&uri=true",
    ":memory:",
]


@pytest.mark.parametrize("url", MEMORY)
@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_an_in_memory_database_is_refused_with_the_reason(command, url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    refused(cli(*command, "--db", url), "it is in memory", "lost at exit")
    assert list(tmp_path.iterdir()) == []


def test_token_never_creates_a_database(tmp_path):
    typo = tmp_path / "typo.db"
    refused(cli("judge", "token", "--db", str(typo)), f"{typo} does not exist")
    assert not typo.exists()


@pytest.mark.parametrize(
    "tables", [[], ["create table users (id integer)"]], ids=["empty", "other"]
)
def test_token_refuses_a_database_that_is_not_a_judge_database(tables, tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table t (x)")
        connection.execute("drop table t")  # an SQLite file with no tables
        for statement in tables:
            connection.execute(statement)
    connection.close()
    refused(cli("judge", "token", "--db", str(path)), "not a judge database")


def test_serve_refuses_a_database_of_something_else(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table accounts (id integer)")
    connection.close()
    refused(cli("judge", "serve", "--port", "0", "--db", str(path)), "holds other tables: accounts")
    with sqlite3.connect(path) as connection:
        names = [row[0] for row in connection.execute("select name from sqlite_master")]
        mode = connection.execute("pragma journal_mode").fetchone()[0]
    connection.close()
    assert names == ["accounts"] and mode == "delete"  # untouched, not even put in WAL mode


@pytest.mark.slow  # a child process
def test_a_busy_port_prints_no_credentials_and_creates_nothing(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = proofgames("judge", "serve", "--db", "judge.db", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stdout == "" and "admin_password" not in done.stderr
    assert re.fullmatch(rf"error: cannot listen on 127\.0\.0\.1:{port}: .*in use\n", done.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # a child process
def test_the_printed_credentials_work_on_the_printed_address(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "proofgames", "judge", "serve", "--db", "j.db", "--port", "0"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        shown = {}
        for line in proc.stdout:
            key, _, value = line.strip().partition(": ")
            shown[key] = value
            if line.startswith("judge server on "):
                break
        base = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert base and base.group(1) != "0", line
        login = {"email": shown["admin_email"], "password": shown["admin_password"]}
        r = httpx.post(f"{base.group(0)}/api/v1/login", json=login, timeout=30)
        assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        proc.wait(30)
    token = proofgames("judge", "token", "--db", "j.db", cwd=tmp_path)
    assert token.returncode == 0 and len(token.stdout.strip()) > 30, token
