"""Figure 1's stochastic protocol on the disputed step, for judges that err at random.

A judge who errs at random is a stochastic oracle: it says yes to a step with some
probability p.  The claim A defends about the disputed step is ``p >= 2/3`` (the step
follows); a valid step has ``p >= 2/3`` and a wrong one ``p <= 1/3`` for any judge with
error rate at most 1/3.  That is a one-query machine (K = 1, T = 1), so Figure 1 applies
with the parameters of :func:`proofgames.stochastic.optimize.optimize_params`:

1. A announces ``p_hat`` (it must be at least 2/3, else A does not claim the step holds).
2. B estimates p from ``b_samples`` draws of its own model of the judge (prover work, not
   judge calls) and aborts iff ``|estimate - p_hat| >= b_threshold``.
3. On an abort V asks the judge ``v_samples`` times and A loses iff V's estimate is at
   least ``v_threshold`` from ``p_hat``.  Without an abort, a coin decides: the step
   holds with probability ``p_hat`` (the parameters' ``external`` coin).

Example:
    >>> import asyncio
    >>> from proofgames.judging import StepQuestion
    >>> from proofgames.language.judges import CalculatorJudge, ScriptedJudge
    >>> from proofgames.language.costs import JudgeLedger, DebateCosts
    >>> from proofgames.stochastic.params import StochasticParams
    >>> params = StochasticParams("custom", 1.0, 1, 1000, 1000, 200, 0.1, 0.1, "external")
    >>> judge = ScriptedJudge(CalculatorJudge(), 0.1, seed=0)
    >>> check = Figure1Check(params, announcement=0.9, b_model=judge.probability, seed=0)
    >>> q = StepQuestion(task="", premises=(), step="<<2+2=5>>5")
    >>> asyncio.run(check.decide(JudgeLedger(judge), q, DebateCosts(), []))
    False
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ProtocolError
from ..judging import StepQuestion
from ..stochastic.params import StochasticParams
from .costs import DebateCosts, JudgeLedger

CLAIM = 2 / 3


class Figure1Check:
    """Decide a disputed step by Figure 1 (see the module doc).

    Args:
        params: Parameters for K = 1, T = 1 (e.g. ``optimize_params(1.0, 1).params``).
        announcement: A's announced P[the judge says yes] for the step it defends.
        b_model: B's model of the judge, P[yes] for a question; ``None``: B never aborts.
        seed: Seed of V's coin, V's sampling and B's draws.
    """

    def __init__(
        self,
        params: StochasticParams,
        announcement: float,
        b_model: Callable[[StepQuestion], float] | None,
        seed: int,
    ) -> None:
        if not 0.0 <= announcement <= 1.0:
            raise ProtocolError(f"announcement must lie in [0, 1], not {announcement!r}")
        self.params, self.announcement, self.b_model = params, float(announcement), b_model
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))

    def _b_aborts(self, question: StepQuestion) -> bool:
        if self.b_model is None:
            return False
        n = self.params.b_samples
        estimate = self.rng.binomial(n, self.b_model(question)) / n
        return bool(abs(estimate - self.announcement) >= self.params.b_threshold)

    async def decide(
        self, ledger: JudgeLedger, question: StepQuestion, costs: DebateCosts,
        judgements: list[float],
    ) -> bool:  # fmt: skip
        """True iff the step is taken to hold (A wins the dispute)."""
        p_hat = self.announcement
        if p_hat < CLAIM:
            return False
        if not self._b_aborts(question):
            return bool(self.rng.random() < p_hat)
        yes = 0
        for _ in range(self.params.v_samples):
            j = await ledger.ask(question, costs)
            yes += int(self.rng.random() < j.p_yes)
        estimate = yes / self.params.v_samples
        judgements.append(estimate)
        return bool(abs(estimate - p_hat) < self.params.v_threshold)
