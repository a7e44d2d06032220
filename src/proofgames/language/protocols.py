"""Protocols on step transcripts: cross-examination, bisection, and two baselines.

* :func:`cross_examination` -- A commits to a transcript; B names the step it disputes;
  V asks ``copies`` independent copies of A for that step and its relevant steps (each
  copy gets only the task and a step index) and A forfeits if any copy differs from the
  commitment; the judge then sees only the step, its relevant steps and the task parts
  they use.  V itself reads only the last step's result and the answer.
* :func:`bisection` -- for long transcripts: V never reads A's transcript.  While the
  disputed interval has more than one step, a copy of A restates the step at its middle
  and B says which half holds the error; the judge checks the one step left.
* :func:`whole_transcript` -- the no-debate baseline: the judge reads everything.
* :func:`consultancy` -- one prover: V spot-checks ``checks`` steps drawn from a seed.

Each returns a :class:`~._moves.LanguageOutcome` with its costs.  With ``figure1`` (a
:class:`~.figure1.Figure1Check`) the judge's answer on the disputed step is obtained by
the stochastic protocol of Figure 1 instead of a single call.

Example:
    >>> import asyncio
    >>> from proofgames.language.generated import generate_chain
    >>> from proofgames.language.judges import CalculatorJudge
    >>> from proofgames.language.costs import JudgeLedger
    >>> from proofgames.language.provers import ScriptedA, ReferenceB
    >>> item = generate_chain(100, seed=0, error_at=40)
    >>> out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest),
    ...     ReferenceB(item.reference), JudgeLedger(CalculatorJudge())))
    >>> out.accepted, out.disputed_step, out.costs.judge_calls
    (False, 40, 1)
"""

from __future__ import annotations

from ..errors import OracleError
from ..judging import StepQuestion
from ._moves import Forfeit, LanguageOutcome, as_index, as_step, as_transcript, move, shown
from .costs import BudgetExhausted, DebateCosts, JudgeLedger
from .figure1 import Figure1Check
from .provers import ModelFailed, ProverA, ProverB
from .transcript import ArgumentStep, StepTranscript, count_tokens, same_value

DEFAULT_TIMEOUT = 600.0


async def _verdict(
    ledger: JudgeLedger, q: StepQuestion, costs: DebateCosts, fig1: Figure1Check | None,
    judgements: list[float],
) -> bool:  # fmt: skip
    if fig1 is not None:
        return await fig1.decide(ledger, q, costs, judgements)
    j = await ledger.ask(q, costs)
    judgements.append(j.p_yes)
    return j.verdict


def _ended(out: LanguageOutcome, exc: Exception) -> LanguageOutcome:
    if isinstance(exc, Forfeit):
        out.forfeit, out.reason = exc.party, f"{exc.party} forfeits: {exc.reason}"
        out.winner = "B" if exc.party == "A" else "A"
        out.accepted = out.winner == "A"
    else:
        out.accepted, out.winner, out.reason = None, None, f"run stopped: {exc}"
        out.stopped = (
            "budget"
            if isinstance(exc, BudgetExhausted)
            else "model"
            if isinstance(exc, ModelFailed)
            else "judge"
        )
    return out


async def _commit(a: ProverA, task: str, timeout: float, out: LanguageOutcome) -> StepTranscript:
    transcript = as_transcript(await move("A", a, "transcript", (task,), timeout, out.costs), task)
    out.answer = transcript.answer
    out.costs.verifier_read_tokens += count_tokens(transcript.steps[-1].result + transcript.answer)
    if not transcript.answer_supported():
        raise Forfeit("A", "the final answer is not the last step's result")
    return transcript


async def cross_examination(
    task: str, a: ProverA, b: ProverB, ledger: JudgeLedger, *, copies: int = 1,
    timeout: float = DEFAULT_TIMEOUT, figure1: Figure1Check | None = None,
) -> LanguageOutcome:  # fmt: skip
    """Debate with cross-examination over A's transcript of ``task`` (see module doc)."""
    out = LanguageOutcome("cross-examination", None, None, "")
    try:
        transcript = await _commit(a, task, timeout, out)
        named = await move("B", b, "dispute", (task, transcript.copy()), timeout, out.costs)
        t = as_index(named, len(transcript))
        if t is None:
            out.accepted, out.winner, out.reason = True, "A", "B conceded"
            return out
        out.disputed_step = t
        for s in (t, *transcript.steps[t].uses):
            for _ in range(copies):
                said = as_step(
                    await move("A", a, "step", (task, s), timeout, out.costs),
                    s,
                    len(transcript.task),
                )
                if said != transcript.steps[s]:
                    raise Forfeit("A", f"a copy restated step {s + 1} differently")
        ok = await _verdict(ledger, transcript.question(t), out.costs, figure1, out.judgements)
    except (Forfeit, BudgetExhausted, OracleError) as exc:
        return _ended(out, exc)
    out.accepted, out.winner = ok, "A" if ok else "B"
    out.reason = f"the judge {'accepted' if ok else 'rejected'} step {t + 1}"
    return out


class _Copies:
    """Restatements of single steps by independent copies of A, checked for consistency."""

    def __init__(self, a: ProverA, task: str, parts: int, timeout: float, costs: DebateCosts):
        self.a, self.task, self.parts, self.timeout, self.costs = a, task, parts, timeout, costs
        self.said: dict[int, ArgumentStep] = {}

    async def get(self, t: int) -> ArgumentStep:
        step = as_step(
            await move("A", self.a, "step", (self.task, t), self.timeout, self.costs), t, self.parts
        )
        if self.said.setdefault(t, step) != step:
            raise Forfeit("A", f"copies restated step {t + 1} differently")
        self.costs.verifier_read_tokens += count_tokens(step.result)
        return step


async def bisection(
    task: str, a: ProverA, b: ProverB, ledger: JudgeLedger, *,
    timeout: float = DEFAULT_TIMEOUT, figure1: Figure1Check | None = None,
) -> LanguageOutcome:  # fmt: skip
    """Recursive bisection: B points at a half, a copy of A restates the midpoint step."""
    out = LanguageOutcome("bisection", None, None, "")
    try:
        transcript = await _commit(a, task, timeout, out)  # V reads its length and answer
        parts = transcript.task
        copies = _Copies(a, task, len(parts), timeout, out.costs)
        last = await copies.get(len(transcript) - 1)
        if not same_value(last.result, transcript.answer):
            raise Forfeit("A", "a copy's last step does not give the committed answer")
        lo, hi = -1, len(transcript) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            said = await copies.get(mid)
            half = await move("B", b, "half", (task, mid, said), timeout, out.costs)
            if half not in ("first", "second"):
                raise Forfeit("B", f"answered {shown(half)}, not 'first' or 'second'")
            lo, hi = (lo, mid) if half == "first" else (mid, hi)
        step = await copies.get(hi)
        premises = [await copies.get(u) for u in step.uses]
        q = StepQuestion(
            task=" ".join(parts[i] for i in step.task_parts),
            premises=tuple(p.text for p in premises),
            step=step.text,
        )
        out.disputed_step = hi
        ok = await _verdict(ledger, q, out.costs, figure1, out.judgements)
    except (Forfeit, BudgetExhausted, OracleError) as exc:
        return _ended(out, exc)
    out.accepted, out.winner = ok, "A" if ok else "B"
    out.reason = f"bisection reached step {hi + 1}; the judge {'accepted' if ok else 'rejected'} it"
    return out


async def whole_transcript(
    task: str, a: ProverA, ledger: JudgeLedger, *, timeout: float = DEFAULT_TIMEOUT
) -> LanguageOutcome:
    """The baseline without debate: the judge reads the whole transcript and answer."""
    out = LanguageOutcome("whole-transcript", None, None, "")
    try:
        transcript = await _commit(a, task, timeout, out)
        j = await ledger.ask(transcript.whole_question(), out.costs)
    except (Forfeit, BudgetExhausted, OracleError) as exc:
        return _ended(out, exc)
    out.judgements.append(j.p_yes)
    out.accepted, out.winner = j.verdict, "A" if j.verdict else "B"
    out.reason = f"the judge {'accepted' if j.verdict else 'rejected'} the whole transcript"
    return out


async def consultancy(
    task: str, a: ProverA, ledger: JudgeLedger, *, seed: int, checks: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
) -> LanguageOutcome:  # fmt: skip
    """One prover: V spot-checks ``checks`` distinct steps drawn from ``seed``."""
    import numpy as np

    out = LanguageOutcome("consultancy", None, None, "")
    try:
        transcript = await _commit(a, task, timeout, out)
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        picks = rng.choice(len(transcript), size=min(checks, len(transcript)), replace=False)
        for t in sorted(int(x) for x in picks):
            j = await ledger.ask(transcript.question(t), out.costs)
            out.judgements.append(j.p_yes)
            if not j.verdict:
                out.accepted, out.winner, out.disputed_step = False, "B", t
                out.reason = f"the judge rejected spot-checked step {t + 1}"
                return out
    except (Forfeit, BudgetExhausted, OracleError) as exc:
        return _ended(out, exc)
    out.accepted, out.winner, out.reason = True, "A", f"{len(picks)} spot-checked steps passed"
    return out
