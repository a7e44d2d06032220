"""The expected cost of a comparison, before it runs: calls and tokens for every model role.

:func:`estimate` walks the grid a comparison will play (the same problems, protocols,
judges -- ``flip:`` and ``swap:`` controls included -- and best-of-N strengths) without
calling any model, and counts, per role, the calls each debate makes from the
protocols' declared counts (:func:`~.protocols.declared_calls`) and the tokens each call
reads and writes. The roles: **prover A** (writing its solution, and each independent
copy restating a step: a model A writes the whole solution again), **prover B**
(disputing, or pointing at a half), each **judge**, and the **preference judge** that
picks among A's best-of-N samples (its calls are A's in the run's tally, priced here as
its own model's). Scripted roles are counted too, at no price.

It is an **estimate**, exact for calls when these assumptions hold:

* every debate reaches its judge: no forfeit, malformed answer or stopped debate;
* A commits to the transcript a scripted A would defend in that debate (the reference
  solution, or the one with the planted error), a model A writing it in the asked
  format at that length; every best-of-N sample is well formed;
* B disputes the last step in cross-examination (it never concedes) and points at the
  second half in every round of bisection, which then ends on the last step;
* consultancy's spot checks pass.

Tokens are the library's word-and-symbol counts (:func:`~.transcript.count_tokens`), not
a model's tokenizer: a prompt is counted as it will be sent; A writes its transcript in
the model format; B and the judges write one token a call; a spot-checked step is the
mean step of the transcript; a control's question is as long as the plain one.
Dollars are ``tokens x price`` with the prices of :func:`~.compare.load_prices` or
Inspect's model database.

Example:
    >>> e = estimate_generated(6, 2, seed=0, judges=("calculator",),
    ...                        protocols=("bisection",), models={"B": "openai/x"})
    >>> b = e["prover B"]
    >>> (b.model, b.calls)  # 2 problems, each debated twice; 3 rounds a debate
    ('openai/x', 12)
    >>> e["judge calculator"].calls, e["judge calculator"].model is None
    (4, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..judges.interface import StepQuestion
from ..judges.text import question_tokens
from ..reporting.tables import markdown_table
from .experiments import PROTOCOLS, Models, Prefer, _reference_answers, _seeds, _strength
from .parsers import parse_model_output
from .protocols import declared_calls
from .transcript import StepTranscript, TranscriptFormatError, count_tokens

__all__ = [
    "ASSUMPTIONS", "RoleCost", "estimate_generated", "estimate_gsm8k", "estimate_table",
    "model_of", "priced",
]  # fmt: skip

ASSUMPTIONS = (
    "every debate reaches its judge (no forfeit, no stop); A defends the transcript a "
    "scripted A would, written in the model format; B disputes the last step and points "
    "at the second half; consultancy's check passes; tokens are word-and-symbol counts, B "
    "and judges write one a call; every call is paid (Inspect's cache not counted)"
)
"""The estimate's assumptions in one line (printed with it)."""


@dataclass
class RoleCost:
    """What one role is expected to spend over a whole run (an estimate).

    Attributes:
        model: the model behind the role (``None``: scripted, it costs nothing).
        calls: calls to it.
        input_tokens: tokens it reads (word-and-symbol counts; a fraction where a mean
            step stands in for an unknown one).
        output_tokens: tokens it writes.
    """

    model: str | None
    calls: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def add(self, calls: int, tokens_in: float, tokens_out: float) -> None:
        """Count ``calls`` calls that read ``tokens_in`` and write ``tokens_out`` each."""
        self.calls += calls
        self.input_tokens += calls * tokens_in
        self.output_tokens += calls * tokens_out

    def dollars(self, price: Any) -> float:
        """Dollars at ``price`` (an Inspect ``ModelCost``: $ per million tokens)."""
        return float(self.input_tokens * price.input + self.output_tokens * price.output) / 1e6


def model_of(spec: str) -> str | None:
    """The model a judge spec calls (``model:NAME``, ``flip:model:NAME``...), else ``None``.

    Example:
        >>> model_of("swap:model:openai/gpt-4o-mini"), model_of("scripted:0.1")
        ('openai/gpt-4o-mini', None)
    """
    head, _, name = spec.partition("model:")
    if head not in ("", "flip:", "swap:") or not (spec.startswith(head + "model")):
        return None
    return name or None


@dataclass(frozen=True)
class _Debate:
    """One debate as the estimate assumes it: the task, A's transcript, A's wrong answer."""

    task: str
    transcript: StepTranscript
    wrong: str | None


def _as_written(task: str, transcript: StepTranscript) -> StepTranscript:
    """The transcript V reads when a model writes ``transcript`` in the model format."""
    try:
        return parse_model_output(task, transcript.render())
    except TranscriptFormatError:
        return transcript


def _mean(values: Iterable[int]) -> float:
    seen = list(values)
    return sum(seen) / len(seen) if seen else 0.0


def _judge_tokens(protocol: str, t: StepTranscript) -> float:
    """Tokens of the judge's question (a spot check: the mean step)."""
    if protocol == "whole-transcript":
        return question_tokens(t.whole_question())
    if protocol == "judge-alone":
        return question_tokens(t.answer_question())
    if protocol == "consultancy":
        return _mean(question_tokens(t.question(s)) for s in range(len(t)))
    return question_tokens(_last_question(t))


def _last_question(t: StepTranscript) -> StepQuestion:
    """The question on the last step, as the protocols ask it (bisection: from copies)."""
    return t.question(len(t) - 1)


def _b_tokens(protocol: str, d: _Debate, t: StepTranscript) -> tuple[float, int]:
    """B's input tokens over one debate, and its calls (declared)."""
    from .model_provers import dispute_prompt, half_prompt

    if protocol == "cross-examination":
        return count_tokens(dispute_prompt(d.task, t)), 1
    lo, hi, total, rounds = -1, len(t) - 1, 0, 0
    while hi - lo > 1:  # B points at the second half: the midpoints it is shown
        mid = (lo + hi) // 2
        total += count_tokens(half_prompt(d.task, mid, t.steps[mid]))
        rounds, lo = rounds + 1, mid
    return total, rounds


class _Grid:
    """The running estimate of one comparison's grid."""

    def __init__(self, models: Models, judges: Sequence[str], prefer: Prefer) -> None:
        self.models = {k: str(v) for k, v in models.items()}
        self.prefer = prefer if isinstance(prefer, str) else None
        self.roles = {
            "prover A": RoleCost(self.models.get("A")),
            "prover B": RoleCost(self.models.get("B")),
            **{f"judge {j}": RoleCost(model_of(j)) for j in judges},
        }
        if prefer is not None:
            self.roles["preference judge"] = RoleCost(model_of(self.prefer or ""))

    def debate(self, protocol: str, judge: str, d: _Debate, best_of: int | None) -> None:
        """Count one debate's calls and tokens into every role."""
        from .model_provers import dishonest_prompt, honest_prompt

        a_model = "A" in self.models
        t = _as_written(d.task, d.transcript) if a_model else d.transcript
        premises = len(t.steps[-1].uses)
        calls = declared_calls(protocol, len(t), premises)
        prompt = honest_prompt(d.task) if d.wrong is None else dishonest_prompt(d.task, d.wrong)
        a_in, a_out = count_tokens(prompt), count_tokens(t.render())
        samples = best_of if a_model and best_of is not None else 1
        self.roles["prover A"].add(samples + calls.a - 1, a_in, a_out)
        if "preference judge" in self.roles and a_model and best_of is not None:
            self.roles["preference judge"].add(samples, question_tokens(t.whole_question()), 1)
        if calls.b:
            b_in, b_calls = _b_tokens(protocol, d, t)
            self.roles["prover B"].add(b_calls, b_in / max(1, b_calls), 1)
        self.roles[f"judge {judge}"].add(calls.judge, _judge_tokens(protocol, t), 1)


def _plays(
    protocols: Sequence[str], judges: Sequence[str], best_of: Sequence[int], figure1: bool
) -> Iterator[tuple[str, str, int | None]]:
    """(protocol, judge, strength) in the grid's order; Figure 1's plays add no model judge."""
    from .compare import _checked, _with_figure1

    for protocol, fig1 in _with_figure1(_checked(protocols, judges)[0], judges, figure1):
        for judge in judges:
            if fig1 and not judge.startswith("scripted:"):
                continue
            for strength in best_of or (None,):
                yield protocol, judge, strength


def estimate_generated(
    steps: int, n: int, *, seed: int, judges: Sequence[str], protocols: Sequence[str] = PROTOCOLS,
    models: Models | None = None, best_of: Sequence[int] = (), prefer: Prefer = None,
    figure1: bool = False,
) -> dict[str, RoleCost]:  # fmt: skip
    """The expected calls and tokens of :func:`~.compare.compare_generated` with these settings.

    Keys: ``"prover A"``, ``"prover B"``, ``"judge SPEC"`` for each judge, and
    ``"preference judge"`` when ``prefer`` is given.
    """
    from .generated import generate_chain

    models = dict(models or {})
    for samples in best_of:
        _strength(models, samples)  # a bad N is refused as the run refuses it
    items = [generate_chain(steps, seed=s) for s in _seeds(seed, n)]
    grid = _Grid(models, judges, prefer)
    for protocol, judge, strength in _plays(protocols, judges, best_of, figure1):
        for item in items:
            grid.debate(protocol, judge, _Debate(item.task_text, item.reference, None), strength)
            wrong = _Debate(item.task_text, item.dishonest, item.dishonest.answer)
            grid.debate(protocol, judge, wrong, strength)
    return grid.roles


def estimate_gsm8k(
    path: str | Path | None, *, limit: int, judges: Sequence[str],
    protocols: Sequence[str] = PROTOCOLS, models: Models | None = None,
    best_of: Sequence[int] = (), prefer: Prefer = None,
) -> dict[str, RoleCost]:  # fmt: skip
    """The expected calls and tokens of :func:`~.compare.compare_gsm8k` (as for generated)."""
    from .gsm8k import load_gsm8k

    models = dict(models or {})
    for samples in best_of:
        _strength(models, samples)  # a bad N is refused as the run refuses it
    debates, solutions = [], load_gsm8k(path, limit)
    if "A" in models:
        _reference_answers(solutions)  # refused as the run refuses it: model solutions
    for sol in solutions:
        if sol.transcript is None:  # no transcript: no debate, no call
            continue
        task = sol.question if "A" in models else " ".join(sol.transcript.task)
        wrong = None if sol.is_correct else sol.transcript.answer
        debates.append(_Debate(task, sol.transcript, wrong))
    grid = _Grid(models, judges, prefer)
    for protocol, judge, strength in _plays(protocols, judges, best_of, False):
        for d in debates:
            grid.debate(protocol, judge, d, strength)
    return grid.roles


PriceOf = Callable[[str], Any]
"""A model's price (an Inspect ``ModelCost``), or ``None`` when none is known."""


def priced(roles: dict[str, RoleCost], price_of: PriceOf) -> dict[str, dict[str, Any]]:
    """Each role that is called, as plain data with its ``dollars``.

    ``dollars`` is 0 for a scripted role and ``None`` for a model with no known price.
    """
    out = {}
    for role, c in roles.items():
        if not c.calls:
            continue
        price = None if c.model is None else price_of(c.model)
        dollars = 0.0 if c.model is None else None if price is None else c.dollars(price)
        out[role] = {**asdict(c), "dollars": dollars}
    return out


def estimate_table(roles: dict[str, RoleCost], price_of: PriceOf) -> str:
    """The estimate as text: the assumptions, a Markdown table a role, the total dollars.

    Example:
        >>> roles = {"prover B": RoleCost("x/y", 4, 400.0, 4.0), "judge calculator":
        ...          RoleCost(None, 4, 200.0, 4.0)}
        >>> print(estimate_table(roles, lambda name: None), end="")  # doctest: +ELLIPSIS
        Expected cost before the run (an estimate; assumed: ...
        | role | model | calls | input tokens | output tokens | dollars |
        ...
        | prover B | x/y | 4 | 400 | 4 | no price |
        | judge calculator | scripted | 4 | 200 | 4 | 0 |
        Total: $0.0000 (estimate), not counting prover B (no price known: --model-cost-config)
    """
    rows, missing, total = [], [], 0.0
    for role, c in priced(roles, price_of).items():
        if c["dollars"] is None:
            missing.append(role)
        total += c["dollars"] or 0.0
        dollars = ("no price" if c["dollars"] is None else "0" if c["model"] is None
                   else f"{c['dollars']:,.4f}")  # fmt: skip
        tokens = f"{c['input_tokens']:,.0f}", f"{c['output_tokens']:,.0f}"
        rows.append([role, c["model"] or "scripted", f"{c['calls']:,}", *tokens, dollars])
    headers = ["role", "model", "calls", "input tokens", "output tokens", "dollars"]
    table = markdown_table(headers, rows, align=[None, None] + ["right"] * 4)
    tail = f"Total: ${total:,.4f} (estimate)"
    if missing:
        tail += f", not counting {', '.join(missing)} (no price known: --model-cost-config)"
    return f"Expected cost before the run (an estimate; assumed: {ASSUMPTIONS}):\n{table}{tail}\n"
