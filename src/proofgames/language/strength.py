"""Debater strength: best-of-N provers, and Elo ratings fitted to a cross-play record.

Khan et al. (2024) measure how judge accuracy moves as debaters get stronger; two tools
make a debater stronger or rate it:

* :class:`BestOfN` -- an A that writes ``N`` candidate transcripts (from ``N`` provers,
  e.g. ``N`` samples of a model) and commits to the one a scorer likes best: a
  **preference judge** (:func:`preference`: the judge's P[yes] on the whole transcript)
  or **the opponent's score** (:func:`opponent`: the judge's P[yes] on the step the
  opponent would dispute). Independent copies answer from the chosen candidate; the
  tokens (and money) of all ``N`` candidates are reported.
* :func:`elo` -- ratings on the Elo scale fitted to games by maximum likelihood under
  the Bradley-Terry model, P[i beats j] = 1 / (1 + 10^((R_j - R_i) / 400)), a draw
  counting half a win to each. The ratings are anchored at a mean of 1000; a tiny ridge
  (``ridge``, on the rating differences from the mean, in Elo units squared) keeps a
  player who won or lost every game finite. Standard errors come from the inverse
  Fisher information at the fit (an approximation, not a bound).

Example:
    >>> games = [("a", "b", 1.0)] * 76 + [("a", "b", 0.0)] * 24
    >>> r = elo(games)
    >>> round(r["a"].rating - r["b"].rating)  # 10^(200/400) = 3.16 = 76/24
    200
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ProtocolError
from ..judges.interface import Judgement, StepJudge
from ..protocols._outcome import ProverReply
from ..wire import Malformed
from ._moves import as_index, as_transcript
from .transcript import ArgumentStep, StepTranscript

__all__ = [
    "BestOfN", "BestOfNB", "Rating", "elo", "opponent", "preference", "ratings", "refutation",
    "strength_figure",
]  # fmt: skip

Scorer = Callable[[str, StepTranscript], Awaitable["float | Judgement"]]
"""``async (task, transcript) -> score``: higher is preferred (a judgement: its P[yes])."""
Refuter = Callable[[str, StepTranscript, int], Awaitable["float | Judgement"]]
"""``async (task, transcript, t) -> score`` of B disputing step ``t``: lower is preferred."""

SCALE = 400.0 / math.log(10.0)
"""Elo points per unit of the Bradley-Terry log-strength."""


def preference(judge: StepJudge) -> Scorer:
    """Score a candidate by ``judge``'s P[yes] on the whole transcript (a preference judge).

    Any judge of :mod:`proofgames.judges` will do: a model judge (``make_judge("model:NAME")``)
    reads the whole transcript through the same interface as a step, and its tokens and
    dollars are counted as A's (:class:`BestOfN` adds them to its reply; a calculator's
    or a scripted judge's cost nothing).
    """

    async def score(task: str, transcript: StepTranscript) -> float | Judgement:
        return _spend(judge, await judge.judge(transcript.whole_question()))

    return score


def _spend(judge: StepJudge, judgement: Judgement) -> float | Judgement:
    """A model judge's judgement (its tokens and dollars are spent), else its P[yes] alone.

    A calculator or a scripted judge reports the tokens a reader would read, but nothing
    was generated or paid for: a prover's own check with it costs nothing.
    """
    return judgement if judge.kind == "model" else float(judgement.p_yes)


def opponent(b: Any, judge: StepJudge) -> Scorer:
    """Score a candidate by its chance against ``b``: the judge on the step ``b`` disputes.

    ``judge``'s P[yes] on that step; 1 when ``b`` concedes, 0 when ``b`` names no step.
    """

    async def score(task: str, transcript: StepTranscript) -> float | Judgement:
        raw = await b.dispute(task, transcript.copy())
        try:
            t = as_index(raw, len(transcript))
        except Malformed:
            return 0.0
        if t is None:
            return 1.0
        return _spend(judge, await judge.judge(transcript.question(t)))

    return score


def refutation(judge: StepJudge) -> Refuter:
    """Score B's candidate dispute of step ``t`` by ``judge``'s P[yes] on it (lower: better)."""

    async def score(task: str, transcript: StepTranscript, t: int) -> float | Judgement:
        return _spend(judge, await judge.judge(transcript.question(t)))

    return score


class _Spent:
    """What a best-of-N prover's candidates and scorer reported: tokens and dollars."""

    def __init__(self) -> None:
        self.input = self.output = self.calls = 0
        self.dollars: float | None = None

    def add(self, tokens_in: int, tokens_out: int, dollars: float | None, calls: int) -> None:
        self.input, self.output = self.input + int(tokens_in), self.output + int(tokens_out)
        self.calls += int(calls)
        if dollars is not None:
            self.dollars = (self.dollars or 0.0) + float(dollars)

    def unwrap(self, raw: object) -> object:
        """A candidate's move, its reported costs counted."""
        if isinstance(raw, ProverReply):
            self.add(raw.input_tokens, raw.output_tokens, raw.cost_usd, raw.calls)
            return raw.value
        return raw

    def score(self, value: float | Judgement) -> float:
        """A scorer's value, a judgement's costs counted (the scorer is the prover's own)."""
        if isinstance(value, Judgement):
            self.add(value.input_tokens, value.output_tokens, value.cost_usd, value.calls)
            return float(value.p_yes)
        return float(value)

    def reply(self, value: object) -> ProverReply:
        return ProverReply(value, self.input, self.output, self.dollars, self.calls)


class BestOfN:
    """A who commits to the best of ``N`` candidates' transcripts under ``score``.

    A candidate whose transcript cannot be read is never chosen; ties go to the first.

    Args:
        candidates: The ``N`` provers A (each with ``transcript`` and ``step``).
        score: How a candidate is preferred (:func:`preference` or :func:`opponent`).
        name: Name recorded in outcomes.
    """

    def __init__(self, candidates: Sequence[Any], score: Scorer, name: str = "") -> None:
        if not candidates:
            raise ProtocolError("best-of-N needs at least one candidate")
        self.candidates, self.score = list(candidates), score
        self.name = name or f"best-of-{len(self.candidates)}"
        self.chosen: int | None = None
        self.scores: list[float] = []

    async def transcript(self, task: str) -> object:
        """Every candidate's transcript, scored; the best one, with all their costs."""
        best, spent = None, _Spent()
        self.scores = []
        for i, candidate in enumerate(self.candidates):
            raw = spent.unwrap(await candidate.transcript(task))
            try:
                t = as_transcript(raw, task)
            except Malformed:
                self.scores.append(-math.inf)
                continue
            self.scores.append(spent.score(await self.score(task, t)))
            if best is None or self.scores[-1] > self.scores[best[0]]:
                best = (i, raw)
        if best is None:
            raise ProtocolError(f"none of the {len(self.candidates)} candidates wrote a transcript")
        self.chosen = best[0]
        return spent.reply(best[1])

    async def step(self, task: str, t: int) -> object:
        """An independent copy: the chosen candidate's step ``t``."""
        if self.chosen is None:
            await self.transcript(task)
        return await self.candidates[self.chosen or 0].step(task, t)


class BestOfNB:
    """B who asks ``N`` candidates and disputes the step ``score`` finds least likely to follow.

    A candidate's dispute that is no step index is never chosen; B concedes when no
    candidate names a step and one conceded, and raises (its forfeit, with the first
    malformed answer as the reason) when every candidate's answer was malformed. Ties go
    to the first. In bisection B takes the majority of the well-formed halves (ties: the
    first of them; none: B raises). Every candidate's (and the scorer's) tokens and
    dollars are reported as B's.

    Args:
        candidates: The ``N`` provers B (each with ``dispute`` and ``half``).
        score: How a dispute is rated (:func:`refutation`): the lowest is chosen.
        name: Name recorded in outcomes.
    """

    def __init__(self, candidates: Sequence[Any], score: Refuter, name: str = "") -> None:
        if not candidates:
            raise ProtocolError("best-of-N needs at least one candidate")
        self.candidates, self.score = list(candidates), score
        self.name = name or f"best-of-{len(self.candidates)}"
        self.scores: list[float] = []

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The candidates' disputes, scored; the one least likely to follow, or ``None``."""
        best, spent, conceded, wrong = None, _Spent(), False, ""
        self.scores = []
        for candidate in self.candidates:
            raw = spent.unwrap(await candidate.dispute(task, transcript.copy()))
            try:
                t = as_index(raw, len(transcript))
            except Malformed as exc:
                t, wrong = None, wrong or str(exc)
            conceded = conceded or (t is None and not wrong)
            if t is None:
                self.scores.append(math.inf)
                continue
            self.scores.append(spent.score(await self.score(task, transcript, t)))
            if best is None or self.scores[-1] < best[1]:
                best = (t, self.scores[-1])
        if best is None and wrong and not conceded:
            raise ProtocolError(f"none of the {len(self.candidates)} candidates disputed: {wrong}")
        return spent.reply(None if best is None else best[0])

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """The half most candidates dispute (a tie: the first candidate's)."""
        spent, halves = _Spent(), []
        for candidate in self.candidates:
            raw = spent.unwrap(await candidate.half(task, t, claimed))
            if type(raw) is str and raw in ("first", "second"):
                halves.append(raw)  # a malformed half is never counted
        if not halves:
            raise ProtocolError(f"none of the {len(self.candidates)} candidates named a half")
        first = sum(h == "first" for h in halves)
        second = sum(h == "second" for h in halves)
        chosen = halves[0] if first == second else "first" if first > second else "second"
        return spent.reply(chosen)


@dataclass(frozen=True)
class Rating:
    """A player's fitted Elo rating, its standard error, and its record."""

    rating: float
    se: float
    games: int
    score: float


def elo(
    games: Sequence[tuple[str, str, float]], ridge: float = 1e-6, prior_sd: float | None = None
) -> dict[str, Rating]:
    """Elo ratings fitted to ``games`` (player, opponent, the player's score 1, 0.5 or 0).

    With ``prior_sd`` (Elo points), each rating has a normal prior of that spread about
    the mean: the fit is the posterior mode, so a player who won (or lost) every game
    gets a finite rating pulled towards 1000 instead of one that runs off with the
    iterations, and its standard error includes the prior's information.

    Raises:
        ProtocolError: no games, a score outside [0, 1], a player meeting itself, or a
            ``prior_sd`` that is not a positive number.

    Example:
        >>> r = elo([("a", "b", 1.0)] * 10, prior_sd=400)
        >>> 1000 < r["a"].rating < 1400 and r["a"].se < 400
        True
    """
    if not games:
        raise ProtocolError("Elo ratings need at least one game")
    if prior_sd is not None and not (isinstance(prior_sd, (int, float)) and 0 < prior_sd < 1e9):
        raise ProtocolError(f"prior_sd must be a positive number of Elo points, not {prior_sd!r}")
    names = sorted({p for g in games for p in g[:2]})
    index = {n: k for k, n in enumerate(names)}
    i = np.array([index[g[0]] for g in games])
    j = np.array([index[g[1]] for g in games])
    s = np.array([g[2] for g in games], dtype=float)
    if np.any(i == j) or not np.all((s >= 0) & (s <= 1)):
        raise ProtocolError("each game needs two players and a score in [0, 1]")
    prior = 0.0 if prior_sd is None else (SCALE / float(prior_sd)) ** 2
    theta = _fit(i, j, s, len(names), ridge * (1.0 / SCALE) ** 2 + prior)
    se = _standard_errors(i, j, theta, len(names), prior)
    ratings = 1000.0 + SCALE * (theta - theta.mean())
    out = {}
    for n, k in index.items():
        mine = (i == k) | (j == k)
        won = float(np.sum(s[i == k]) + np.sum(1 - s[j == k]))
        out[n] = Rating(float(ratings[k]), float(SCALE * se[k]), int(mine.sum()), won)
    return out


def _fit(i: np.ndarray, j: np.ndarray, s: np.ndarray, n: int, ridge: float) -> np.ndarray:
    """Bradley-Terry log-strengths by Newton's method on the (concave) log-likelihood."""
    theta = np.zeros(n)
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
        grad = np.bincount(i, s - p, n) - np.bincount(j, s - p, n) - ridge * theta
        w = p * (1 - p)
        hess = np.diag(np.bincount(i, w, n) + np.bincount(j, w, n) + ridge)
        np.add.at(hess, (i, j), -w)
        np.add.at(hess, (j, i), -w)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        theta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    centred: np.ndarray = theta - theta.mean()
    return centred


def _standard_errors(
    i: np.ndarray, j: np.ndarray, theta: np.ndarray, n: int, prior: float = 0.0
) -> np.ndarray:
    """Standard errors of the centred log-strengths (pseudo-inverse of the information)."""
    p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    w = p * (1 - p)
    info = np.diag(np.bincount(i, w, n) + np.bincount(j, w, n) + prior)
    np.add.at(info, (i, j), -w)
    np.add.at(info, (j, i), -w)
    full = np.zeros((n, n))  # the last player fixed (the likelihood sees only differences),
    full[:-1, :-1] = np.linalg.pinv(info[:-1, :-1])  # then moved to the centred ratings
    if prior > 0:  # the prior pins every rating: the whole information is invertible
        full = np.linalg.pinv(info)
    centre = np.eye(n) - 1.0 / n
    se: np.ndarray = np.sqrt(np.clip(np.diag(centre @ full @ centre.T), 0, None))
    return se


def ratings(rows: Sequence[dict[str, Any]]) -> dict[str, Rating]:
    """Elo ratings of A at each strength (best-of-N) against the B of its debates.

    Each finished debate whose row has a ``strength`` is a game: ``A best-of-N`` against
    ``B``, A's score 1 when V accepted its answer, 0 when not.
    """
    games = [(f"A best-of-{r['strength']}", "B", 1.0 if r["accepted"] else 0.0)
             for r in rows if "strength" in r and r["accepted"] is not None]  # fmt: skip
    return elo(games)


def strength_figure(cells: Sequence[dict[str, Any]], path: Any) -> None:
    """Judge accuracy against A's strength (best-of-N), one line a (protocol, judge)."""
    from matplotlib.figure import Figure

    from ..reporting import save_figure

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    lines = dict.fromkeys((c["protocol"], c["judge"]) for c in cells if "strength" in c)
    for protocol, judge in lines:
        mine = sorted((c for c in cells if (c["protocol"], c["judge"]) == (protocol, judge)
                       and "strength" in c), key=lambda c: c["strength"])  # fmt: skip
        x = [c["strength"] for c in mine]
        y = [c["accuracy"] for c in mine]
        low = [max(0.0, c["accuracy"] - c["accuracy_ci"][0]) for c in mine]
        high = [max(0.0, c["accuracy_ci"][1] - c["accuracy"]) for c in mine]
        err = [low, high]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"{protocol}, {judge}")
    ax.set(xscale="log", xlabel="A's strength: best of N samples", ylim=(-0.03, 1.03),
           ylabel="judge accuracy (measured, 95% CI)")  # fmt: skip
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, Path(path), dpi=120)
