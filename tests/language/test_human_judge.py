"""Debates over language arguments judged by people through the judge server.

The two layers meet at :class:`~proofgames.judges.StepJudge`: a cross-examination or a
bisection of a generated chain, with :class:`~proofgames.judges.human.HumanJudge` as its
judge, posts the one disputed step to a real app (SQLite database, raters logged in
through their invitations), and raters' programs answer it through the rater API. Each
rater checks the arithmetic of the step they are shown, and nothing else.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

import httpx

from proofgames.judges import CalculatorJudge
from proofgames.judges.human import HumanJudge
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import bisection, cross_examination
from proofgames.language.provers import ContrarianB, ReferenceB, ScriptedA

from ..judge.judge_support import Judge, api_csrf

K = 2  # answers per question


async def careful_rater(rater: Any, stop: asyncio.Event, shown: list[dict[str, Any]]) -> None:
    """Answer every assignment: yes iff the step's arithmetic holds on what is shown."""
    check = CalculatorJudge()
    while not stop.is_set():
        nxt = rater.get("/api/v1/assignments/next").json()
        if nxt["assignment"] is None:
            await asyncio.sleep(0.05)
            continue
        question = nxt["question"]
        shown.append(question)
        inputs = " ".join([question["task"], *question["premises"]])
        body = {
            "yes": check.check(question["step"], inputs) is None,
            "confidence": 5,
            "shown_sha256": nxt["shown_sha256"],
        }
        url = f"/api/v1/assignments/{nxt['assignment']}/answer"
        assert rater.post(url, json=body, headers=api_csrf(rater)).status_code == 200


def judged_by_people(tmp_path, debate: Any) -> tuple[Any, list[dict[str, Any]], Judge]:
    """Run ``debate(ledger)`` with a HumanJudge on a fresh server and K careful raters."""
    judge = Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=K)
    raters = [judge.rater(f"r{i}@example.org") for i in range(K)]
    human = HumanJudge(
        "http://testserver",
        judge.token,
        "study",
        "language-debate-1",
        poll_s=0.5,
        timeout_s=120,
        transport=httpx.ASGITransport(judge.asgi),
    )
    shown: list[dict[str, Any]] = []

    async def main() -> Any:
        stop = asyncio.Event()
        workers = [asyncio.create_task(careful_rater(r, stop, shown)) for r in raters]
        try:
            return await debate(JudgeLedger(human))
        finally:
            stop.set()
            await asyncio.gather(*workers)

    return asyncio.run(main()), shown, judge


def test_people_reject_the_planted_error_of_a_cross_examination(tmp_path):
    item = generate_chain(30, seed=4, error_at=12)
    out, shown, _ = judged_by_people(
        tmp_path,
        lambda ledger: cross_examination(
            item.task_text, ScriptedA(item.dishonest), ReferenceB(item.reference), ledger
        ),
    )
    assert out.verdict == 0 and out.details["disputed_step"] == 12
    assert (out.costs.judge_calls, out.costs.human_judgements) == (K, K)
    assert len(shown) == K  # each rater saw the one disputed step, and only it
    assert all(q["step"] == shown[0]["step"] for q in shown)
    assert item.dishonest.steps[12].text in shown[0]["step"]
    assert len(shown[0]["step"]) < len(" ".join(s.text for s in item.dishonest.steps)) / 10


def test_people_uphold_an_honest_argument_against_a_contrarian(tmp_path):
    item = generate_chain(30, seed=5, error_at=9)
    out, shown, _ = judged_by_people(
        tmp_path,
        lambda ledger: cross_examination(
            item.task_text, ScriptedA(item.reference), ContrarianB(seed=1), ledger
        ),
    )
    assert out.verdict == 1
    assert out.costs.human_judgements == K and len(shown) == K


def test_a_bisection_sends_people_one_step_of_a_long_argument(tmp_path):
    item = generate_chain(400, seed=6, error_at=287)
    out, shown, judge = judged_by_people(
        tmp_path,
        lambda ledger: bisection(
            item.task_text, ScriptedA(item.dishonest), ReferenceB(item.reference), ledger
        ),
    )
    assert out.verdict == 0 and out.details["disputed_step"] == 287
    assert out.costs.human_judgements == K and len(shown) == K
    export = judge.client().get(f"/api/v1/studies/{judge.study.id}/export", headers=judge.auth)
    assert export.status_code == 200, export.text
    rows = [json.loads(line) for line in export.text.splitlines()]
    assert len(rows) == K  # every answer stored, none doubled
    assert {r["yes"] for r in rows} == {False}
