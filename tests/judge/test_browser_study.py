"""Issue 36: a whole study in real Chromium, and answers that cannot be saved made visible.

The admin designs the study in its pages (consent, instructions, a qualification, gold
checks, feedback, pay) and adds its known-answer questions; a verifier posts the work.
The rater accepts the invitation, consents, trains (with feedback), qualifies, answers
the work with gold interleaved, meets an ended session and a stopped server on the way
(each shown as an alert, the step kept to submit again), and the admin reads the scores
and exports. Screenshots go to ``reports/judge/`` (``10-`` to ``19-``).

Run: ``pytest -m browser tests/judge/test_browser_study.py`` (needs Debian's ``chromium``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect
from sqlalchemy import select, update

from proofgames.judge.models import Answer, Question, User, WebSession, utcnow

from .judge_support import PASSWORD, WARNING, Judge, Server
from .test_browser import PHONE, browser, log_in_admin, shot  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings(WARNING)]

TASK = {"task": "Pens cost 3 dollars each. Ann buys 4 and pays with 20 dollars.", "premises": []}
KNOWN = [
    ("training", "t1", "4 pens cost 4 * 3 = 12 dollars.", True, "4 times 3 is 12."),
    ("training", "t2", "Her change is 20 - 12 = 9 dollars.", False, "20 - 12 is 8, not 9."),
    ("qualification", "q1", "4 pens cost 4 * 3 = 13 dollars.", False, ""),
    ("qualification", "q2", "Her change is 20 - 12 = 8 dollars.", True, ""),
    ("gold", "g1", "So 6 * 7 = 42.", True, "6 times 7 is 42."),
    ("gold", "g2", "So 6 * 7 = 48.", False, "6 times 7 is 42."),
    ("attention", "a1", "So 1 + 1 = 2.", True, "1 + 1 is 2."),
]
WORK = ["So 2 + 2 = 4.", "So 9 - 3 = 5.", "So 10 / 2 = 5.", "So 3 * 3 = 9."]


TRUTH = {
    **{step: expected for _, _, step, expected, _ in KNOWN},
    **dict(zip(WORK, [True, False, True, True], strict=True)),
}
"""Whether each step of this test follows (what a careful rater answers)."""


def design_study(admin, url: str, study_id: int) -> None:
    """As the admin: design the study and add its known-answer questions, in the pages."""
    log_in_admin(admin, url)
    admin.goto(f"{url}/admin/studies/{study_id}/design")
    admin.fill("textarea[name=consent]", "Your answers are stored under a number. Stop any time.")
    admin.fill("textarea[name=instructions]", "Judge one step at a time.")
    admin.fill("input[name=gold_rate]", "0.5")
    admin.fill("input[name=pass_mark]", "0.5")
    admin.fill("input[name=pay_cents_per_hour]", "1800")
    admin.click("#design-form button[type=submit]")
    expect(admin.locator("text=Design saved.")).to_be_visible()
    lines = [
        json.dumps({"kind": k, "expected": e, "explanation": x, "debate_id": d,
                    "question": {**TASK, "step": s}})
        for k, d, s, e, x in KNOWN
    ]  # fmt: skip
    admin.fill("textarea[name=lines]", "\n".join(lines))
    admin.click("#known-form button[type=submit]")
    expect(admin.locator("#kinds")).to_contain_text("training 2 · qualification 2 · gold 2")
    shot(admin, "10-admin-design")


def submit(rater, step: str, right: bool = True) -> None:
    """Choose the answer (right or wrong) and press Submit."""
    rater.click("label.yes" if TRUTH[step] == right else "label.no")
    rater.click("#answer-form button[type=submit]")


def swapped(rater, action: str) -> None:
    """Wait until the answered step has left the page (the next one, or none, is shown)."""
    rater.wait_for_function(
        "a => !document.querySelector(`#answer-form[action='${a}']`)", arg=action
    )


def answer(rater, step: str, right: bool = True) -> None:
    """Answer the step on the page and wait for the next one."""
    action = rater.locator("#answer-form").get_attribute("action")
    submit(rater, step, right)
    swapped(rater, action)


def step_text(rater) -> str:
    return rater.locator(".step").inner_text()


def train_and_qualify(rater) -> None:
    expect(rater.locator("#consent")).to_contain_text("A worked example")
    shot(rater, "11-rater-consent-phone")
    rater.click("#consent button[type=submit]")
    expect(rater.locator("#progress")).to_contain_text("Training: step 1 of 2")
    shot(rater, "12-rater-training-phone")
    answer(rater, step_text(rater), right=False)
    expect(rater.locator("#feedback")).to_contain_text("Not right.")
    expect(rater.locator("#feedback")).to_contain_text("4 times 3 is 12.")
    shot(rater, "13-rater-feedback-phone")
    answer(rater, step_text(rater))
    expect(rater.locator("#feedback")).to_contain_text("Right.")
    for i in (1, 2):
        expect(rater.locator("#progress")).to_contain_text(f"Qualification: step {i} of 2")
        answer(rater, step_text(rater))
        expect(rater.locator("#feedback")).to_have_count(0)  # no feedback in a qualification


def end_session(judge: Judge) -> None:
    """The rater's session ends (as when it expires or is revoked elsewhere)."""
    rater = select(User.id).where(User.email == "rater@example.org").scalar_subquery()
    with judge.sessions() as db:
        db.execute(
            update(WebSession).where(WebSession.user_id == rater).values(revoked_at=utcnow())
        )
        db.commit()


def work_through_failures(rater, live: Server, judge: Judge) -> list[str]:
    """Answer the work; the session ends before one answer, the server stops before one."""
    seen: list[str] = []
    while rater.locator("#answer-form").count():
        step = step_text(rater)
        action = rater.locator("#answer-form").get_attribute("action")
        if len(seen) == 1:
            shot(rater, "14-rater-work-phone")
            end_session(judge)
            submit(rater, step)
            expect(rater.locator("#connection")).to_contain_text("Your session has ended")
            expect(rater.locator("#item .message[role=status]")).to_have_count(0)
            shot(rater, "15-rater-session-ended-phone")
            rater.click("#connection a")
            rater.fill("input[name=email]", "rater@example.org")
            rater.fill("input[name=password]", PASSWORD)
            rater.click("button[type=submit]")
            rater.wait_for_url(f"{live.url}/queue")
            assert step_text(rater) == step  # the same step, still to answer
        if len(seen) == 2:
            live.kill9()
            submit(rater, step)
            expect(rater.locator("#connection")).to_contain_text("could not be reached")
            shot(rater, "16-rater-server-down-phone")
            live.start()
            rater.click("#answer-form button[type=submit]")  # submit again: saved now
        else:
            submit(rater, step)
        swapped(rater, action)
        expect(rater.locator("#item .message[role=status]")).to_have_text("Answer saved.")
        seen.append(step)
    return seen


def test_a_whole_study_in_chromium(tmp_path: Path, browser) -> None:  # noqa: F811
    url_db = f"sqlite:///{tmp_path / 'judge.db'}"
    judge = Judge(url_db, k=1)
    for i, step in enumerate(WORK):
        assert judge.post_question(f"w{i}", step).status_code == 201
    live = Server(url_db, log=tmp_path / "server.log")
    live.start()
    try:
        admin_ctx = browser.new_context(
            accept_downloads=True, viewport={"width": 1100, "height": 800}
        )
        admin = admin_ctx.new_page()
        design_study(admin, live.url, judge.study.id)
        link = judge.client().post(
            f"/api/v1/studies/{judge.study.id}/invitations",
            json={"email": "rater@example.org"}, headers=judge.auth,
        ).json()["url"].replace("http://testserver", live.url)  # fmt: skip
        rater = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        rater.goto(link)
        rater.fill("input[name=password]", PASSWORD)
        rater.click("button[type=submit]")
        rater.wait_for_url(f"{live.url}/queue")
        train_and_qualify(rater)
        seen = work_through_failures(rater, live, judge)
        expect(rater.locator("#nothing")).to_be_visible()
        shot(rater, "17-rater-done-phone")
        admin.goto(f"{live.url}/admin/studies/{judge.study.id}/scores")
        row = admin.locator("#scores tbody tr")
        expect(row).to_have_count(1)
        shot(admin, "18-admin-scores")
        with admin.expect_download() as info:
            admin.click("text=CSV with emails, for payment")
        info.value.save_as(tmp_path / "pay.csv")
    finally:
        live.stop()
    assert [s for s in seen if s in WORK] == WORK
    checks = [s for s in seen if s not in WORK]
    assert set(checks) <= {s for k, _, s, _, _ in KNOWN if k in ("gold", "attention")}
    with judge.sessions() as db:
        kinds = [q.kind for _, q in db.execute(select(Answer, Question).join(Question))]
        answers = db.scalars(select(Answer).order_by(Answer.id)).all()
    assert kinds.count("training") == 2 and kinds.count("qualification") == 2
    assert kinds.count("work") == 4 and len(answers) == 8 + len(checks)  # each stored once
    pay = (tmp_path / "pay.csv").read_text().splitlines()
    assert len(pay) == 2 and "rater@example.org" in pay[1]
