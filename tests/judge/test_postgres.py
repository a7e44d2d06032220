"""The judge server on PostgreSQL: a throwaway cluster (initdb, pg_ctl) as a non-root user.

Run: ``pytest -m postgres tests/judge/test_postgres.py``. It needs Debian's
``postgresql`` package (``initdb`` and ``pg_ctl`` on PATH or under
``/usr/lib/postgresql/*/bin``) and, when run as root, the ``postgres`` system user the
package creates (the cluster runs as that user: PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("psycopg")

from sqlalchemy import create_engine, text

from proofgames.judge.db import current_revision, head_revision, make_engine
from proofgames.judges import StepQuestion
from proofgames.judges.human import HumanJudge

from .judge_support import WARNING, Judge, cli, free_port, refused
from .test_api import _answer_when_posted
from .test_fault import (
    run_concurrent_assignment_test,
    run_concurrent_close_test,
    run_concurrent_retry_test,
    run_fault_test,
)

pytestmark = [pytest.mark.postgres, pytest.mark.filterwarnings(WARNING)]


def pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def as_owner(cmd: list[str], owner: str | None) -> list[str]:
    return cmd if owner is None else ["runuser", "-u", owner, "--", *cmd]


@pytest.fixture(scope="module")
def cluster():
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres").pw_name
        except KeyError:
            pytest.skip("running as root without a 'postgres' user to run the cluster as")
    home = Path(tempfile.mkdtemp(prefix="proofgames-pg-"))
    data, port = home / "data", free_port()
    if owner is not None:
        entry = pwd.getpwnam(owner)
        os.chown(home, entry.pw_uid, entry.pw_gid)
    run = lambda cmd: subprocess.run(as_owner(cmd, owner), check=True, capture_output=True)  # noqa: E731
    run([initdb, "-D", str(data), "-U", "judge", "-A", "trust", "--no-sync"])
    options = (
        f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    )
    run([pg_ctl, "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"])
    try:
        yield f"postgresql+psycopg://judge@127.0.0.1:{port}"
    finally:
        run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def pg_url(cluster, request):
    """A fresh, empty database on the cluster for each test."""
    name = "t_" + request.node.name.lower().replace("[", "_").replace("]", "")[:50]
    admin = create_engine(f"{cluster}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        c.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"{cluster}/{name}"


def test_migrations_run_on_postgres(pg_url):
    judge = Judge(pg_url)
    assert current_revision(judge.app.state.engine) == head_revision()
    assert make_engine(pg_url.replace("+psycopg", "")).dialect.driver == "psycopg"


def test_the_api_flow_on_postgres(pg_url):
    judge = Judge(pg_url, k=1)
    rater = judge.rater("alice@example.org")
    human = HumanJudge(
        "http://testserver",
        judge.token,
        "study",
        "pg-debate",
        poll_s=0.2,
        timeout_s=30,
        transport=httpx.ASGITransport(judge.asgi),
    )

    async def main():
        task = asyncio.create_task(human.judge(StepQuestion("2 + 2?", (), "2 + 2 = 5")))
        await _answer_when_posted(judge, rater, False)
        again = await human.judge(StepQuestion("2 + 2?", (), "2 + 2 = 5"))  # idempotent
        return await task, again

    first, again = asyncio.run(main())
    assert first.p_yes == again.p_yes == 0.0 and first.human_judgements == 1


def test_concurrent_answers_close_at_k_on_postgres(pg_url):
    run_concurrent_close_test(Judge(pg_url, k=3))


def test_concurrent_raters_never_hold_a_question_past_k_on_postgres(pg_url):
    run_concurrent_assignment_test(Judge(pg_url, k=1), raters=32, rounds=25)


def test_concurrent_retries_record_one_answer_on_postgres(pg_url):
    run_concurrent_retry_test(Judge(pg_url, k=1))


def test_kill_9_under_load_on_postgres(pg_url, tmp_path):
    run_fault_test(pg_url, tmp_path)


def test_kill_9_during_qualification_and_gold_answers_on_postgres(pg_url, tmp_path):
    run_fault_test(pg_url, tmp_path, checks=True)


@pytest.mark.parametrize(
    "command", [["judge", "serve", "--port", "0"], ["judge", "token"]], ids=["serve", "token"]
)
def test_a_missing_postgres_database_is_one_line(cluster, command):
    url = cluster.replace("judge@", "judge:s3cret@") + "/nosuchdb"
    line = refused(cli(*command, "--db", url), "judge:***@127.0.0.1", '"nosuchdb" does not exist')
    assert "s3cret" not in line


@pytest.mark.parametrize(
    "command", [["judge", "serve", "--port", "0"], ["judge", "token"]], ids=["serve", "token"]
)
def test_a_refused_postgres_login_is_one_line(cluster, command):
    url = cluster.replace("judge@", "nobody:s3cret@") + "/postgres"
    line = refused(cli(*command, "--db", url), "nobody:***@127.0.0.1", 'role "nobody"')
    assert "s3cret" not in line


def test_token_refuses_a_postgres_database_that_is_not_a_judge_database(pg_url):
    refused(cli("judge", "token", "--db", pg_url), pg_url, "not a judge database")
    with create_engine(pg_url).connect() as connection:  # nothing was migrated into it
        tables = connection.execute(
            text("select count(*) from pg_tables where schemaname = 'public'")
        )
        assert tables.scalar() == 0


def test_serve_prints_its_postgres_url_without_the_password(pg_url):
    url = pg_url.replace("judge@", "judge:s3cret@")  # trust authentication ignores it
    res = cli("judge", "serve", "--port", "0", "--db", url)
    assert res.exit_code == 1 and "went on to serve" in str(res.exception)  # stubbed uvicorn
    assert "admin_password" in res.stdout
    assert current_revision(make_engine(pg_url)) == head_revision()
    assert "judge:***@127.0.0.1" in res.stdout and "s3cret" not in res.stdout


def test_hostile_input_is_refused_with_a_reason_on_postgres(pg_url):
    """Issue 36, defect 9: PostgreSQL refuses NUL bytes and ids past INTEGER: never a 500."""
    from .test_hostile_input import hostile_requests

    judge = Judge(pg_url, k=1)
    for what, r in hostile_requests(judge):
        assert r.status_code in (401, 404, 422), (what, r.status_code, r.text)
    q = {"study": "study", "debate_id": "d", "question": {
        "task": "t", "premises": [], "step": "So 7 * 5 = \u202e53\u202c."}}  # fmt: skip
    r = judge.client().post("/api/v1/questions", json=q, headers=judge.auth)
    assert r.status_code == 422 and "U+202E" in r.json()["error"]


def test_concurrent_guesses_cannot_outrun_the_login_limit_on_postgres(pg_url):
    """Issue 36, defect 2, on PostgreSQL: 40 guesses at once, at most 5 checked."""
    from .test_login_limits import check_race

    check_race(Judge(pg_url, k=1))
