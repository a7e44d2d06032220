"""Cross-play of debaters at several strengths, rated by Elo (as in Khan et al. 2024).

A at best-of-``N_A`` meets B at best-of-``N_B`` for every pair of strengths (say 1, 4
and 16), under every protocol and judge, on the same generated problems: each problem is
debated twice, once with A prompted honestly and once prompted to argue for the planted
wrong answer, and the truth is whether the answer A commits to is right. Every debate is
played by the same driver and judge interface as :mod:`.compare` (:func:`~.experiments.play`)
and summarized by the same cells (:func:`~.compare.cells`). A debate is a game that A wins
when V accepts its answer; :func:`crossplay_ratings` fits Elo ratings to them per judge
(:func:`~.strength.elo`), and :func:`crossplay_figure` draws judge accuracy in self-play
(both sides at the same N) against the debaters' rating at N, per protocol.

Offline, the debaters are **scripted models** whose samples are good with a set
probability (``skill``), so the run needs no model and is the regression test:

* a sample of A, prompted honestly, writes the right solution with probability
  ``skill_a``, else slips (one step's result off, the answer wrong with it); prompted to
  lie, it writes with probability ``skill_a`` a *subtle* lie -- the wrong step's
  arithmetic holds because it reads a made-up operand (the plain ``calculator`` judge
  accepts it; the grounded ones, ``calculator-grounded`` and ``scripted:E``, do not,
  unless the made-up operand happens to be written in the inputs) -- else a blatant one
  (the wrong step's arithmetic fails);
* a sample of B names the first wrong step (or, in bisection, the right half) with
  probability ``skill_b``, else a random one.

A at best-of-N commits to the sample its opponent model prefers (:func:`~.strength.opponent`,
the calculator checker and the calculator: a subtle lie looks right to both) or, given a
``prefer`` judge, the one that judge's P[yes] on the whole transcript prefers
(:func:`~.strength.preference`); B at best-of-N disputes the step the grounded calculator
finds least likely to follow (:func:`~.strength.refutation`). Sample ``k`` of a side is
drawn from its own seed, so best-of-4's samples are best-of-16's first four: strengths are
paired too. With a model in a role (``models``), A's samples are the model's (temperature
1, provider seeds 0 to N-1) and so are B's.

Example:
    >>> import asyncio
    >>> rows = asyncio.run(crossplay_generated(8, 6, seed=0, judges=("calculator",),
    ...                                        protocols=("cross-examination",), strengths=(1, 16)))
    >>> r = crossplay_ratings(rows)["calculator"]
    >>> r["A best-of-16"].rating > r["A best-of-1"].rating
    True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DebateStopped, ProtocolError
from ..judges import CalculatorJudge, make_judge
from .compare import _checked
from .costs import DebateCosts, JudgeLedger
from .experiments import PROTOCOLS, Models, Prefer, Row, _played, _row, _seeds, measured, preferrer
from .generated import GeneratedItem, generate_chain
from .provers import ContrarianB, ReferenceB, ScriptedA
from .strength import BestOfN, BestOfNB, Rating, elo, refutation
from .transcript import ArgumentStep, StepTranscript, same_value

__all__ = [
    "STRENGTHS", "Skills", "SampledB", "crossplay_figure", "crossplay_generated",
    "crossplay_ratings", "matrix", "subtle_lie",
]  # fmt: skip

STRENGTHS = (1, 4, 16)
"""The best-of-N strengths played unless told."""
TWO_PROVERS = ("cross-examination", "bisection")
"""The protocols in which B plays (the others are played at B's first strength only)."""
MAX_STRENGTH = 256
PRIOR_SD = 400.0
"""The spread (Elo points) of the ratings' normal prior: a perfect record stays finite."""


@dataclass(frozen=True)
class Skills:
    """The scripted debaters' chance that one sample is good (see the module doc)."""

    a: float = 0.5
    b: float = 0.5

    def __post_init__(self) -> None:
        for side, p in (("A", self.a), ("B", self.b)):
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                raise ProtocolError(f"{side}'s skill must be a number in [0, 1], not {p!r}")


def subtle_lie(item: GeneratedItem) -> StepTranscript:
    """The dishonest transcript, its wrong step written with arithmetic that holds.

    The step reads a made-up operand (the previous value its wrong result needs) instead
    of the previous step's result: the calculator accepts it, a grounded judge does not.

    Example:
        >>> import asyncio
        >>> from proofgames.judges import CalculatorJudge
        >>> item = generate_chain(6, seed=1)
        >>> q = subtle_lie(item).question(item.error_at)
        >>> q.step
        'After week 4 it holds 77 + 26 = <<77+26=103>>103 crates.'
        >>> [asyncio.run(CalculatorJudge(ground_operands=g).judge(q)).p_yes for g in (False, True)]
        [1.0, 0.0]
    """
    t = item.error_at
    wrong = item.dishonest.steps[t]
    found = re.search(r"holds (-?\d+) ([+-]) (\d+) = <<", wrong.text)
    if found is None:  # pragma: no cover - generate_chain writes every step this way
        raise ProtocolError(f"step {t + 1} is not a ledger step")
    sign, amount, value = found.group(2), int(found.group(3)), int(wrong.result)
    made_up = value - amount if sign == "+" else value + amount
    text = (f"After week {t + 1} it holds {made_up} {sign} {amount} = "
            f"<<{made_up}{sign}{amount}={value}>>{value} crates.")  # fmt: skip
    steps = list(item.dishonest.steps)
    steps[t] = ArgumentStep(text, wrong.uses, wrong.task_parts, wrong.result)
    return StepTranscript(item.dishonest.task, tuple(steps), item.dishonest.answer)


def _sample_rng(seed: int, side: int, k: int) -> np.random.Generator:
    """Sample ``k`` of a side's own generator (the same for every N: strengths are paired)."""
    return np.random.default_rng(np.random.SeedSequence([seed, side, k]))


def _sample_a(item: GeneratedItem, seed: int, honest: bool, k: int, skill: float) -> ScriptedA:
    """Sample ``k`` of the scripted model A (``seed``: the problem's)."""
    rng = _sample_rng(seed, int(honest), k)
    good = bool(rng.random() < skill)
    if not honest:
        return ScriptedA(subtle_lie(item) if good else item.dishonest, "sample-a")
    if good:
        return ScriptedA(item.reference, "sample-a")
    at = int(rng.integers(len(item.reference)))
    return ScriptedA(generate_chain(len(item.reference), seed, error_at=at).dishonest, "sample-a")


class SampledB:
    """One sample of the scripted model B: right with probability ``skill``, else random.

    Its dispute is the reference B's (the first wrong step) with probability ``skill``,
    else a uniformly random step; its half in bisection likewise.
    """

    def __init__(self, reference: StepTranscript, skill: float, seed: int, name: str = "sample-b"):
        self.right, self.random = ReferenceB(reference), ContrarianB(seed)
        self.rng, self.skill, self.name = self.random.rng, skill, name

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The first wrong step w.p. ``skill`` (``None`` if there is none), else a random one."""
        if self.rng.random() < self.skill:
            return await self.right.dispute(task, transcript)
        return await self.random.dispute(task, transcript)

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """The reference B's half w.p. ``skill``, else a random half."""
        if self.rng.random() < self.skill:
            return await self.right.half(task, t, claimed)
        return await self.random.half(task, t, claimed)


def _strengths(strengths: Sequence[int]) -> tuple[int, ...]:
    if not strengths or len(set(strengths)) != len(strengths):
        raise ProtocolError("cross-play needs at least one strength, each once")
    for n in strengths:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STRENGTH:
            raise ProtocolError(f"best-of-N needs N in [1, {MAX_STRENGTH}], not {n!r}")
    return tuple(sorted(strengths))


def _a(item: GeneratedItem, seed: int, honest: bool, n: int, skills: Skills,
       scorer: Any, models: Models) -> BestOfN:  # fmt: skip
    """A at best-of-``n``: the scripted model's samples, or the model's."""
    if "A" in models:
        from .model_provers import ModelProverA

        wrong = None if honest else item.dishonest.answer
        pool: list[Any] = [ModelProverA(models["A"], wrong_answer=wrong, temperature=1.0, seed=k)
                           for k in range(n)]  # fmt: skip
    else:
        pool = [_sample_a(item, seed, honest, k, skills.a) for k in range(n)]
    return BestOfN(pool, scorer, name=f"A best-of-{n}")


def _b(item: GeneratedItem, seed: int, honest: bool, n: int, skills: Skills,
       models: Models) -> BestOfNB:  # fmt: skip
    """B at best-of-``n``: the scripted model's samples, or the model's."""
    if "B" in models:
        from .model_provers import ModelProverB

        pool: list[Any] = [ModelProverB(models["B"], temperature=1.0, seed=k) for k in range(n)]
    else:
        seeds = [int(_sample_rng(seed, 2 + honest, k).integers(2**32)) for k in range(n)]
        pool = [SampledB(item.reference, skills.b, s) for s in seeds]
    return BestOfNB(pool, refutation(CalculatorJudge(ground_operands=True)), f"B best-of-{n}")


async def crossplay_generated(
    steps: int, n: int, *, seed: int, judges: Sequence[str] = ("calculator", "scripted:0.1"),
    protocols: Sequence[str] = PROTOCOLS, strengths: Sequence[int] = STRENGTHS,
    skills: Skills = Skills(), prefer: Prefer = None, models: Models | None = None,
) -> list[Row]:  # fmt: skip
    """Every protocol, judge and pair of strengths on the same ``n`` generated problems.

    Rows are those of :func:`~.experiments.play`'s debates (as in
    :func:`~.experiments.generated_games`) with ``protocol``, ``judge``, ``prompt``
    (``"honest"`` or ``"dishonest"``), ``strength_a`` and ``strength_b`` (``None`` in a
    protocol B does not play). ``prefer``: a judge (or its spec) whose P[yes] on the whole
    transcript chooses A's sample (default: the opponent's score; see
    :func:`~.experiments.preferrer`).

    Raises:
        ProtocolError: a bad grid, strength, skill or model role.
    """
    protocols, judges = _checked(protocols, judges)
    ns, models = _strengths(strengths), dict(models or {})
    if set(models) - {"A", "B"}:
        raise ProtocolError(f"a model prover plays role A or B, not {sorted(set(models))[0]!r}")
    if isinstance(prefer, str):
        make_judge(prefer, seed)  # a preference judge that cannot be used: refused first
    rows: list[Row] = []
    for protocol in protocols:
        for judge in judges:
            make_judge(judge, seed)  # a judge that cannot be used fails before any debate
            for na in ns:
                for nb in ns if protocol in TWO_PROVERS else (None,):
                    rows += await _cell(steps, n, seed, protocol, judge, (na, nb), skills,
                                        prefer, models)  # fmt: skip
    return measured(rows)


async def _cell(
    steps: int, n: int, seed: int, protocol: str, judge: str, pair: tuple[int, int | None],
    skills: Skills, prefer: Prefer, models: Models,
) -> list[Row]:  # fmt: skip
    """The debates of one (protocol, judge, A's strength, B's strength)."""
    na, nb = pair
    rows: list[Row] = []
    spent = DebateCosts()
    for i, s in enumerate(_seeds(seed, n)):
        item = generate_chain(steps, seed=s)
        for honest in (True, False):
            a = _a(item, s, honest, na, skills, preferrer(prefer, s), models)
            b = _b(item, s, honest, nb or 1, skills, models)
            ledger = JudgeLedger(make_judge(judge, seed=s + honest), costs=spent)
            out = await _played(protocol, item.task_text, a, b, ledger, s)
            answer = None if isinstance(out, DebateStopped) else out.details.get("answer")
            truth = isinstance(answer, str) and same_value(answer, item.reference.answer)
            rows.append({"protocol": protocol, "judge": judge,
                         **_row(out, truth, item=i, steps=steps,
                                prompt="honest" if honest else "dishonest",
                                strength_a=na, strength_b=nb)})  # fmt: skip
    return rows


def crossplay_ratings(rows: Sequence[Row]) -> dict[str, dict[str, Rating]]:
    """Per judge, Elo ratings of ``A best-of-N`` and ``B best-of-N`` from the cross-play.

    Each finished debate of a protocol B plays is a game: A scores 1 when V accepted its
    answer, else B does. The protocols B plays are pooled: a debater's strength is its own.
    The fit is the posterior mode under a normal prior of spread :data:`PRIOR_SD` (a
    debater who won every game, as A does against the plain calculator once its lies are
    subtle, gets a finite rating; see :func:`~.strength.elo`).
    """
    out = {}
    for judge in dict.fromkeys(r["judge"] for r in rows):
        games = [(f"A best-of-{r['strength_a']}", f"B best-of-{r['strength_b']}",
                  1.0 if r["accepted"] else 0.0) for r in rows
                 if r["judge"] == judge and r.get("strength_b") is not None
                 and r["accepted"] is not None]  # fmt: skip
        if games:
            out[judge] = elo(games, prior_sd=PRIOR_SD)
    return out


def matrix(rows: Sequence[Row], protocol: str, judge: str) -> str:
    """A's win rate (V accepted) for each A strength (rows) against each B strength (columns)."""
    from ..reporting.tables import markdown_table

    mine = [r for r in rows if (r["protocol"], r["judge"]) == (protocol, judge)
            and r["accepted"] is not None and r.get("strength_b") is not None]  # fmt: skip
    a_ns = sorted({r["strength_a"] for r in mine})
    b_ns = sorted({r["strength_b"] for r in mine})

    def rate(na: int, nb: int) -> str:
        cell = [r["accepted"] for r in mine if (r["strength_a"], r["strength_b"]) == (na, nb)]
        return f"{sum(cell) / len(cell):.3f} ({len(cell)})" if cell else "-"

    body = [[f"A best-of-{na}", *(rate(na, nb) for nb in b_ns)] for na in a_ns]
    headers = [f"{protocol}, {judge}", *(f"B best-of-{nb}" for nb in b_ns)]
    return markdown_table(headers, body, align=[None] + ["right"] * len(b_ns))


def crossplay_figure(
    summaries: Sequence[dict[str, Any]], rated: dict[str, dict[str, Rating]], path: str | Path
) -> None:
    """Judge accuracy in self-play (A and B at the same N) against the debaters' Elo.

    One panel a judge (ratings are fitted per judge), one line a protocol, a point a
    strength (B's strength is A's where B plays), each with its 95% Wilson interval; the
    x axis is the mean of A's and B's ratings at that N (the self-play pair's strength).
    """
    from matplotlib.figure import Figure

    from ..reporting import save_figure

    judges = [j for j in dict.fromkeys(c["judge"] for c in summaries) if j in rated]
    fig = Figure(figsize=(5.0 * max(1, len(judges)), 4.2))
    axes = fig.subplots(1, max(1, len(judges)), squeeze=False)[0]
    for ax, judge in zip(axes, judges, strict=False):
        for protocol in dict.fromkeys(c["protocol"] for c in summaries if c["judge"] == judge):
            _protocol_line(ax, [c for c in summaries
                                if (c["protocol"], c["judge"]) == (protocol, judge)],
                           rated[judge], protocol)  # fmt: skip
        ax.set(title=f"judge: {judge}", xlabel="debaters' Elo at N: mean of A's and B's (fitted)",
               ylim=(-0.03, 1.03),
               ylabel="judge accuracy, self-play (measured, 95% CI)")  # fmt: skip
        ax.legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, Path(path), dpi=120)


def _protocol_line(ax: Any, mine: list[dict[str, Any]], players: dict[str, Rating],
                   protocol: str) -> None:  # fmt: skip
    """One protocol's self-play cells, at the pair's mean rating, with intervals and N."""

    def pair(n: object) -> float | None:
        a, b = players.get(f"A best-of-{n}"), players.get(f"B best-of-{n}")
        return None if a is None or b is None else (a.rating + b.rating) / 2

    mine = sorted((c for c in mine if c.get("strength_b") in (None, c.get("strength_a"))
                   and pair(c.get("strength_a")) is not None),
                  key=lambda c: c["strength_a"])  # fmt: skip
    if not mine:
        return
    x = [pair(c["strength_a"]) or 0.0 for c in mine]
    y = [c["accuracy"] for c in mine]
    err = [[max(0.0, c["accuracy"] - c["accuracy_ci"][0]) for c in mine],
           [max(0.0, c["accuracy_ci"][1] - c["accuracy"]) for c in mine]]  # fmt: skip
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=protocol)
    for xi, yi, c in zip(x, y, mine, strict=True):
        ax.annotate(f"N={c['strength_a']}", (xi, yi), fontsize=6, xytext=(3, 3),
                    textcoords="offset points")  # fmt: skip
