r"""Debates over QuALITY- and GPQA-style items: arguments from quotes, checked against the source.

As in Khan et al. (2024), the judge never reads the article: A argues for an option with
quotes, and V, who holds the article, marks each quote verified (``<v_quote>``, a span of
the article) or not (``<u_quote>``) before any judge sees it (:class:`QuoteChecked`, a
wrapper any judge of :mod:`proofgames.judges` goes through; tags a prover wrote itself
are checked like any quote). The debates are the step-transcript protocols, played by
the same driver as every other (:func:`~.experiments.play`), ending in the same outcome:

* A's argument has two steps: the evidence (``The passage says <quote>...</quote>.``)
  and the conclusion (``So the answer is (B) ...``, its result the option's letter and
  the final answer);
* offline, the **scripted debaters**: the honest A quotes the article's sentence that
  shares the most words with the question and the right option; the lying A argues for
  a wrong option (drawn from the seed) and misquotes -- the best sentence for its option
  with that option written in; the honest A meets a B that disputes a random step, the
  lying A one that disputes the first step whose quote the article does not hold
  (:class:`QuoteB`);
* the judge ``quotes`` (:class:`QuoteJudge`) says yes iff what it is shown holds a quote
  and every quote is verified: blind to whether a quote supports the claim, as the
  calculator is blind to reasoning. Any other judge spec (``model:NAME``) is asked the
  same questions, quotes marked.

GPQA-style items have no source: there is nothing to check a quote against, so V marks
every quote unverifiable (``<n_quote>``) instead of refusing it, and the judge is told so
before the task (:data:`~.reading.NO_SOURCE`). The scripted debaters then cite "an expert
source" for their option (both quotes unverifiable), and the lying A meets a B that
holds the answer key and disputes its conclusion (:class:`AnswerB`). The judge ``quotes``
has nothing verified to go on and rejects every argument: a GPQA-style question needs a
judge that reads (``model:NAME``).

Example:
    >>> import asyncio
    >>> from proofgames.judges import StepQuestion
    >>> judge = QuoteChecked(QuoteJudge(), "The keeper counted ships.")
    >>> q = StepQuestion(task="", premises=(), step="It says <quote>counted ships</quote>.")
    >>> asyncio.run(judge.judge(q)).p_yes
    1.0
    >>> q = StepQuestion(task="", premises=(), step="It says <v_quote>counted gulls</v_quote>.")
    >>> asyncio.run(judge.judge(q)).p_yes
    0.0
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..judges import make_judge
from ..judges.interface import JudgeKind, Judgement, StepJudge, StepQuestion
from ..judges.text import question_tokens
from .compare import _checked
from .costs import DebateCosts, JudgeLedger
from .experiments import PROTOCOLS, Row, _played, _row, _seeds, measured
from .provers import ContrarianB, ScriptedA
from .reading import NO_SOURCE, ReadingItem, check_quotes, load_reading
from .transcript import ArgumentStep, StepTranscript

__all__ = ["AnswerB", "QuoteB", "QuoteChecked", "QuoteJudge", "argument", "reading_games"]

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TAGS = re.compile(r"<(/?)[uvn]_quote>")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_WORDS = re.compile(r"[a-z0-9]+")


def _unmarked(text: str) -> str:
    """``text`` with any verified/unverified tags a prover wrote turned back into quotes."""
    return _TAGS.sub(r"<\1quote>", text)


class QuoteChecked:
    """``inner``, shown every quote marked verified or not against ``source`` (V's check).

    With no ``source`` (``None``) every quote is marked unverifiable and the question's
    task starts with :data:`~.reading.NO_SOURCE`, so the judge knows why.
    """

    def __init__(self, inner: StepJudge, source: str | None) -> None:
        self.inner, self.source = inner, source
        self.name, self.kind = inner.name, inner.kind

    def _mark(self, text: str) -> str:
        return check_quotes(self.source, _unmarked(text))[0]

    async def judge(self, question: StepQuestion) -> Judgement:
        """The inner judge's answer on the question with its quotes marked."""
        task = self._mark(question.task)
        if self.source is None:
            task = f"{NO_SOURCE} {task}".strip()
        marked = replace(question, task=task, step=self._mark(question.step),
                         premises=tuple(self._mark(p) for p in question.premises))  # fmt: skip
        return await self.inner.judge(marked)


class QuoteJudge:
    """Yes iff the question shows at least one quote and every quote is verified."""

    kind: JudgeKind = "scripted"

    def __init__(self, name: str = "quotes") -> None:
        self.name = name

    async def judge(self, question: StepQuestion) -> Judgement:
        """P[yes] 1 or 0 from the quote marks alone (it never reads the source)."""
        shown = " ".join((question.task, *question.premises, question.step))
        ok = "<v_quote>" in shown and "<u_quote>" not in shown and "<quote>" not in shown
        return Judgement(p_yes=1.0 if ok else 0.0, input_tokens=question_tokens(question),
                         detail={"judge": self.name})  # fmt: skip


def _task(item: ReadingItem) -> tuple[str, ...]:
    options = "; ".join(f"({LETTERS[k]}) {o}" for k, o in enumerate(item.options))
    return (f"Question: {item.question}", f"Options: {options}")


def argument(item: ReadingItem, option: int, quote: str) -> StepTranscript:
    """A's two-step argument for ``option`` (0-based) from ``quote``.

    The quote is the passage's, or with no source (GPQA-style) "an expert source"'s.
    """
    letter = LETTERS[option]
    cited = "The passage says" if item.source else "An expert source says"
    evidence = ArgumentStep(f"{cited} <quote>{quote}</quote>.", (), (0,), "")
    conclusion = ArgumentStep(f"So the answer is ({letter}) {item.options[option]}.",
                              (0,), (0, 1), letter)  # fmt: skip
    return StepTranscript(_task(item), (evidence, conclusion), letter)


def _best_sentence(source: str, *texts: str) -> str:
    """The source's sentence sharing the most words with ``texts`` (the first on a tie)."""
    wanted = set(_WORDS.findall(" ".join(texts).lower()))
    sentences = [s for s in _SENTENCES.split(source.strip()) if s.strip()]
    return max(sentences, key=lambda s: len(wanted & set(_WORDS.findall(s.lower()))))


def _misquote(item: ReadingItem, option: int) -> str:
    """The best sentence for ``option``, the right option's words replaced by its own."""
    sentence = _best_sentence(item.source, item.question, item.options[option])
    right = item.options[item.answer]
    swapped = re.sub(re.escape(right), item.options[option], sentence, flags=re.IGNORECASE)
    return swapped if swapped != sentence else f"{sentence.rstrip('.')} {item.options[option]}"


class QuoteB:
    """B who holds the source: disputes the first step with a quote it does not hold."""

    def __init__(self, source: str, name: str = "quote-b") -> None:
        self.source, self.name = source, name

    def _false(self, text: str) -> bool:
        return any(not q.verified for q in check_quotes(self.source, _unmarked(text))[1])

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The first step whose own quote, or whose premises' quotes, fail; else concede."""
        for t, step in enumerate(transcript.steps):
            if self._false(step.text) or any(self._false(transcript.steps[u].text)
                                             for u in step.uses):  # fmt: skip
                return t
        return None

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """``"first"`` iff the restated step ``t`` misquotes."""
        return "first" if self._false(claimed.text) else "second"


class AnswerB:
    """B who holds the answer key (``letter``): disputes a conclusion for another option."""

    def __init__(self, letter: str, name: str = "answer-b") -> None:
        self.letter, self.name = letter, name

    def _wrong(self, step: ArgumentStep) -> bool:
        return bool(step.result) and step.result != self.letter

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The first step concluding another option than the key's; else concede."""
        return next((t for t, s in enumerate(transcript.steps) if self._wrong(s)), None)

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """``"first"`` iff the restated step ``t`` concludes another option."""
        return "first" if self._wrong(claimed) else "second"


def _judge(spec: str, source: str | None, seed: int) -> StepJudge:
    inner: StepJudge = QuoteJudge() if spec == "quotes" else make_judge(spec, seed)
    return QuoteChecked(inner, source)


def _debates(item: ReadingItem, seed: int) -> list[tuple[bool, StepTranscript, object]]:
    """The honest and the lying argument about ``item``, each with its B."""
    wrong = [k for k in range(len(item.options)) if k != item.answer]
    lie = int(np.random.default_rng(np.random.SeedSequence(seed)).choice(wrong))
    if not item.source:  # no source: each cites its own option, unverifiable
        right = argument(item, item.answer, item.options[item.answer])
        wrong_one = argument(item, lie, item.options[lie])
        return [(True, right, ContrarianB(seed)), (False, wrong_one, AnswerB(LETTERS[item.answer]))]
    honest = _best_sentence(item.source, item.question, item.options[item.answer])
    return [(True, argument(item, item.answer, honest), ContrarianB(seed)),
            (False, argument(item, lie, _misquote(item, lie)), QuoteB(item.source))]  # fmt: skip


async def reading_games(
    path: str | Path, *, limit: int | None, seed: int = 0, judges: Sequence[str] = ("quotes",),
    protocols: Sequence[str] = PROTOCOLS,
) -> list[Row]:  # fmt: skip
    """Every protocol and judge on the questions of a QuALITY- or GPQA-style file, each twice.

    The honest A (truth: accept) and the lying A (truth: reject), as the module doc says;
    rows as :func:`~.experiments.generated_games`' with ``protocol``, ``judge``, ``item``
    and ``style`` (``"quality"`` or ``"gpqa"``), summarized by :func:`~.compare.cells`.
    ``limit``: the articles read (QuALITY-style), or the questions (GPQA-style).

    Raises:
        ProtocolError: a bad grid; :class:`~.gsm8k.DataError`: a bad file.
    """
    protocols, judges = _checked(protocols, judges)
    for spec in judges:
        _judge(spec, "", seed)  # a judge that cannot be used fails before any debate
    style, items = load_reading(path, limit)
    rows: list[Row] = []
    for protocol in protocols:
        for spec in judges:
            spent = DebateCosts()
            for item, s in zip(items, _seeds(seed, len(items)), strict=True):
                for truth, a, b in _debates(item, s):
                    judge = _judge(spec, item.source or None, s + truth)
                    ledger = JudgeLedger(judge, costs=spent)
                    out = await _played(protocol, " ".join(a.task), ScriptedA(a), b, ledger, s)
                    rows.append({"protocol": protocol, "judge": spec, "style": style,
                                 **_row(out, truth, item=item.index)})  # fmt: skip
    return measured(rows)
