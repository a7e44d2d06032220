"""The judge server in real Chromium (Playwright): invite, log in, answer, export.

One real debate runs end to end: a transcript debate whose liar lies at one step and
whose judge is :class:`HumanJudge` on this server; the rater answers its one question
in the browser, with the keyboard. Screenshots go to ``reports/judge/``.

Run: ``pytest -m browser tests/judge/test_browser.py`` (needs Debian's ``chromium``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect, sync_playwright
from sqlalchemy import select

from proofgames.judge.models import Answer
from proofgames.judges.human import HumanJudge
from proofgames.language.demo import demo_debate

from .judge_support import PASSWORD, ROOT, WARNING, Judge, Server

pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings(WARNING)]

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = ROOT / "reports" / "judge"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


class DebateThread(threading.Thread):
    """The verifier: runs the transcript debate with the server as its judge."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.judge = HumanJudge(url, token, "study", "browser-debate", poll_s=1.0, timeout_s=180)
        self.outcome = None

    def run(self) -> None:
        self.outcome = asyncio.run(demo_debate(self.judge))


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def log_in_admin(admin, url: str) -> None:
    """Log the admin in through the form; they land on their studies."""
    admin.goto(f"{url}/login")
    admin.fill("input[name=email]", "admin@example.org")
    admin.fill("input[name=password]", PASSWORD)
    admin.click("button[type=submit]")
    admin.wait_for_url(f"{url}/admin")


def invite_rater(admin, url: str, study_id: int) -> str:
    """As the admin: log in, invite a rater from the study page; returns the link."""
    log_in_admin(admin, url)
    admin.click(f"a[href='/admin/studies/{study_id}']")
    admin.wait_for_url(f"{url}/admin/studies/{study_id}")
    admin.fill("input[name=email]", "rater@example.org")
    admin.click("form.narrow button[type=submit]")
    link = admin.locator("#invite-url").inner_text().strip()
    shot(admin, "01-admin-invite")
    return link


def answer_queue(rater, url: str) -> list[str]:
    """As the rater: answer every step in the queue with the keyboard; returns the steps."""
    seen = []
    for _ in range(20):
        rater.goto(f"{url}/queue")
        if rater.locator("#answer-form").count() == 0:
            break
        step = rater.locator(".step").inner_text()
        seen.append(step)
        if len(seen) == 1:  # by mouse, with a double click on submit
            expect(rater.locator(".timer")).not_to_have_text("0:00", timeout=10_000)
            shot(rater, "03-rater-queue-phone")
            rater.set_viewport_size({"width": 1100, "height": 700})  # inputs beside the step
            shot(rater, "03b-rater-queue-desktop")
            rater.set_viewport_size(PHONE)
            rater.click("label.yes")
            rater.click("input[name=confidence][value='4']")
            rater.dblclick("#answer-form button[type=submit]")
        else:  # by keyboard: N, 4, Enter
            rater.keyboard.press("n" if "36" in step else "y")
            rater.keyboard.press("4")
            assert rater.locator("input[name=confidence][value='4']").is_checked()
            rater.keyboard.press("Enter")
        rater.wait_for_selector("text=Answer saved.")
        if len(seen) == 1:
            shot(rater, "04-rater-after-answer-phone")
    return seen


def wait_for_debate_question(judge: Judge) -> None:
    for _ in range(600):
        r = judge.client().get(
            f"/api/v1/studies/{judge.study.id}/export", headers=judge.auth
        )  # any call works; the question shows in the queue once posted
        if r.status_code == 200 and judge_has_question(judge):
            return
        threading.Event().wait(0.05)
    raise AssertionError("the debate never posted its question")


def judge_has_question(judge: Judge) -> bool:
    from proofgames.judge.models import Question

    with judge.sessions() as db:
        return (
            db.scalar(select(Question.id).where(Question.debate_id == "browser-debate")) is not None
        )


def test_invite_login_answer_and_export_in_chromium(tmp_path, browser):
    url_db = f"sqlite:///{tmp_path / 'judge.db'}"
    judge = Judge(url_db, k=1)
    judge.post_question("warm-up", "So 3 + 4 = 7.", k=1)
    live = Server(url_db, log=tmp_path / "server.log")
    live.start()
    verifier = DebateThread(live.url, judge.token)
    try:
        verifier.start()
        wait_for_debate_question(judge)
        admin_ctx = browser.new_context(
            accept_downloads=True, viewport={"width": 1100, "height": 800}
        )
        admin = admin_ctx.new_page()
        link = invite_rater(admin, live.url, judge.study.id)
        rater_ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        rater = rater_ctx.new_page()
        rater.goto(link)
        shot(rater, "02-rater-invitation-phone")
        rater.fill("input[name=password]", PASSWORD)
        rater.click("button[type=submit]")
        rater.wait_for_url(f"{live.url}/queue")
        steps = answer_queue(rater, live.url)
        assert steps == ["So 3 + 4 = 7.", "So 7 * 5 = 36."]
        assert rater.locator("text=Nothing to answer right now").count() == 1
        verifier.join(timeout=120)
        outcome = verifier.outcome
        assert outcome is not None and outcome.winner == "B" and outcome.costs.human_judgements == 1
        check_admin_page_and_exports(admin, live.url, judge, tmp_path)
        rater.goto(f"{live.url}/admin")  # a rater is no admin
        assert "Error 403" in rater.content()
    finally:
        live.stop()
    with judge.sessions() as db:
        answers = db.scalars(select(Answer).order_by(Answer.id)).all()
    assert [a.yes for a in answers] == [True, False]
    assert all(a.confidence == 4 and a.elapsed_ms is not None for a in answers)


def check_admin_page_and_exports(admin, url: str, judge: Judge, tmp_path: Path) -> None:
    admin.goto(f"{url}/admin/studies/{judge.study.id}")
    assert admin.locator("#n-answers").inner_text() == "2"
    assert admin.locator("#n-closed").inner_text() == "2"
    shot(admin, "05-admin-study-progress")
    downloads = {}
    for fmt in ("JSONL", "CSV", "Parquet"):
        with admin.expect_download() as info:
            admin.click(f"text={fmt}")
        path = tmp_path / f"export.{fmt.lower()}"
        info.value.save_as(path)
        downloads[fmt] = path
    rows = [json.loads(line) for line in downloads["JSONL"].read_text().splitlines()]
    assert [(r["step"], r["yes"]) for r in rows] == [("So 3 + 4 = 7.", True),
                                                     ("So 7 * 5 = 36.", False)]  # fmt: skip
    assert all("rater_email" not in r and r["server_ms"] >= 0 for r in rows)  # pseudonymous
    assert downloads["CSV"].read_text().count("rater@example.org") == 0
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(downloads["Parquet"]).num_rows == 2
    admin.set_viewport_size(PHONE)
    shot(admin, "06-admin-study-phone")
