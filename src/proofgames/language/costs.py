"""Costs per debate, and the judge ledger that counts them and enforces budgets.

Every judge call goes through a :class:`JudgeLedger`: it counts calls, human judgements,
the tokens the judge read (what a person would have to read) and wrote, and money where
the provider reports it; with a :class:`JudgeBudget` it stops the run, with
:class:`BudgetExhausted`, before a call the budget cannot pay for.  It can also cache
answers by question id (a deterministic judge then pays once per distinct question;
model judges use Inspect's own cache).

Example:
    >>> import asyncio
    >>> from proofgames.judges import StepQuestion
    >>> from proofgames.judges import CalculatorJudge
    >>> ledger = JudgeLedger(CalculatorJudge(), JudgeBudget(max_calls=1))
    >>> q = StepQuestion(task="", premises=(), step="<<1+1=2>>2")
    >>> asyncio.run(ledger.ask(q)).verdict, ledger.costs.judge_calls
    (True, 1)
    >>> try:
    ...     asyncio.run(ledger.ask(q))
    ... except BudgetExhausted as exc:
    ...     print(exc)
    judge budget spent: 1 of 1 calls
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from .. import interrupts
from ..errors import OracleError, ProofgamesError, ProtocolError
from ..judges.interface import Judgement, StepJudge, StepQuestion
from ..protocols._common import DebateCosts, describe_exception

__all__ = ["BudgetExhausted", "DebateCosts", "JudgeBudget", "JudgeLedger"]


class _JudgeRaised(Exception):
    """Carries what a judge raised out of the task that ran it."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised


#: The most characters of a judge's words in a recorded reason.
MAX_REASON = 300


def _cut(text: str) -> str:
    """``text`` cut to :data:`MAX_REASON` characters, the rest counted."""
    cut = len(text) - MAX_REASON
    return text if cut <= 0 else f"{text[:MAX_REASON]}... ({cut:,} more characters)"


class BudgetExhausted(ProofgamesError):
    """The judge budget is spent: the run stops and reports it."""


@dataclass(frozen=True)
class JudgeBudget:
    """Limits on judging for a whole run (``None``: no limit).

    Raises:
        ProtocolError: A limit that is not positive: a budget of nothing measures nothing.

    Example:
        >>> JudgeBudget(max_calls=0)
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: max_calls must be a positive int or None (no limit), not 0
    """

    max_calls: int | None = None
    max_input_tokens: int | None = None
    max_cost_usd: float | None = None
    call_timeout: float | None = None
    """Seconds one judge call may take; a call past it is the judge's failure."""

    def __post_init__(self) -> None:
        _check_timeout(self.call_timeout)
        for name in ("max_calls", "max_input_tokens"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ProtocolError(
                    f"{name} must be a positive int or None (no limit), not {value!r}"
                )
        usd = self.max_cost_usd
        if usd is not None and (
            isinstance(usd, bool)
            or not isinstance(usd, (int, float))
            or not math.isfinite(usd)
            or usd <= 0
        ):
            raise ProtocolError(
                f"max_cost_usd must be a positive finite number or None (no limit), not {usd!r}"
            )


def _check_timeout(t: float | None) -> None:
    if t is not None and not (type(t) in (int, float) and math.isfinite(t) and t > 0):
        raise ProtocolError(f"a judge's timeout must be a positive number of seconds, not {t!r}")


@dataclass
class JudgeLedger:
    """Every judge call of a run, counted; stops the run when the budget is spent.

    Args:
        judge: The step judge.
        budget: Limits for the run.
        cache: Answer a question seen before from the cache (no new call).
        timeout: Seconds one judge call may take (``None``: the budget's
            ``call_timeout``, else no limit; a human judge has its own ``timeout_s``); a
            call past it is the judge's failure.
    """

    judge: StepJudge
    budget: JudgeBudget = field(default_factory=JudgeBudget)
    cache: bool = False
    costs: DebateCosts = field(default_factory=DebateCosts)
    timeout: float | None = None
    _answers: dict[str, Judgement] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_timeout(self.timeout)
        if self.timeout is None:
            self.timeout = self.budget.call_timeout

    def _check_budget(self) -> None:
        b, c = self.budget, self.costs
        if b.max_calls is not None and c.judge_calls >= b.max_calls:
            raise BudgetExhausted(f"judge budget spent: {c.judge_calls} of {b.max_calls} calls")
        if b.max_input_tokens is not None and c.judge_input_tokens >= b.max_input_tokens:
            raise BudgetExhausted(
                f"judge budget spent: {c.judge_input_tokens} of {b.max_input_tokens} input tokens"
            )
        if b.max_cost_usd is not None and (c.cost_usd or 0.0) >= b.max_cost_usd:
            raise BudgetExhausted(f"judge budget spent: ${c.cost_usd} of ${b.max_cost_usd}")

    async def ask(self, question: StepQuestion, debate: DebateCosts | None = None) -> Judgement:
        """Ask the judge (or the cache); count the answer for the run and ``debate``.

        Raises:
            BudgetExhausted: The budget cannot pay for another call.
            OracleError: The judge raised or answered something that is not a Judgement.
        """
        if self.cache and question.question_id in self._answers:
            return self._answers[question.question_id]
        self._check_budget()
        name = _cut(repr(getattr(self.judge, "name", "?")))

        async def call() -> object:
            try:
                return await self.judge.judge(question)
            except (BudgetExhausted, OracleError, asyncio.CancelledError):
                raise
            except BaseException as exc:  # a SystemExit would stop the event loop itself
                if interrupts.by_user(exc):
                    raise
                raise _JudgeRaised(exc) from None

        try:
            with interrupts.guard():
                answer = await asyncio.wait_for(call(), self.timeout)
        except (BudgetExhausted, OracleError) as exc:
            if len(str(exc)) > MAX_REASON:
                raise OracleError(f"judge {name} failed: {_cut(str(exc))}") from None
            raise
        except asyncio.TimeoutError:
            raise OracleError(f"judge {name} did not answer within {self.timeout:g} s") from None
        except _JudgeRaised as carried:  # whatever a judge raises stops the debate, not the run
            described = _cut(describe_exception(carried.raised))
            raise OracleError(f"judge {name} failed: {described}") from None
        if not isinstance(answer, Judgement):
            kind = type(answer).__name__
            raise OracleError(f"judge {name} answered a {kind}, not a Judgement")
        self.costs.add_judgement(answer)
        if debate is not None:
            debate.add_judgement(answer)
        if self.cache:
            self._answers[question.question_id] = answer
        return answer
