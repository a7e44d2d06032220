"""Provers on transcripts: the moves A and B make, and scripted provers for tests.

A (role ``prover_a``) commits to a transcript, and answers independent copies: each
copy is asked for one step with nothing but the task and the step's index (no debate
history).  B (role ``prover_b``) names the step it disputes, or the half of an interval
it disputes in bisection.  A move may return its value bare or in a
:class:`ProverReply` that also reports the tokens (and money) it spent.

Moves are untrusted: the protocols copy and check what comes back, and a prover that
raises, times out or answers something malformed forfeits with the reason recorded.
Model provers (Inspect models with these roles) are in :mod:`.model_provers`; when the
model behind one fails (an API error), the prover raises :class:`ModelFailed`, which
stops the run instead: no party is blamed and nothing is measured.

Example:
    >>> import asyncio
    >>> from proofgames.language.generated import generate_chain
    >>> item = generate_chain(12, seed=0, error_at=5)
    >>> b = ReferenceB(item.reference)
    >>> asyncio.run(b.dispute(item.task_text, item.dishonest))
    5
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..errors import OracleError
from ..protocols._outcome import ProverReply

__all__ = [
    "CheckerB", "ContrarianB", "InconsistentA", "ModelFailed", "ProverA", "ProverB",
    "ProverReply", "ReferenceB", "ScriptedA",
]  # fmt: skip
from ..judges import CalculatorJudge
from .transcript import ArgumentStep, StepTranscript, same_value


class ModelFailed(OracleError):
    """The model behind a prover failed (e.g. its API): the run stops, no one forfeits."""


class ProverA(Protocol):
    """The prover who defends an answer."""

    name: str

    async def transcript(self, task: str) -> object:
        """Commit to a transcript: a StepTranscript, its dict, or text in the model format."""
        ...

    async def step(self, task: str, t: int) -> object:
        """An independent copy's answer: step ``t`` (an ArgumentStep or its dict)."""
        ...


class ProverB(Protocol):
    """The prover who disputes A's answer."""

    name: str

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The 0-based step B disputes, or ``None`` to concede."""
        ...

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """Bisection: ``"first"`` if A's step ``t`` (restated) is wrong, else ``"second"``."""
        ...


class ScriptedA:
    """A who defends a fixed transcript and answers every copy from it (consistent).

    Args:
        transcript: The transcript A commits to (honest or with a planted error).
        name: Name recorded in outcomes.
    """

    def __init__(self, transcript: StepTranscript, name: str = "scripted-a") -> None:
        self._t, self.name = transcript, name

    async def transcript(self, task: str) -> object:
        """The fixed transcript."""
        return self._t

    async def step(self, task: str, t: int) -> object:
        """Step ``t`` of the fixed transcript (an out-of-range ``t`` returns nothing)."""
        return self._t.steps[t] if 0 <= t < len(self._t.steps) else None


class InconsistentA(ScriptedA):
    """A who commits to one transcript but lets copies restate ``step`` differently."""

    def __init__(self, transcript: StepTranscript, changed: int, name: str = "inconsistent-a"):
        super().__init__(transcript, name)
        self.changed = changed

    async def step(self, task: str, t: int) -> object:
        """Step ``t``, with a different result at ``changed``."""
        s = self._t.steps[t]
        if t != self.changed:
            return s
        return ArgumentStep(s.text + " (restated)", s.uses, s.task_parts, s.result + "1")


class ReferenceB:
    """Honest B who knows the right result of every step and disputes the first wrong one.

    When A's transcript is shorter or longer than the reference and every shared step
    agrees, B disputes the last step the two share.

    Args:
        reference: The correct transcript (step-level ground truth).
        name: Name recorded in outcomes.
    """

    def __init__(self, reference: StepTranscript, name: str = "reference-b") -> None:
        self.reference, self.name = reference, name

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The first step whose result differs from the reference, or ``None``."""
        pairs = zip(self.reference.steps, transcript.steps, strict=False)
        for t, (mine, theirs) in enumerate(pairs):
            if not same_value(mine.result, theirs.result):
                return t
        if len(transcript.steps) != len(self.reference.steps):
            return min(len(transcript.steps), len(self.reference.steps)) - 1
        return None if same_value(self.reference.answer, transcript.answer) else len(transcript) - 1

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """``"first"`` iff A's restated result at ``t`` is not the reference's."""
        ok = t < len(self.reference.steps) and same_value(
            self.reference.steps[t].result, claimed.result
        )
        return "second" if ok else "first"


class CheckerB:
    """B who disputes the first step a calculator rejects (no ground truth needed)."""

    def __init__(self, checker: CalculatorJudge | None = None, name: str = "checker-b") -> None:
        self.checker, self.name = checker or CalculatorJudge(), name

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """The first step whose arithmetic fails, else ``None`` (concede)."""
        for t in range(len(transcript.steps)):
            q = transcript.question(t)
            if self.checker.check(q.step, " ".join((q.task, *q.premises))) is not None:
                return t
        return None

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """Without ground truth B cannot place a restated claim: it says the second half."""
        return "second"


class ContrarianB:
    """B who always disputes a uniformly random step (or half), from a seed."""

    def __init__(self, seed: int, name: str = "contrarian-b") -> None:
        self.rng, self.name = np.random.default_rng(np.random.SeedSequence(seed)), name

    async def dispute(self, task: str, transcript: StepTranscript) -> object:
        """A random step."""
        return int(self.rng.integers(len(transcript.steps)))

    async def half(self, task: str, t: int, claimed: ArgumentStep) -> object:
        """A random half."""
        return "first" if self.rng.random() < 0.5 else "second"
