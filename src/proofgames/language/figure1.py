"""Figure 1's stochastic protocol on the disputed step, for judges that err at random.

A judge who errs at random is a stochastic oracle: it says yes to a step with some
probability p.  The claim A defends about the disputed step is ``P[yes] >= 2/3`` (the
step follows); a valid step has ``p >= 2/3`` and a wrong one ``p <= 1/3`` for any judge
with error rate at most 1/3.  That is the one-query machine ``single-query:p=P`` (K = 1,
T = 1), and the rules are exactly those of :mod:`proofgames.protocols.stochastic` for it,
with the parameters of :func:`proofgames.stochastic.optimize.optimize_params` (the Lean
order: B decides before the external coin):

1. A announces ``p_hat`` in [0, 1] (any value: Figure 1 has no rule on it).
2. B estimates p from ``b_samples`` draws of its own model of the judge (prover work, not
   judge calls) and aborts iff ``|estimate - p_hat| >= b_threshold``.
3. On an abort V asks the judge ``v_samples`` times and accepts iff its estimate is
   within ``v_threshold`` of ``p_hat``.  Without an abort the external coin decides: the
   step holds with probability ``p_hat``.

An honest A announces the judge's true P[yes]; a lying A announces what the exact optimal
liar of :func:`proofgames.stochastic.optimal.optimal_liar` announces on that machine
(:func:`liar_announcement`), and its exact acceptance is :func:`liar_acceptance`.  (Up to
the previous release the check also refused any ``p_hat`` below 2/3 -- a rule Figure 1
does not have -- and the liar announced ``1 - e``: the report's soundness error of 0 came
from those two, not from Figure 1.)

Example:
    >>> import asyncio
    >>> from proofgames.judges import StepQuestion
    >>> from proofgames.judges import CalculatorJudge, ScriptedJudge
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

import json
from collections.abc import Callable

import numpy as np

from ..errors import ProtocolError
from ..judges.interface import StepQuestion
from ..stochastic.params import StochasticParams
from .costs import DebateCosts, JudgeLedger

Announcement = float | Callable[[StepQuestion], float]


_LIARS: dict[tuple[str, float], tuple[float, float]] = {}


def _liar(params: StochasticParams, p: float) -> tuple[float, float]:
    """(announcement, acceptance) of the exact optimal liar on ``single-query:p=P``."""
    from ..stochastic.machines import single_query
    from ..stochastic.optimal import optimal_liar

    key = (json.dumps(params.to_dict(), sort_keys=True), p)
    if key not in _LIARS:
        liar = optimal_liar(single_query(p), params, claim=1)
        _LIARS[key] = float(liar.announce[0][0]), liar.value
    return _LIARS[key]


def liar_announcement(params: StochasticParams, p: float) -> float:
    """What the exact optimal liar announces for a step the judge accepts w.p. ``p``.

    Example:
        >>> from proofgames.stochastic.optimize import optimize_params
        >>> params = optimize_params(1.0, 1).params
        >>> 0.1 < liar_announcement(params, 0.1) < 0.2  # shades the truth up, within reach
        True
    """
    return _liar(params, float(p))[0]


def liar_acceptance(params: StochasticParams, p: float) -> float:
    """The exact optimal liar's acceptance (V's P[accept]) on that step, against honest B.

    Example:
        >>> from proofgames.stochastic.optimize import optimize_params
        >>> params = optimize_params(1.0, 1).params
        >>> round(liar_acceptance(params, 0.0), 3), round(liar_acceptance(params, 0.2), 3)
        (0.06, 0.26)
    """
    return _liar(params, float(p))[1]


class Figure1Check:
    """Decide a disputed step by Figure 1 (see the module doc).

    Args:
        params: Parameters for K = 1, T = 1 (e.g. ``optimize_params(1.0, 1).params``).
        announcement: A's announced P[the judge says yes] for the step it defends: a
            number, or a function of the question (say, :func:`liar_announcement`).
        b_model: B's model of the judge, P[yes] for a question; ``None``: B never aborts.
        seed: Seed of V's coin, V's sampling and B's draws.
    """

    def __init__(
        self,
        params: StochasticParams,
        announcement: Announcement,
        b_model: Callable[[StepQuestion], float] | None,
        seed: int,
    ) -> None:
        if not callable(announcement):
            announcement = _probability(announcement)
        self.params, self.announcement, self.b_model = params, announcement, b_model
        self.rng = np.random.default_rng(np.random.SeedSequence(seed))

    def _b_aborts(self, question: StepQuestion, p_hat: float) -> bool:
        if self.b_model is None:
            return False
        n = self.params.b_samples
        estimate = self.rng.binomial(n, self.b_model(question)) / n
        return bool(abs(estimate - p_hat) >= self.params.b_threshold)

    async def decide(
        self, ledger: JudgeLedger, question: StepQuestion, costs: DebateCosts,
        judgements: list[float],
    ) -> bool:  # fmt: skip
        """True iff the step is taken to hold (A wins the dispute)."""
        said = self.announcement
        p_hat = _probability(said(question) if callable(said) else said)
        if not self._b_aborts(question, p_hat):
            return bool(self.rng.random() < p_hat)
        yes = 0
        for _ in range(self.params.v_samples):
            j = await ledger.ask(question, costs)
            yes += int(self.rng.random() < j.p_yes)
        estimate = yes / self.params.v_samples
        judgements.append(estimate)
        return bool(abs(estimate - p_hat) < self.params.v_threshold)


def _probability(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ProtocolError(f"announcement must lie in [0, 1], not {value!r}")
    return float(value)
