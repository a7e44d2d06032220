"""Shared helpers of the judge-server tests: apps, logins, live server processes."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from typer.testing import CliRunner, Result

with warnings.catch_warnings():  # starlette 1.x prefers httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from proofgames.cli import app as cli_app
from proofgames.judge import accounts, service
from proofgames.judge.app import create_app
from proofgames.judge.security import Keys
from proofgames.judge.web import Guard, Settings

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a long password"
CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
WARNING = "ignore:Using `httpx` with `starlette.testclient`"


class Judge:
    """An app on a fresh database, with an admin, a study and an API token."""

    def __init__(self, url: str, k: int = 1, **settings: Any) -> None:
        self.settings = Settings(database_url=url, **settings)
        self.app = create_app(self.settings)
        self.asgi = Guard(self.app, self.settings.max_body_bytes)
        self.sessions = self.app.state.runtime.sessions
        self.keys: Keys = self.app.state.runtime.keys
        with self.sessions() as db:
            self.admin = accounts.create_user(db, "admin@example.org", "admin", PASSWORD)
            self.study = service.create_study(db, "study", k)
            self.token = accounts.create_api_token(db, self.admin, "tests")
        self.auth = {"authorization": f"Bearer {self.token}"}

    def client(self) -> TestClient:
        """A test client (its own cookie jar: one browser)."""
        return TestClient(self.asgi, base_url="http://testserver")

    def rater(self, email: str) -> TestClient:
        """A new rater invited to the study and logged in through the invitation page."""
        admin = self.client()
        r = admin.post(
            f"/api/v1/studies/{self.study.id}/invitations", json={"email": email}, headers=self.auth
        )
        assert r.status_code == 201, r.text
        client = self.client()
        accept(client, r.json()["token"])
        return client

    def post_question(self, debate: str, step: str, **extra: Any) -> httpx.Response:
        body = {"study": "study", "debate_id": debate, "question": question(step), **extra}
        return self.client().post("/api/v1/questions", json=body, headers=self.auth)


def question(step: str, premises: tuple[str, ...] = ("3 + 4 = 7",)) -> dict[str, Any]:
    """A step question as the API takes it."""
    return {"task": "Compute (3 + 4) * 5.", "premises": list(premises), "step": step}


def csrf(html: str) -> str:
    """The CSRF token in a rendered form."""
    found = CSRF.search(html)
    assert found, "no CSRF token in the page"
    return found.group(1)


def accept(client: TestClient, token: str) -> None:
    """Accept an invitation in ``client`` (which ends up logged in)."""
    page = client.get(f"/invite/{token}")
    assert page.status_code == 200, page.text
    r = client.post(
        f"/invite/{token}",
        data={"password": PASSWORD, "csrf_token": csrf(page.text)},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/queue", r.text


def login(client: TestClient, email: str, password: str = PASSWORD) -> httpx.Response:
    """Log in through the form (fetching its CSRF token first)."""
    page = client.get("/login")
    data = {"email": email, "password": password, "csrf_token": csrf(page.text)}
    return client.post("/login", data=data, follow_redirects=False)


def api_csrf(client: TestClient) -> dict[str, str]:
    """The ``X-CSRF-Token`` header for a logged-in client (read from its queue page)."""
    return {"x-csrf-token": csrf(client.get("/queue").text)}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``proofgames judge serve`` in a child process on a free port (killed on exit)."""

    def __init__(
        self, db: str, port: int | None = None, log: Path | None = None, workers: int = 1
    ) -> None:
        self.db, self.port, self.workers = db, port or free_port(), workers
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cmd = [sys.executable, "-m", "proofgames", "judge", "serve", "--db", self.db]
        cmd += ["--port", str(self.port), "--no-demo", "--workers", str(self.workers)]
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the server exited with {self.proc.returncode}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/login", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise AssertionError("the judge server did not start")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()


@contextlib.contextmanager
def server(db: str, log: Path | None = None) -> Iterator[Server]:
    """A running server; stopped (or killed) however the block ends."""
    live = Server(db, log=log)
    live.start()
    try:
        yield live
    finally:
        live.stop()


def _never_serve(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("the command went on to serve")


def cli(*args: str) -> Result:
    """``proofgames ARGS`` in this process; serving is stubbed out, so it never blocks."""
    with mock.patch("uvicorn.run", _never_serve), mock.patch("uvicorn.Server.run", _never_serve):
        return CliRunner().invoke(cli_app, list(args))


def refused(res: Result, *words: str) -> str:
    """Assert a command was refused with one ``error:`` line (no traceback, no stdout)."""
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert res.stdout == "", res.stdout
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """``path`` (a file or a folder) made unwritable, even to root (``chattr +i``)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    done = chattr and subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False)
    if not done or done.returncode != 0:
        pytest.skip(f"root cannot make {path} unwritable here (chattr +i)")
    try:
        yield
    finally:
        subprocess.run([str(chattr), "-i", str(path)], check=True)
