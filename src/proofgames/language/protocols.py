"""Debates on step transcripts, played by the core driver: cross-examination, bisection, baselines.

Rules (a task, A's step transcript, a judge that stands for the oracle):

* :func:`cross_examination` (Figure 2 on steps) -- A commits to a transcript; B names
  the step it disputes (or concedes); V asks ``copies`` independent copies of A for that
  step and the steps it uses (each copy gets only the task and a step index), and A
  forfeits if any copy differs from the commitment; the judge then sees only the step,
  its premises and the task parts they use. V itself reads the last step's result and
  the answer.
* :func:`bisection` (Figure 3 on steps) -- V never reads A's transcript beyond its
  length and answer: while the disputed interval has more than one step, a copy of A
  restates the step at its middle and B says which half holds the error; the judge
  checks the one step left.
* :func:`whole_transcript` -- the no-debate baseline: the judge reads everything.
* :func:`judge_alone` -- the weakest baseline: the judge sees the task and A's final
  answer, and no argument (A still writes its transcript; V reads only its answer).
* :func:`consultancy` -- one prover: V spot-checks ``checks`` steps drawn from the seed.

Every call into a prover goes through the core driver
(:class:`~proofgames.protocols.Debate`, ``Party.acall``): a move that raises, times out
(pre-empted, blocking code included) or sends something malformed is that prover's
forfeit, and the loser is read from V's record. Each debate ends in the core
:class:`~proofgames.protocols.Outcome` (``verdict`` 1 iff V accepts A's answer; its
``costs`` carry judge calls, human judgements, tokens and money; ``details`` the answer,
the disputed step and each judgement's P[yes]). A debate whose judge fails, whose budget
is spent or whose model prover's model fails has no verdict: it raises
:class:`~proofgames.errors.DebateStopped`. With ``figure1`` (a
:class:`~.figure1.Figure1Check`) the judge's answer on the disputed step comes from the
stochastic protocol of Figure 1.

Bounds: with a judge that is right on every single step, cross-examination and
bisection have completeness 1 and soundness error 0 against any B and any A whose
copies are consistent (Theorems 3.2 and 5.1 on steps); a judge with error rate e on a
step is the stochastic case (Figure 1). Measured figures: ``reports/language``.

Example:
    >>> import asyncio
    >>> from proofgames.language.generated import generate_chain
    >>> from proofgames.judges import CalculatorJudge
    >>> from proofgames.language.costs import JudgeLedger
    >>> from proofgames.language.provers import ScriptedA, ReferenceB
    >>> item = generate_chain(100, seed=0, error_at=40)
    >>> out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest),
    ...     ReferenceB(item.reference), JudgeLedger(CalculatorJudge())))
    >>> out.verdict, out.details["disputed_step"], out.costs.judge_calls
    (0, 40, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DebateStopped, OracleError, ProtocolError
from ..judges.interface import StepQuestion
from ..protocols import Debate, Forfeit, Outcome
from ._moves import as_half, as_index, as_step, as_transcript
from .costs import BudgetExhausted, JudgeLedger
from .figure1 import Figure1Check
from .provers import ModelFailed
from .transcript import ArgumentStep, StepTranscript, count_tokens, same_value

DEFAULT_TIMEOUT = 600.0
#: What ``Outcome.machine`` says of a debate on a step transcript.
MACHINE = "step-transcript"


@dataclass(frozen=True)
class Calls:
    """The calls one debate makes into A, into B and to the judge (the rules' count)."""

    a: int
    b: int
    judge: int


def declared_calls(
    protocol: str, steps: int, premises: int, *, disputed: bool = True, copies: int = 1,
    checks: int = 1,
) -> Calls:  # fmt: skip
    """The calls the rules below make in a debate that reaches its judge.

    ``steps`` is the length of A's transcript; ``premises``, how many earlier steps the
    judged step uses (cross-examination: the disputed one; bisection: the one it ends
    on); ``disputed``, whether B disputes (cross-examination: a concession ends the
    debate before any copy or judge is asked). Bisection's rounds are taken as
    ``ceil(log2(steps))``, the most there can be: exact when B points at the second
    half every round, one fewer on some paths. Consultancy's count is for spot checks
    that all pass (a rejection ends it early). A forfeit ends any debate early.

    Example:
        >>> declared_calls("bisection", 8, 1)  # A: transcript, last, 3 midpoints, step, 1 premise
        Calls(a=7, b=3, judge=1)
        >>> declared_calls("cross-examination", 8, 1, disputed=False)
        Calls(a=1, b=1, judge=0)
    """
    if protocol == "cross-examination":
        if not disputed:
            return Calls(1, 1, 0)
        return Calls(1 + copies * (1 + premises), 1, 1)
    if protocol == "bisection":
        rounds = math.ceil(math.log2(steps)) if steps > 1 else 0
        return Calls(1 + 1 + rounds + 1 + premises, rounds, 1)
    if protocol == "consultancy":
        return Calls(1, 0, min(checks, steps))
    if protocol in ("whole-transcript", "judge-alone"):
        return Calls(1, 0, 1)
    raise ProtocolError(f"no declared calls for protocol {protocol!r}")


class _Game:
    """One debate on a step transcript as V plays it: the driver, what V read, the verdict."""

    def __init__(
        self, protocol: str, task: str, a: object, b: object, ledger: JudgeLedger,
        seed: int | None, timeout: float | None, figure1: Figure1Check | None = None,
    ) -> None:  # fmt: skip
        from .model_provers import ModelProverA, ModelProverB

        self.d = Debate(protocol, a, b, None, seed, timeout,
                        trusted=(ModelProverA, ModelProverB), stop_on=(ModelFailed,))  # fmt: skip
        self.task, self.ledger, self.figure1 = task, ledger, figure1
        self.read_tokens = self.read_bytes = self.rounds = self.length = self.b_reads = 0
        self.details: dict[str, Any] = {"answer": None, "disputed_step": None, "judgements": []}

    def read(self, text: str) -> None:
        """V reads ``text`` (counted in tokens and bits)."""
        self.read_tokens += count_tokens(text)
        self.read_bytes += len(text.encode("utf-8", "surrogatepass"))

    async def commit(self) -> StepTranscript:
        """A's transcript, V's copy; V reads the last result and the answer."""
        task = self.task
        t: StepTranscript = await self.d.parties["A"].acall(
            "transcript", "transcript", task, parse=lambda raw: as_transcript(raw, task)
        )
        self.length, self.details["answer"] = len(t), t.answer
        self.d.say(0, "A", "transcript", {"steps": len(t), "answer": t.answer})
        self.read(t.steps[-1].result + t.answer)
        if not t.answer_supported():
            self.d.forfeit("A", "the final answer is not the last step's result")
        return t

    async def restated(self, t: int, parts: int) -> ArgumentStep:
        """A copy of A restates step ``t``."""
        step: ArgumentStep = await self.d.parties["A"].acall(
            f"restated step {t + 1}", "step", self.task, t,
            parse=lambda raw: as_step(raw, t, parts),
        )  # fmt: skip
        self.d.say(self.rounds, "A", "step", {"step": t, "result": step.result})
        return step

    async def verdict(self, q: StepQuestion, step: int) -> bool:
        """The judge's answer on ``q`` (by Figure 1 when asked), logged as V's."""
        self.details["disputed_step"] = step
        judged: list[float] = self.details["judgements"]
        if self.figure1 is not None:
            ok = await self.figure1.decide(self.ledger, q, self.d.tally, judged)
        else:
            j = await self.ledger.ask(q, self.d.tally)
            judged.append(j.p_yes)
            ok = j.verdict
        self.d.say(self.rounds, "V", "judge", {"step": step, "accepted": ok})
        return ok

    def end(self, verdict: int, reason: str) -> Outcome:
        """The record: the core outcome with V's reads in tokens."""
        out = self.d.outcome(
            MACHINE, self.length, 1, verdict, reason, rounds=self.rounds,
            reads=self.read_tokens, unit="tokens", bits=8 * self.read_bytes,
            verifier_steps=0, b_reads=self.b_reads, queries=self.d.tally.judge_calls,
        )  # fmt: skip
        out.details.update(self.details)
        return out

    def lost(self) -> Outcome:
        """The record once a party has forfeited (read from V's record)."""
        return self.end(*self.d.loss())

    def stopped(self, exc: Exception) -> DebateStopped:
        """No verdict: the judge or a model failed, or the budget is spent."""
        kind = ("budget" if isinstance(exc, BudgetExhausted)
                else "model" if isinstance(exc, ModelFailed) else "judge")  # fmt: skip
        return DebateStopped(kind, str(exc), self.d.tally)


async def cross_examination(
    task: str, a: object, b: object, ledger: JudgeLedger, *, copies: int = 1,
    timeout: float | None = DEFAULT_TIMEOUT, figure1: Figure1Check | None = None,
    seed: int | None = 0,
) -> Outcome:  # fmt: skip
    """Debate with cross-examination over A's transcript of ``task`` (see module doc).

    Raises:
        DebateStopped: the judge or a model failed, or the budget is spent.
    """
    g = _Game("cross-examination", task, a, b, ledger, seed, timeout, figure1)
    try:
        transcript = await g.commit()
        n, g.rounds, g.b_reads = len(transcript), 1, len(transcript)  # B reads every step
        t = await g.d.parties["B"].acall(
            "disputed step", "dispute", task, transcript.copy(),
            parse=lambda raw: as_index(raw, n),
        )  # fmt: skip
        g.d.say(1, "B", "dispute", t)
        if t is None:
            return g.end(1, "B conceded")
        for s in (t, *transcript.steps[t].uses):
            for _ in range(copies):
                if await g.restated(s, len(transcript.task)) != transcript.steps[s]:
                    g.d.forfeit("A", f"a copy restated step {s + 1} differently")
        ok = await g.verdict(transcript.question(t), t)
    except Forfeit:
        return g.lost()
    except (BudgetExhausted, OracleError) as exc:
        raise g.stopped(exc) from None
    return g.end(int(ok), f"the judge {'accepted' if ok else 'rejected'} step {t + 1}")


class _Copies:
    """Restatements of single steps by independent copies of A, checked for consistency."""

    def __init__(self, g: _Game, parts: int) -> None:
        self.g, self.parts = g, parts
        self.said: dict[int, ArgumentStep] = {}

    async def get(self, t: int) -> ArgumentStep:
        step = await self.g.restated(t, self.parts)
        if self.said.setdefault(t, step) != step:
            self.g.d.forfeit("A", f"copies restated step {t + 1} differently")
        self.g.read(step.result)
        return step


async def bisection(
    task: str, a: object, b: object, ledger: JudgeLedger, *,
    timeout: float | None = DEFAULT_TIMEOUT, figure1: Figure1Check | None = None,
    seed: int | None = 0,
) -> Outcome:  # fmt: skip
    """Recursive bisection: B points at a half, a copy of A restates the midpoint step.

    Raises:
        DebateStopped: the judge or a model failed, or the budget is spent.
    """
    g = _Game("bisection", task, a, b, ledger, seed, timeout, figure1)
    try:
        transcript = await g.commit()  # V reads its length and answer
        parts = transcript.task
        copies = _Copies(g, len(parts))
        last = await copies.get(len(transcript) - 1)
        if not same_value(last.result, transcript.answer):
            g.d.forfeit("A", "a copy's last step does not give the committed answer")
        lo, hi = -1, len(transcript) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            said = await copies.get(mid)
            g.rounds, g.b_reads = g.rounds + 1, g.b_reads + 1
            half = await g.d.parties["B"].acall("half", "half", task, mid, said, parse=as_half)
            g.d.say(g.rounds, "B", "half", half)
            lo, hi = (lo, mid) if half == "first" else (mid, hi)
        step = await copies.get(hi)
        premises = [await copies.get(u) for u in step.uses]
        q = StepQuestion(
            task=" ".join(parts[i] for i in step.task_parts),
            premises=tuple(p.text for p in premises),
            step=step.text,
        )
        ok = await g.verdict(q, hi)
    except Forfeit:
        return g.lost()
    except (BudgetExhausted, OracleError) as exc:
        raise g.stopped(exc) from None
    judged = "accepted" if ok else "rejected"
    return g.end(int(ok), f"bisection reached step {hi + 1}; the judge {judged} it")


async def _one_question(
    protocol: str, task: str, a: object, ledger: JudgeLedger, timeout: float | None,
    seed: int | None, ask: Any, what: str, reads_steps: bool,
) -> Outcome:  # fmt: skip
    """A commits; the judge answers one question about the transcript (``ask`` of it)."""
    g = _Game(protocol, task, a, None, ledger, seed, timeout)
    try:
        transcript = await g.commit()
        for s in transcript.steps if reads_steps else ():
            g.read(s.text)
        ok = await g.verdict(ask(transcript), len(transcript) - 1)
    except Forfeit:
        return g.lost()
    except (BudgetExhausted, OracleError) as exc:
        raise g.stopped(exc) from None
    g.details["disputed_step"] = None
    return g.end(int(ok), f"the judge {'accepted' if ok else 'rejected'} {what}")


async def whole_transcript(
    task: str, a: object, ledger: JudgeLedger, *, timeout: float | None = DEFAULT_TIMEOUT,
    seed: int | None = 0,
) -> Outcome:  # fmt: skip
    """The baseline without debate: the judge reads the whole transcript and answer.

    Raises:
        DebateStopped: the judge or a model failed, or the budget is spent.
    """
    ask = StepTranscript.whole_question
    return await _one_question(
        "whole-transcript", task, a, ledger, timeout, seed, ask, "the whole transcript", True
    )


async def judge_alone(
    task: str, a: object, ledger: JudgeLedger, *, timeout: float | None = DEFAULT_TIMEOUT,
    seed: int | None = 0,
) -> Outcome:  # fmt: skip
    """The baseline without an argument: the judge sees the task and A's final answer.

    A judge that checks only the arithmetic written in a step (the calculator, and the
    scripted judges built on it) finds nothing to check in a bare answer and accepts it:
    its soundness error here is 1, which is the point of the baseline.

    Raises:
        DebateStopped: the judge or a model failed, or the budget is spent.
    """
    ask = StepTranscript.answer_question
    return await _one_question(
        "judge-alone", task, a, ledger, timeout, seed, ask, "the final answer alone", False
    )


async def consultancy(
    task: str, a: object, ledger: JudgeLedger, *, seed: int, checks: int = 1,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> Outcome:  # fmt: skip
    """One prover: V spot-checks ``checks`` distinct steps drawn from ``seed``.

    Raises:
        DebateStopped: the judge or a model failed, or the budget is spent.
    """
    g = _Game("consultancy", task, a, None, ledger, seed, timeout)
    try:
        transcript = await g.commit()
        picks = g.d.rng["V"].choice(len(transcript), size=min(checks, len(transcript)),
                                    replace=False)  # fmt: skip
        for t in sorted(int(x) for x in np.atleast_1d(picks)):
            g.rounds += 1
            if not await g.verdict(transcript.question(t), t):
                return g.end(0, f"the judge rejected spot-checked step {t + 1}")
    except Forfeit:
        return g.lost()
    except (BudgetExhausted, OracleError) as exc:
        raise g.stopped(exc) from None
    g.details["disputed_step"] = None
    return g.end(1, f"{len(picks)} spot-checked steps passed")
