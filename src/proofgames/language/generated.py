"""A generated task with exact step-level ground truth: a stock ledger in words.

The task says how many crates a warehouse starts with and what arrives or leaves in
each of ``steps`` weeks; the question is the stock after the last week.  Step ``k`` of
the reference solution reads the previous step's result and week ``k``'s sentence, and
writes ``prev +/- amount = <<prev+/-amount=v>>v``: its relevant set is exactly that.

The dishonest transcript plants one arithmetic error at step ``error_at`` (the result is
off by a positive amount) and keeps every later step consistent with it, so only that
step is wrong and the final answer is wrong.  Completeness and soundness can then be
measured without any model.

Example:
    >>> item = generate_chain(10, seed=1, error_at=3)
    >>> len(item.reference), item.reference.steps[4].uses
    (10, (3,))
    >>> item.dishonest.answer != item.reference.answer
    True
    >>> [t for t, (a, b) in enumerate(zip(item.reference.steps, item.dishonest.steps))
    ...  if a.result != b.result][0]
    3
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProtocolError
from .transcript import MAX_STEPS, ArgumentStep, StepTranscript

MIN_STEPS = 2


@dataclass(frozen=True)
class GeneratedItem:
    """One generated problem: the task, the reference and the dishonest transcripts."""

    task: tuple[str, ...]
    reference: StepTranscript
    dishonest: StepTranscript
    error_at: int

    @property
    def task_text(self) -> str:
        """The task as one text."""
        return " ".join(self.task)


def _plan(steps: int, rng: np.random.Generator) -> tuple[int, list[int]]:
    start = int(rng.integers(20, 100))
    deltas, stock = [], start
    for _ in range(steps):
        amount = int(rng.integers(1, 30))
        delta = -amount if stock - amount >= 10 and rng.random() < 0.5 else amount
        deltas.append(delta)
        stock += delta
    return start, deltas


def _task(start: int, deltas: list[int]) -> tuple[str, ...]:
    parts = [f"A warehouse starts with {start} crates."]
    for k, d in enumerate(deltas, start=1):
        verb = "receives" if d > 0 else "ships out"
        parts.append(f"In week {k} it {verb} {abs(d)} crates.")
    parts.append(f"How many crates does it hold after week {len(deltas)}?")
    return tuple(parts)


def _steps(start: int, deltas: list[int], error_at: int | None, slip: int) -> StepTranscript:
    steps, stock = [], start
    for k, d in enumerate(deltas):
        sign = "+" if d > 0 else "-"
        value = stock + d + (slip if k == error_at else 0)
        expr = f"{stock}{sign}{abs(d)}"
        text = (f"After week {k + 1} it holds {stock} {sign} {abs(d)} = "
                f"<<{expr}={value}>>{value} crates.")  # fmt: skip
        uses = (k - 1,) if k else ()
        parts = (k + 1,) if k else (0, 1)
        steps.append(ArgumentStep(text=text, uses=uses, task_parts=parts, result=str(value)))
        stock = value
    return StepTranscript(task=_task(start, deltas), steps=tuple(steps), answer=str(stock))


def generate_chain(steps: int, seed: int, error_at: int | None = None) -> GeneratedItem:
    """Generate one problem of ``steps`` steps from ``seed``.

    Args:
        steps: Number of weeks (= steps), 2 to :data:`~.transcript.MAX_STEPS`.
        seed: Seed of every random choice (numpy ``SeedSequence``).
        error_at: The 0-based step with the planted error; ``None`` draws it uniformly.

    Raises:
        ProtocolError: ``steps`` or ``error_at`` out of range.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or not MIN_STEPS <= steps <= MAX_STEPS:
        raise ProtocolError(f"steps must be an int in [{MIN_STEPS}, {MAX_STEPS}], not {steps!r}")
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    start, deltas = _plan(steps, rng)
    if error_at is None:
        error_at = int(rng.integers(steps))
    if isinstance(error_at, bool) or not isinstance(error_at, int) or not 0 <= error_at < steps:
        raise ProtocolError(f"error_at must be an int in [0, {steps}), not {error_at!r}")
    slip = int(rng.integers(1, 10))
    return GeneratedItem(
        task=_task(start, deltas),
        reference=_steps(start, deltas, None, 0),
        dishonest=_steps(start, deltas, error_at, slip),
        error_at=error_at,
    )
