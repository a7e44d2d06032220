r"""Parsers: GSM8K-style solutions and provers' output into :class:`StepTranscript` s.

**GSM8K solutions** have one step per line, calculator annotations ``<<expr=value>>``,
and a last line ``A: <answer>`` or ``#### <answer>``.  A step's claimed result is its
last annotation's value (else the last number it writes).  Its relevant set is inferred
from the numbers in its arithmetic: a number that is an earlier step's result points at
the latest such step; a number written in a task sentence points at that sentence.  A step
whose numbers point nowhere reads the whole task.

**Provers' output** must follow the requested format (:data:`MODEL_FORMAT`)::

    Step 1: <text, ending with its result> (uses 2, 3)
    ...
    Answer: <final answer>

``(uses ...)`` lists earlier steps (1-based) and is optional (default: the step before).
Anything else -- no steps, numbering that skips, a step using a later one, no answer --
raises :class:`~.transcript.TranscriptFormatError` naming the problem; a protocol turns
that into the prover's forfeit with the message as the recorded reason.

Example:
    >>> t = parse_gsm8k("Tom has 3 apples. He buys 2 more. How many?",
    ...                 "He has 3+2=<<3+2=5>>5 apples.\n#### 5")
    >>> t.steps[0].result, t.steps[0].task_parts, t.answer
    ('5', (0, 1), '5')
    >>> text = "Step 1: 2 + 2 = 4\nStep 2: 4 * 3 = 12 (uses 1)\nAnswer: 12"
    >>> parse_model_output("Q", text).answer
    '12'
"""

from __future__ import annotations

import re
from fractions import Fraction

from ..judges.text import ANNOTATION
from .transcript import (
    NUMBER,
    ArgumentStep,
    StepTranscript,
    TranscriptFormatError,
    as_number,
    numbers_in,
    read_number,
    relevant_parts,
    split_sentences,
)

__all__ = ["ANNOTATION", "MODEL_FORMAT", "parse_gsm8k", "parse_model_output"]

MODEL_FORMAT = (
    "Write your solution as numbered steps, one per line, each ending with the number it "
    "computes, in exactly this format:\n"
    "Step 1: <reasoning and arithmetic> (uses <earlier step numbers, if any>)\n"
    "Step 2: ...\n"
    "Answer: <final number>"
)
"""The format provers are asked for (:func:`parse_model_output` reads it)."""
MAX_TEXT = 200_000
_ANSWER = re.compile(r"^\s*(?:A:|####|Answer\s*:)\s*(.*)$", re.IGNORECASE)
_STEP = re.compile(r"^\s*Step\s+(\d+)\s*[:.]\s*(.*?)\s*(?:\(uses\s+([\d,\s]*)\))?\s*$", re.I)


def _result(line: str) -> str:
    found = ANNOTATION.findall(line)
    if found:
        return str(found[-1][1]).strip()
    literals = NUMBER.findall(ANNOTATION.sub("", line))
    return _plain(literals[-1]) if literals else ""


def _plain(literal: str) -> str:
    """An integer in its shortest digits; any other number exactly as written."""
    value = read_number(literal)  # a number too large to read: TranscriptFormatError
    return str(value.numerator) if value.denominator == 1 else literal.replace(",", "")


def _operands(line: str) -> list[Fraction]:
    exprs = [e for e, _ in ANNOTATION.findall(line)]
    source = " ".join(exprs) if exprs else ANNOTATION.sub("", line)
    return numbers_in(source.replace("-", " "))  # a minus sign is an operator here


def _links(
    operands: list[Fraction], results: list[Fraction | None], task: tuple[str, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    uses: set[int] = set()
    unmatched = []
    for x in operands:
        earlier = [i for i, r in enumerate(results) if r == x]
        if earlier:
            uses.add(earlier[-1])
        else:
            unmatched.append(x)
    parts = relevant_parts(unmatched, task)
    if not parts and not uses:
        parts = tuple(range(len(task)))
    return tuple(sorted(uses)), parts


def parse_gsm8k(question: str, solution: str) -> StepTranscript:
    """Parse a GSM8K-style solution (one step a line, ``<<expr=value>>``, ``A:``/``####``).

    Raises:
        TranscriptFormatError: No final-answer line, no steps, text too long, or a
            number too large to read (:func:`~.transcript.read_number`).
    """
    if not isinstance(question, str) or not isinstance(solution, str):
        raise TranscriptFormatError("a GSM8K question and solution must be strings")
    if len(solution) > MAX_TEXT or len(question) > MAX_TEXT:
        raise TranscriptFormatError(f"solution or question longer than {MAX_TEXT:,} characters")
    lines = [ln.strip() for ln in solution.strip().splitlines() if ln.strip()]
    if not lines or _ANSWER.match(lines[-1]) is None:
        raise TranscriptFormatError("no final answer line ('A: <answer>' or '#### <answer>')")
    answer = _ANSWER.match(lines[-1]).group(1).strip()  # type: ignore[union-attr]
    if not lines[:-1]:
        raise TranscriptFormatError("the solution has an answer but no steps")
    task = split_sentences(question) or (question,)
    results: list[Fraction | None] = []
    steps = []
    for line in lines[:-1]:
        uses, parts = _links(_operands(line), results, task)
        result = _result(line)
        steps.append(ArgumentStep(text=line, uses=uses, task_parts=parts, result=result))
        results.append(as_number(result) if result else None)
    return StepTranscript(task=task, steps=tuple(steps), answer=answer)


def parse_model_output(question: str, text: str) -> StepTranscript:
    """Parse a prover's output in :data:`MODEL_FORMAT`.

    Raises:
        TranscriptFormatError: The text is not in the format; the message names the
            first problem (recorded as the prover's forfeit reason).
    """
    if not isinstance(text, str):
        raise TranscriptFormatError(f"the prover's output is not text: {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise TranscriptFormatError(f"the prover's output is longer than {MAX_TEXT:,} characters")
    task = split_sentences(question) or (question,)
    steps: list[ArgumentStep] = []
    answer: str | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if answer is not None:
            raise TranscriptFormatError(f"line {n}: text after the 'Answer:' line")
        if (m := _ANSWER.match(raw)) is not None:
            answer = m.group(1).strip()
            if not answer:
                raise TranscriptFormatError(f"line {n}: the 'Answer:' line is empty")
            continue
        steps.append(_model_step(raw, n, len(steps), task))
    if not steps:
        raise TranscriptFormatError("no 'Step 1: ...' lines")
    if answer is None:
        raise TranscriptFormatError("no 'Answer: ...' line")
    return StepTranscript(task=task, steps=tuple(steps), answer=answer)


def _model_step(raw: str, line: int, index: int, task: tuple[str, ...]) -> ArgumentStep:
    m = _STEP.match(raw)
    if m is None:
        raise TranscriptFormatError(f"line {line}: expected 'Step {index + 1}: ...', got {raw!r}")
    if int(m.group(1)) != index + 1:
        raise TranscriptFormatError(
            f"line {line}: step numbered {m.group(1)}, expected {index + 1}"
        )
    body = m.group(2)
    result = _result(body)
    if not result:
        raise TranscriptFormatError(f"line {line}: step {index + 1} ends with no number")
    if m.group(3) is not None:
        refs = [int(x) for x in re.findall(r"\d+", m.group(3))]
        bad = [r for r in refs if not 1 <= r <= index]
        if bad:
            raise TranscriptFormatError(
                f"line {line}: step {index + 1} uses step {bad[0]}, not an earlier step"
            )
        uses = tuple(sorted({r - 1 for r in refs}))
    else:
        uses = (index - 1,) if index else ()
    parts = relevant_parts(numbers_in(body), task) or tuple(range(len(task)))
    return ArgumentStep(text=body, uses=uses, task_parts=parts, result=result)
