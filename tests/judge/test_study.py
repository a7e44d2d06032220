"""Issue 36: what a real study needs, through the API and the pages.

Consent and instructions first, training with feedback, a qualification with a pass
mark, gold and attention checks interleaved at a set rate, per-rater accuracy, quotas,
one step per debate, a per-rater random order, "can't tell", a rationale, probability
answers scored by the Brier rule, deactivation, study dates, and the payment export.
"""

from __future__ import annotations

import datetime as dt
import json
import weakref

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import select

from proofgames.judge.models import Answer, Membership, Question, utcnow

from .judge_support import WARNING, api_csrf, csrf

pytestmark = pytest.mark.filterwarnings(WARNING)


def design(judge, **fields):
    url = f"/api/v1/studies/{judge.study.id}/design"
    return judge.client().patch(url, json=fields, headers=judge.auth)


def known(judge, debate, kind, expected, explanation="", step=None):
    step = step or ("So 7 * 5 = 35" if expected else "So 7 * 5 = 36")
    r = judge.post_question(debate, step, kind=kind, expected=expected, explanation=explanation)
    assert r.status_code == 201, r.text
    return r


def nxt(client):
    return client.get("/api/v1/assignments/next").json()


_HEADERS: weakref.WeakKeyDictionary[object, dict[str, str]] = weakref.WeakKeyDictionary()


def answer(client, item, **fields):
    body = {"yes": True, "confidence": 4, "shown_sha256": item["shown_sha256"], **fields}
    url = f"/api/v1/assignments/{item['assignment']}/answer"
    headers = _HEADERS.get(client) or _HEADERS.setdefault(
        client, api_csrf(client)
    )  # one login, one token
    return client.post(url, json=body, headers=headers)


def consent(client, study_id):
    r = client.post(f"/api/v1/studies/{study_id}/consent", headers=api_csrf(client))
    assert r.status_code == 200, r.text


def truth(item):
    """The right answer of the demo steps used here: 35 is right, anything else wrong."""
    return item["question"]["step"].endswith("= 35")


def test_consent_comes_before_any_step_and_shows_the_instructions(judge):
    text = {"consent": "You may stop at any time.", "instructions": "Judge steps."}
    assert design(judge, **text).is_success
    judge.post_question("d1", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    first = nxt(alice)
    assert first["assignment"] is None and first["stage"]["name"] == "consent"
    assert first["consent"] == text
    page = alice.get("/queue").text
    assert "You may stop at any time." in page and "A worked example" in page
    r = alice.post(f"/queue/consent/{judge.study.id}", data={"csrf_token": csrf(page)})
    assert r.status_code == 200 and "Step 1 of 1" in r.text
    assert nxt(alice)["stage"]["name"] == "work"


def test_training_gives_feedback_cannot_be_skipped_and_comes_first(judge):
    known(judge, "t1", "training", True, "7 * 5 is 35.")
    known(judge, "t2", "training", False, "7 * 5 is 35, not 36.")
    judge.post_question("d1", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    item = nxt(alice)
    assert item["stage"] == {**item["stage"], "name": "training", "done": 0, "total": 2}
    skip = alice.post(f"/api/v1/assignments/{item['assignment']}/skip", headers=api_csrf(alice))
    assert skip.status_code == 409 and "cannot be skipped" in skip.json()["error"]
    fb = answer(alice, item, yes=False).json()["feedback"]
    assert fb == {**fb, "correct": False, "expected": True, "explanation": "7 * 5 is 35."}
    item = nxt(alice)
    assert item["stage"]["done"] == 1 and item["question"]["step"] == "So 7 * 5 = 36"
    assert answer(alice, item, yes=False).json()["feedback"]["correct"] is True
    assert nxt(alice)["stage"]["name"] == "work"


def _qualify(judge, client, right):
    for i in range(4):
        item = nxt(client)
        assert item["stage"]["name"] == "qualification", item
        ok = i < right
        assert (
            answer(client, item, yes=truth(item) if ok else not truth(item)).json()["feedback"]
            is None
        )  # no feedback in a qualification


def test_the_qualification_pass_mark_decides_who_gets_work(judge):
    assert design(judge, pass_mark=0.75).is_success
    for i in range(4):
        known(judge, f"q{i}", "qualification", i % 2 == 0)
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    _qualify(judge, alice, right=3)
    _qualify(judge, bob, right=2)
    assert nxt(alice)["stage"]["name"] == "work"
    failed = nxt(bob)
    assert failed["assignment"] is None and failed["waiting"][0]["name"] == "failed"
    assert "2 of 4" in failed["waiting"][0]["note"]
    rows = _raters(judge)
    assert [(r["qualification"], r["qualification_right"]) for r in rows] == [(4, 3), (4, 2)]


def _raters(judge, **params):
    url = f"/api/v1/studies/{judge.study.id}/raters"
    r = judge.client().get(url, params=params, headers=judge.auth)
    assert r.status_code == 200, r.text
    return [json.loads(line) for line in r.text.splitlines()]


@pytest.mark.slow
def test_checks_are_interleaved_at_the_set_rate_and_scored_per_rater(judge):
    rate, work = 0.25, 80
    assert design(judge, gold_rate=rate).is_success
    for i in range(40):
        known(judge, f"g{i}", "gold" if i % 3 else "attention", i % 2 == 0)
    for i in range(work):
        judge.post_question(f"d{i}", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    kinds, right = [], 0
    while (item := nxt(alice))["assignment"] is not None:
        reply = answer(alice, item, yes=truth(item)).json()
        kinds.append("check" if reply["feedback"] is not None else "work")
        right += bool(reply["feedback"] and reply["feedback"]["correct"])
    checks = kinds.count("check")
    assert kinds.count("work") == work
    n = len(kinds)  # checks ~ Binomial(turns, rate): 0.25 of ~107 is ~27, sd ~4.5
    assert abs(checks - rate * n) < 5 * (n * rate * (1 - rate)) ** 0.5, (checks, n)
    half = n // 2  # spread through the work (a half without one: 0.75^53 ~ 2e-7)
    assert "check" in kinds[:half] and "check" in kinds[half:] and kinds[-1] == "work"
    (row,) = _raters(judge)
    assert row["checks"] == checks and row["checks_right"] == right == checks
    assert row["check_accuracy"] == 1.0 and row["check_accuracy_low"] < 1.0
    assert "rater_email" not in row and row["work_answers"] == work


def test_a_quota_one_step_per_debate_and_the_random_order(judge):
    assert design(judge, quota=5, one_step_per_debate=True, ordering="random").is_success
    for d in range(12):
        for s in range(2):
            judge.post_question(f"d{d}", f"So 7 * 5 = 3{s}", k=2)
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    seen = {}
    for name, client in (("alice", alice), ("bob", bob)):
        order = []
        while (item := nxt(client))["assignment"] is not None:
            assert item["stage"]["total"] == 5
            order.append(item["question"])
            answer(client, item)
        seen[name] = order
        waiting = nxt(client)["waiting"][0]
        assert waiting["name"] == "done" and waiting["done"] == 5 and "quota" in waiting["note"]
    with judge.sessions() as db:
        debates: dict[int, list[tuple[str, str]]] = {}
        for a, q in db.execute(select(Answer, Question).join(Question).order_by(Answer.id)):
            debates.setdefault(a.rater_id, []).append((q.debate_id, q.question_id))
    assert [len({d for d, _ in v}) for v in debates.values()] == [5, 5]  # five debates each
    # each rater has their own order: compared by question, not by the text shown (two
    # texts only, so two orders of texts agree 1 time in 32)
    first, second = debates.values()
    assert first != second


def test_one_step_per_debate_passes_over_a_seen_debates_next_step(judge):
    assert design(judge, one_step_per_debate=True).is_success
    for d in range(2):
        for s in range(2):
            judge.post_question(f"d{d}", f"So 7 * 5 = 3{s}")
    alice = judge.rater("alice@example.org")
    seen = []
    while (item := nxt(alice))["assignment"] is not None:
        seen.append(item["question"]["step"])
        answer(alice, item)
    assert seen == ["So 7 * 5 = 30", "So 7 * 5 = 30"]  # the first step of d0, then of d1


def test_the_oldest_first_order_hands_out_steps_in_posting_order(judge):
    for i in range(5):
        judge.post_question(f"d{i}", f"So 7 * 5 = 3{i}")
    alice = judge.rater("alice@example.org")
    steps = []
    while (item := nxt(alice))["assignment"] is not None:
        steps.append(item["question"]["step"])
        answer(alice, item)
    assert steps == [f"So 7 * 5 = 3{i}" for i in range(5)]


def test_cant_tell_takes_no_slot_and_a_rationale_is_kept(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    item = nxt(alice)
    assert answer(alice, item, yes=None, confidence=None, rationale="Too hard\nfor me").is_success
    theirs = nxt(bob)
    assert theirs["assignment"] is not None  # k = 1, and the question is still open
    bad = answer(bob, theirs, rationale="hidden \u200b text")
    assert bad.status_code == 422 and "rationale" in bad.json()["error"]
    assert answer(bob, theirs).json()["status"] == "recorded"
    result = (
        judge.client()
        .get(
            "/api/v1/questions",
            params={
                "study": "study",
                "debate_id": "d1",
                "question_id": item["question"]["question_id"],
            },
            headers=judge.auth,
        )
        .json()
    )
    assert result["n_answers"] == 1 and result["cant_tell"] == 1 and result["closed"]
    with judge.sessions() as db:
        stored = db.scalars(select(Answer).order_by(Answer.id)).all()
        assert stored[0].yes is None and stored[0].rationale == "Too hard\nfor me"


def test_a_probability_study_scores_checks_by_the_brier_rule(judge):
    assert design(judge, probability=True).is_success
    known(judge, "g1", "training", True)
    known(judge, "g2", "training", False)
    alice = judge.rater("alice@example.org")
    item = nxt(alice)
    assert answer(alice, item).status_code == 422  # a yes without a probability
    contradiction = answer(alice, item, yes=False, probability=0.9)
    assert contradiction.status_code == 422 and "contradicts" in contradiction.json()["error"]
    fb = answer(alice, item, yes=None, confidence=None, probability=0.8).json()["feedback"]
    assert fb["correct"] is True and fb["brier"] == pytest.approx(0.04)
    item = nxt(alice)
    fb = answer(alice, item, yes=None, confidence=None, probability=0.5).json()["feedback"]
    assert fb["correct"] is None and fb["brier"] == pytest.approx(0.25)
    (row,) = _raters(judge)
    assert row["brier"] == pytest.approx((0.04 + 0.25) / 2)
    with judge.sessions() as db:
        yes = [a.yes for a in db.scalars(select(Answer).order_by(Answer.id))]
    assert yes == [True, None]


def test_a_deactivated_rater_gets_nothing_and_cannot_answer_an_open_step(judge):
    judge.post_question("d1", "So 7 * 5 = 35")
    judge.post_question("d2", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    item = nxt(alice)
    with judge.sessions() as db:
        member = db.scalar(select(Membership))
        member.deactivated_at = utcnow()
        db.commit()
    refused = answer(alice, item)
    assert refused.status_code == 409 and "no longer take part" in refused.json()["error"]
    assert nxt(alice)["waiting"][0]["name"] == "deactivated"


def test_a_study_takes_answers_only_between_its_dates(judge):
    soon = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()
    assert design(judge, starts_at=soon).is_success
    judge.post_question("d1", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    assert "opens at" in nxt(alice)["waiting"][0]["note"]
    assert design(judge, starts_at=None).is_success
    item = nxt(alice)
    ended = (utcnow() - dt.timedelta(seconds=1)).isoformat()
    assert design(judge, ends_at=ended).status_code == 200
    refused = answer(alice, item)
    assert refused.status_code == 409 and "ended at" in refused.json()["error"]


@pytest.mark.parametrize(
    ("fields", "word"),
    [
        ({"gold_rate": 0.9}, "gold_rate"),
        ({"pass_mark": -0.1}, "pass_mark"),
        ({"quota": 0}, "quota"),
        ({"ordering": "newest"}, "ordering"),
        ({"consent": "a\u202eb"}, "consent"),
        ({"colour": "red"}, "colour"),
        ({"probability": "yes"}, "probability"),
        ({"starts_at": "2027-01-02", "ends_at": "2027-01-01"}, "ends_at"),
    ],
)
def test_a_bad_design_is_refused_by_name_and_changes_nothing(judge, fields, word):
    r = design(judge, **fields)
    assert r.status_code == 422 and word in r.json()["error"], r.text
    assert design(judge).json()["gold_rate"] == 0.0 and design(judge).json()["ordering"] == "oldest"


@pytest.mark.parametrize(
    ("kind", "expected", "word"),
    [("gold", None, "expected answer"), ("work", True, "no expected"), ("bonus", True, "kind")],
)
def test_a_question_kind_and_its_expected_answer_are_checked_together(judge, kind, expected, word):
    r = judge.post_question("g1", "So 7 * 5 = 35", kind=kind, expected=expected)
    assert r.status_code == 422 and word in r.json()["error"], r.text


def test_the_payment_export_has_server_hours_and_amounts_and_names_only_on_request(judge):
    assert design(judge, pay_cents_per_hour=1500).is_success
    judge.post_question("d1", "So 7 * 5 = 35")
    alice = judge.rater("alice@example.org")
    answer(alice, nxt(alice), elapsed_ms=10**8)  # what the browser says is not what is paid
    (row,) = _raters(judge)
    assert 0 <= row["server_hours"] < 0.01 and row["amount_cents"] == round(
        row["server_hours"] * 1500
    )
    (named,) = _raters(judge, emails="true")
    assert named["rater_email"] == "alice@example.org"
    csv = judge.client().get(
        f"/api/v1/studies/{judge.study.id}/raters", params={"format": "csv"}, headers=judge.auth
    )
    assert csv.text.splitlines()[0].startswith("rater_id,consented,deactivated,work_answers")


def test_the_queue_page_shows_progress_feedback_and_no_one_elses_feedback(judge):
    known(judge, "t1", "training", True, "Because 7 * 5 is 35.")
    alice, bob = judge.rater("alice@example.org"), judge.rater("bob@example.org")
    page = alice.get("/queue").text
    assert "Training: step 1 of 1" in page and "Can\u2019t tell" in page
    form = {
        "answer": "no", "confidence": "3", "csrf_token": csrf(page),
        "shown_sha256": page.split('name="shown_sha256" value="')[1].split('"')[0],
    }  # fmt: skip
    plain = alice.post("/queue/1/answer", data=form, follow_redirects=False)
    assert plain.headers["location"] == "/queue?after=1"
    shown = alice.get("/queue?after=1").text
    assert "Not right." in shown and "Because 7 * 5 is 35." in shown
    assert "Because 7 * 5 is 35." not in bob.get("/queue?after=1").text
