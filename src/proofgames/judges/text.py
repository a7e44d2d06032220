"""What judges read: tokens, numbers, answers and the layout of a whole-transcript question.

Shared by every judge (a calculator checks numbers, a model's reading is counted in
tokens) and by the language layer that builds transcripts and questions; it sits below
both, so judges need nothing from the debates they judge.

* :func:`count_tokens` / :func:`question_tokens`: word-and-symbol tokens, a proxy for what
  a person reads;
* :func:`read_number`, :func:`as_number`, :func:`numbers_in`, :func:`same_value`: numbers
  read exactly (never as floats), with a cap of :data:`MAX_DIGITS` digits;
* :data:`ANNOTATION`: a calculator annotation ``<<expr=value>>``;
* :data:`WHOLE_PROMPT` and :func:`whole_layout`: the no-debate baseline's question.

Example:
    >>> count_tokens("3 + 4 = 7"), same_value("$1,000", "1000.0")
    (5, True)
"""

from __future__ import annotations

import re
from fractions import Fraction

from ..errors import TranscriptFormatError
from .interface import StepQuestion

ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
"""A calculator annotation ``<<expr=value>>`` (GSM8K's format)."""

WHOLE_PROMPT = "Does every step of this argument follow, so that its final answer is right?"
"""The question put to a judge who reads a whole transcript (the no-debate baseline)."""

ANSWER_PROMPT = "Is this the correct final answer to the task?"
"""The question put to a judge who sees only the task and a final answer (no argument)."""

_TOKEN = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")
NUMBER = re.compile(r"-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
"""A number literal as read in text: digits with thousands commas, decimals, a power of ten."""
MAX_DIGITS = 1_000
"""The longest number read (digits), and the largest power of ten it may carry (``1e1000``)."""


def count_tokens(text: str) -> int:
    """Count word-and-symbol tokens: runs of letters/digits, and each other symbol."""
    return len(_TOKEN.findall(text))


def read_number(literal: str) -> Fraction:
    """The exact value of one number literal (``1,000``, ``-0.5``, ``.5``, ``2.5e3``).

    Raises:
        TranscriptFormatError: Not a number literal, or one too large to read exactly
            (more than :data:`MAX_DIGITS` digits, or a power of ten beyond it).

    Example:
        >>> read_number("2.5e3"), read_number("1e-2")
        (Fraction(2500, 1), Fraction(1, 100))
        >>> read_number("1e99999")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.TranscriptFormatError: the number '1e99999' is too large...
    """
    if not isinstance(literal, str) or NUMBER.fullmatch(literal) is None:
        raise TranscriptFormatError(f"{literal!r} is not a number")
    mantissa, _, exponent = literal.replace(",", "").lower().partition("e")
    digits = sum(c.isdigit() for c in mantissa)
    power = exponent.lstrip("+-").lstrip("0")
    if digits > MAX_DIGITS or len(power) > len(str(MAX_DIGITS)) or int(power or 0) > MAX_DIGITS:
        shown = literal if len(literal) <= 24 else f"{literal[:20]}...{literal[-4:]}"
        raise TranscriptFormatError(
            f"the number {shown!r} is too large to read (more than {MAX_DIGITS:,} digits "
            f"or a power of ten beyond 1e{MAX_DIGITS})"
        )
    return Fraction(literal.replace(",", ""))


def as_number(text: str) -> Fraction | None:
    """Read the first number written in ``text`` (``18``, ``$1,000``, ``0.5``, ``-3``, ``1e3``).

    ``None`` if there is none.

    Raises:
        TranscriptFormatError: The number is too large to read (:func:`read_number`).

    Example:
        >>> as_number("$1,000.50"), as_number("many")
        (Fraction(2001, 2), None)
    """
    match = NUMBER.search(text)
    if match is None:
        return None
    return read_number(match.group(0))


def numbers_in(text: str) -> list[Fraction]:
    """Every number written in ``text``, in order (commas as thousands separators).

    Raises:
        TranscriptFormatError: A number is too large to read (:func:`read_number`).

    Example:
        >>> numbers_in("3 boxes of 1,000 pens, 2.5e2 each")
        [Fraction(3, 1), Fraction(1000, 1), Fraction(250, 1)]
    """
    return [read_number(m.group(0)) for m in NUMBER.finditer(text)]


def same_value(a: str, b: str) -> bool:
    """True when two answers are the same number, or (not numbers) the same words.

    A number too large to read (:func:`read_number`) is compared as it is written.

    Example:
        >>> same_value("$1,000", "1000.0"), same_value("1" * 2000, "1" * 2000)
        (True, True)
    """
    try:
        x, y = as_number(a), as_number(b)
    except TranscriptFormatError:
        x = y = None
    if x is not None and y is not None:
        return x == y
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def question_tokens(question: StepQuestion) -> int:
    """Tokens a judge reads for one question: task part, premises, step and prompt."""
    return sum(
        count_tokens(x) for x in (question.task, *question.premises, question.step, question.prompt)
    )


_TASK_CHUNKS = re.compile(r" \(The first (\d+) inputs are the task\.\)$")


def whole_layout(question: StepQuestion) -> tuple[str, tuple[str, ...]] | None:
    """For a whole-transcript question, ``(task text, steps judged)``; else ``None``.

    The steps judged are every step and the final-answer line.
    """
    if not question.prompt.startswith(WHOLE_PROMPT):
        return None
    m = _TASK_CHUNKS.search(question.prompt)
    k = int(m.group(1)) if m else 0
    task = " ".join((question.task, *question.premises[:k])).strip()
    return task, (*question.premises[k:], question.step)
