"""Debater strength: best-of-N provers and Elo ratings fitted to a cross-play record."""

from __future__ import annotations

import asyncio
import itertools

import numpy as np
import pytest

from proofgames.errors import ProtocolError
from proofgames.judges import CalculatorJudge
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import cross_examination
from proofgames.language.provers import ProverReply, ReferenceB, ScriptedA
from proofgames.language.strength import BestOfN, BestOfNB, elo, opponent, preference, refutation

TRUE_RATINGS = {"weak": 700.0, "fair": 1000.0, "good": 1100.0, "strong": 1200.0}  # mean 1000


def expected(r_i: float, r_j: float) -> float:
    return 1.0 / (1.0 + 10 ** ((r_j - r_i) / 400))


def test_elo_recovers_known_ratings_from_their_expected_scores():
    games = [
        (a, b, expected(TRUE_RATINGS[a], TRUE_RATINGS[b]))
        for a, b in itertools.combinations(TRUE_RATINGS, 2)
        for _ in range(10)
    ]
    fitted = elo(games)
    for name, rating in TRUE_RATINGS.items():
        assert fitted[name].rating == pytest.approx(rating, abs=1e-3)


def test_elo_on_a_sampled_tournament_lands_within_its_standard_errors():
    rng = np.random.default_rng(np.random.SeedSequence(37))
    games = []
    for a, b in itertools.permutations(TRUE_RATINGS, 2):
        wins = rng.random(200) < expected(TRUE_RATINGS[a], TRUE_RATINGS[b])
        games += [(a, b, float(w)) for w in wins]
    fitted = elo(games)
    for name, rating in TRUE_RATINGS.items():
        assert abs(fitted[name].rating - rating) < 3 * fitted[name].se, (name, fitted[name])
        assert 5 < fitted[name].se < 60 and fitted[name].games == 1200
    assert sum(f.score for f in fitted.values()) == len(games)  # every game scores 1 in all


def test_a_player_who_won_every_game_is_rated_highest_and_finite():
    fitted = elo([("a", "b", 1.0)] * 5 + [("b", "c", 0.5)] * 4)
    assert fitted["a"].rating > fitted["b"].rating == pytest.approx(fitted["c"].rating)
    assert np.isfinite(fitted["a"].rating)


@pytest.mark.parametrize(
    "games, words",
    [([], "at least one game"), ([("a", "a", 1.0)], "two players"), ([("a", "b", 2.0)], "[0, 1]")],
)
def test_elo_refuses_games_it_cannot_rate(games, words):
    with pytest.raises(ProtocolError, match=words.replace("[", r"\[").replace("]", r"\]")):
        elo(games)


class Spending(ScriptedA):
    """A candidate that reports what writing its transcript cost."""

    async def transcript(self, task: str) -> object:
        return ProverReply(self._t, input_tokens=10, output_tokens=100, cost_usd=0.5)


def candidates():
    item = generate_chain(12, seed=5, error_at=4)
    liars = [Spending(generate_chain(12, seed=5, error_at=k).dishonest) for k in (2, 7)]
    return item, [liars[0], Spending(item.reference), liars[1]]


@pytest.mark.parametrize("make_score", ["preference", "opponent"])
def test_best_of_n_commits_to_the_candidate_its_scorer_prefers(make_score):
    item, pool = candidates()
    judge = CalculatorJudge()
    score = (
        preference(judge)
        if make_score == "preference"
        else opponent(ReferenceB(item.reference), judge)
    )
    a = BestOfN(pool, score)
    reply = asyncio.run(a.transcript(item.task_text))
    assert a.chosen == 1 and a.scores == [0.0, 1.0, 0.0]  # the honest one survives checking
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (30, 300, 1.5)
    out = asyncio.run(cross_examination(item.task_text, a, ReferenceB(item.reference),
                                        JudgeLedger(judge)))  # fmt: skip
    assert (out.verdict, out.forfeit) == (1, None)  # its copies restate the chosen one
    assert out.costs.prover_output_tokens == 300


def test_best_of_n_skips_a_candidate_that_writes_no_transcript():
    item, pool = candidates()

    class Garbled(ScriptedA):
        async def transcript(self, task: str) -> object:
            return "not a transcript"

    async def first_wins(task, transcript):
        return 0.0

    a = BestOfN([Garbled(item.reference), pool[0]], first_wins)
    asyncio.run(a.transcript(item.task_text))
    assert a.chosen == 1 and a.scores[0] == float("-inf")
    with pytest.raises(ProtocolError, match="none of the 1 candidates"):
        asyncio.run(BestOfN([Garbled(item.reference)], first_wins).transcript(item.task_text))
    with pytest.raises(ProtocolError, match="at least one candidate"):
        BestOfN([], first_wins)


def test_a_prior_keeps_a_perfect_record_finite_and_recovers_known_ratings():
    unbounded = elo([("a", "b", 1.0)] * 20)
    bounded = elo([("a", "b", 1.0)] * 20, prior_sd=400)
    assert unbounded["a"].rating - unbounded["b"].rating > 1500  # the MLE runs off
    gap = bounded["a"].rating - bounded["b"].rating
    assert 300 < gap < 1500 and bounded["a"].se < 400
    rng = np.random.default_rng(np.random.SeedSequence(37))
    games = []
    for a, b in itertools.permutations(TRUE_RATINGS, 2):
        wins = rng.random(200) < expected(TRUE_RATINGS[a], TRUE_RATINGS[b])
        games += [(a, b, float(w)) for w in wins]
    fitted = elo(games, prior_sd=400)
    for name, rating in TRUE_RATINGS.items():  # a weak prior barely moves informed ratings
        assert abs(fitted[name].rating - rating) < 3 * fitted[name].se, (name, fitted[name])
    with pytest.raises(ProtocolError, match="prior_sd"):
        elo(games, prior_sd=0)


class Disputing:
    """A B sample that names a fixed step (or anything else it is given)."""

    def __init__(self, t, half="first"):
        self.t, self._half, self.name = t, half, "disputing"

    async def dispute(self, task, transcript):
        return ProverReply(self.t, input_tokens=3, output_tokens=1, cost_usd=0.25)

    async def half(self, task, t, claimed):
        return self._half


def test_best_of_n_b_disputes_the_step_its_judge_likes_least():
    item = generate_chain(12, seed=5, error_at=4)
    judge = CalculatorJudge(ground_operands=True)
    b = BestOfNB([Disputing(1), Disputing(None), Disputing("7"), Disputing(4), Disputing(9)],
                 refutation(judge))  # fmt: skip
    reply = asyncio.run(b.dispute(item.task_text, item.dishonest))
    assert reply.value == 4  # the wrong step: the only one the judge rejects
    assert b.scores == [1.0, float("inf"), float("inf"), 0.0, 1.0]
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (15, 5, 1.25)
    conceding = BestOfNB([Disputing(None), Disputing(-3)], refutation(judge))
    assert asyncio.run(conceding.dispute(item.task_text, item.dishonest)).value is None
    halves = BestOfNB([Disputing(0, "second"), Disputing(0, "first"), Disputing(0, "first")],
                      refutation(judge))  # fmt: skip
    assert asyncio.run(halves.half(item.task_text, 3, item.dishonest.steps[3])).value == "first"
    tie = BestOfNB([Disputing(0, "second"), Disputing(0, "first")], refutation(judge))
    assert asyncio.run(tie.half(item.task_text, 3, item.dishonest.steps[3])).value == "second"
    with pytest.raises(ProtocolError, match="at least one candidate"):
        BestOfNB([], refutation(judge))


def test_a_best_of_n_b_whose_sample_raises_forfeits_with_the_reason():
    class Raising(Disputing):
        async def dispute(self, task, transcript):
            raise RuntimeError("sample crashed")

    item = generate_chain(12, seed=5, error_at=4)
    b = BestOfNB([Disputing(4), Raising(0)], refutation(CalculatorJudge()))
    out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest), b,
                                        JudgeLedger(CalculatorJudge())))  # fmt: skip
    assert out.forfeit == "B" and "sample crashed" in out.reason and out.verdict == 1


def test_best_of_n_skips_invisible_or_oversized_samples():
    item, pool = candidates()
    hidden = item.reference.to_dict()
    hidden["steps"][0]["text"] += "\u200b"  # a zero-width space
    oversized = item.reference.to_dict()
    oversized["steps"][1]["text"] = "x" * 30_000

    async def everyone_equal(task, transcript):
        return 0.5

    a = BestOfN([ScriptedA(item.reference), pool[0]], everyone_equal)
    a.candidates = [type("Raw", (), {"transcript": (lambda self, task, v=v: _value(v))})()
                    for v in (hidden, oversized)] + [pool[0]]  # fmt: skip
    asyncio.run(a.transcript(item.task_text))
    assert a.scores[:2] == [float("-inf")] * 2 and a.chosen == 2


async def _value(v):
    return v


def test_a_preference_judges_tokens_and_dollars_count_as_as():
    from proofgames.judges import Judgement

    class Priced:
        name, kind = "priced", "model"

        async def judge(self, question):
            return Judgement(p_yes=0.7 if "<<" in question.step else 0.2, input_tokens=40,
                             output_tokens=1, cost_usd=0.01)  # fmt: skip

    item, pool = candidates()
    reply = asyncio.run(BestOfN(pool, preference(Priced())).transcript(item.task_text))
    assert (reply.input_tokens, reply.output_tokens) == (30 + 3 * 40, 300 + 3 * 1)
    assert reply.cost_usd == pytest.approx(1.5 + 0.03)


def test_a_best_of_n_b_whose_every_sample_is_malformed_forfeits_with_the_reason():
    item = generate_chain(12, seed=5, error_at=4)
    b = BestOfNB([Disputing("seven", half="maybe"), Disputing(99, half=3)],
                 refutation(CalculatorJudge()))  # fmt: skip
    out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest), b,
                                        JudgeLedger(CalculatorJudge())))  # fmt: skip
    assert out.forfeit == "B" and "none of the 2 candidates disputed" in out.reason
    assert "not a step index" in out.reason
    with pytest.raises(ProtocolError, match="named a half"):
        asyncio.run(b.half(item.task_text, 3, item.dishonest.steps[3]))
    mixed = BestOfNB([Disputing(0, half="maybe"), Disputing(0, half="second")],
                     refutation(CalculatorJudge()))  # fmt: skip
    assert asyncio.run(mixed.half(item.task_text, 3, item.dishonest.steps[3])).value == "second"
