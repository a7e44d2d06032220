"""``judge serve --workers N``: several processes serve one SQLite database correctly.

The write gate (:func:`proofgames.judge.db.write_gate`) makes "choose a question, then
assign it" one step. Across worker processes it is a lock file beside the database;
without it two processes could hand the last free slot of a question to two raters.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import func, select

from proofgames.errors import ConfigurationError
from proofgames.judge import accounts, service
from proofgames.judge.app import SETTINGS_ENV, from_environment, settings_from_json
from proofgames.judge.db import make_engine, migrate, session_factory, write_gate
from proofgames.judge.models import Answer, Assignment, Question

from .judge_support import PASSWORD, ROOT, WARNING, Judge, Server, cli, refused

pytestmark = pytest.mark.filterwarnings(WARNING)

INCREMENTS = 150

COUNTER = """
import sys, time
from pathlib import Path
from proofgames.judge.db import make_engine, session_factory, write_gate
db = session_factory(make_engine(sys.argv[1]))()
counter = Path(sys.argv[2])
for _ in range({n}):
    with write_gate(db):  # read, pause, write: a lost update unless the gate is shared
        value = int(counter.read_text())
        time.sleep(0.0002)
        counter.write_text(str(value + 1))
"""


@pytest.mark.slow
def test_the_write_gate_holds_off_the_other_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'judge.db'}"
    migrate(make_engine(url))
    counter = tmp_path / "counter"
    counter.write_text("0")
    script = textwrap.dedent(COUNTER.format(n=INCREMENTS))
    env = {"PYTHONPATH": str(ROOT / "src")}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, url, str(counter)], env=env)
        for _ in range(3)
    ]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    assert int(counter.read_text()) == 3 * INCREMENTS
    assert (tmp_path / "judge.db-gate").exists()


def test_an_in_memory_database_has_a_gate_of_its_own_process():
    db = session_factory(make_engine("sqlite://"))()
    with write_gate(db):  # no lock file: nothing beside an in-memory database
        assert write_gate(db) is write_gate(db)


def _raters(judge: Judge, n: int) -> list[str]:
    with judge.sessions() as db:
        emails = [f"w{i}@example.org" for i in range(n)]
        for email in emails:
            service.join(db, judge.study, accounts.create_user(db, email, "rater", PASSWORD))
    return emails


def _answer_all(url: str, email: str, acknowledged: list[int], errors: list[str]) -> None:
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            r = client.post("/api/v1/login", json={"email": email, "password": PASSWORD})
            headers = {"x-csrf-token": r.json()["csrf_token"]}
            while True:
                nxt = client.get("/api/v1/assignments/next").json()
                if nxt["assignment"] is None:
                    return
                body = {"yes": True, "confidence": 3, "shown_sha256": nxt["shown_sha256"]}
                a = nxt["assignment"]
                r = client.post(f"/api/v1/assignments/{a}/answer", json=body, headers=headers)
                if r.status_code == 200 and r.json()["status"] == "recorded":
                    acknowledged.append(a)
                else:
                    errors.append(f"{r.status_code} {r.text}")
    except Exception as exc:  # reported by the test
        errors.append(repr(exc))


def _children(pid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == str(pid):
            count += 1
    return count


@pytest.mark.slow
def test_two_workers_hand_each_question_to_one_rater_and_keep_every_answer(tmp_path):
    url = f"sqlite:///{tmp_path / 'judge.db'}"
    judge = Judge(url, k=1)
    emails = _raters(judge, 12)
    questions = 120
    for i in range(questions):
        assert judge.post_question(f"d{i}", f"So {i} + 1 = {i + 1}").status_code == 201
    judge.app.state.engine.dispose()
    live = Server(url, workers=2)
    live.start()
    try:
        assert live.proc is not None and _children(live.proc.pid) >= 2
        acknowledged: list[int] = []
        errors: list[str] = []
        threads = [
            threading.Thread(target=_answer_all, args=(live.url, e, acknowledged, errors))
            for e in emails
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    finally:
        live.stop()
    assert errors == []  # no 409: no two raters were handed one question at k = 1
    assert len(acknowledged) == len(set(acknowledged)) == questions
    db = session_factory(make_engine(url))()
    assert db.scalar(select(func.count()).select_from(Answer)) == questions
    assert db.scalar(select(func.count()).select_from(Assignment)) == questions
    assert db.scalar(select(func.count()).where(Question.closed.is_(False))) == 0


def test_serve_refuses_a_worker_count_out_of_range(tmp_path):
    db = str(tmp_path / "judge.db")
    for bad in ("0", "65", "-2"):
        refused(cli("judge", "serve", "--db", db, "--workers", bad), "--workers")


def test_a_worker_without_settings_is_refused_with_the_reason(monkeypatch):
    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    with pytest.raises(ConfigurationError, match=SETTINGS_ENV):
        from_environment()
    for text in ("{", "[]", '{"database_url": "sqlite://", "colour": 1}'):
        with pytest.raises(ConfigurationError, match="judge settings"):
            settings_from_json(text)
