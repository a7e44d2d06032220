r"""Reading-comprehension and expert-question data: QuALITY- and GPQA-style JSON lines.

Debates on these data sets (Khan et al. 2024 on QuALITY; GPQA) argue from a source text
the judge does not read in full; a debater's quotes must then be checked against it.
Neither data set is shipped or on this machine: pass the local files. Both are read as
strictly as GSM8K (:mod:`.gsm8k`): typed fields, one error line naming the file and the
line, a file with no records refused.

* **QuALITY-style** (:func:`load_quality`): each line an article with its questions,
  ``{"article": str, "questions": [{"question": str, "options": [str, ...],
  "gold_label": int}, ...]}`` (``gold_label`` counts options from 1, as QuALITY's files
  do); the other fields of QuALITY's records (``title``, ``article_id``, ...) are allowed
  and not read.
* **GPQA-style** (:func:`load_gpqa`): each line ``{"Question": str, "Correct Answer": str,
  "Incorrect Answer 1": str, "Incorrect Answer 2": str, "Incorrect Answer 3": str}`` (the
  column names of GPQA's CSV files), other fields allowed and not read; the options are
  the correct answer first, then the incorrect ones (shuffle them with a seed when
  showing them).

:func:`load_reading` reads either, told apart by the first record's fields.

:func:`check_quotes` marks each ``<quote>...</quote>`` in a debater's text as verified
(an exact span of the source, up to runs of white space) or not, as the judge should see
it: ``<v_quote>`` or ``<u_quote>``. With no source (``None``: a GPQA-style question),
there is nothing to check a quote against: each is marked unverifiable, ``<n_quote>``,
rather than refused, so a debate on such a question still runs and its judge sees which
words are the debater's unchecked claims (:data:`NO_SOURCE` is what it is told).

Example:
    >>> marked, found = check_quotes("The cat sat  on the mat.",
    ...     "It says <quote>cat sat on the mat</quote>, not <quote>dog</quote>.")
    >>> marked
    'It says <v_quote>cat sat on the mat</v_quote>, not <u_quote>dog</u_quote>.'
    >>> [q.verified for q in found]
    [True, False]
    >>> check_quotes(None, "It says <quote>dog</quote>.")[0]
    'It says <n_quote>dog</n_quote>.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .gsm8k import DataError, _records, _string

__all__ = [
    "NO_SOURCE", "Quote", "ReadingItem", "check_quotes", "load_gpqa", "load_quality",
    "load_reading",
]  # fmt: skip

QUOTE = re.compile(r"<quote>(.*?)</quote>", re.DOTALL)
_SPACE = re.compile(r"\s+")
GPQA_WRONG = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
GPQA_FIELDS = ("Question", "Correct Answer", *GPQA_WRONG)
NO_SOURCE = (
    "There is no source text for this question: a quote cannot be checked, and each is "
    "marked <n_quote> (an unverified claim of the debater's, neither confirmed nor refuted)."
)
"""What a judge is told, before the task, on a question with no source (GPQA-style)."""


@dataclass(frozen=True)
class ReadingItem:
    """One multiple-choice question: its source text (empty for GPQA), options, answer."""

    index: int
    source: str
    question: str
    options: tuple[str, ...]
    answer: int  # 0-based index into ``options``


@dataclass(frozen=True)
class Quote:
    """A quote in a debater's text, and whether the source holds it.

    ``checked`` is false when there was no source to check it against (then
    ``verified`` is false too: nothing confirmed it).
    """

    text: str
    verified: bool
    checked: bool = True


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def check_quotes(source: str | None, text: str) -> tuple[str, list[Quote]]:
    """``text`` with each quote marked verified or not, and the quotes found.

    A quote is verified when, white space collapsed, it is a non-empty span of ``source``.
    With no ``source`` (``None``) every quote is marked unverifiable (``<n_quote>``).
    """
    normal_source = None if source is None else _normal(source)
    found: list[Quote] = []

    def mark(m: re.Match[str]) -> str:
        quoted = _normal(m.group(1))
        if normal_source is None:
            found.append(Quote(m.group(1), False, checked=False))
            return f"<n_quote>{m.group(1)}</n_quote>"
        ok = bool(quoted) and quoted in normal_source
        found.append(Quote(m.group(1), ok))
        tag = "v_quote" if ok else "u_quote"
        return f"<{tag}>{m.group(1)}</{tag}>"

    return QUOTE.sub(mark, text), found


def _options(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) < 2:
        raise DataError(f"{where}: 'options' must be a list of at least 2 strings")
    if not all(isinstance(o, str) and o.strip() for o in value):
        raise DataError(f"{where}: every option must be a non-empty string")
    return tuple(value)


def load_quality(path: str | Path, limit: int | None = None) -> list[ReadingItem]:
    """The questions of the first ``limit`` articles of a QuALITY-style file.

    Raises:
        DataError: a missing, empty, binary or malformed file (naming the line).
    """
    items: list[ReadingItem] = []
    for where, _, row in _records(Path(path), limit, "the QuALITY-style file"):
        for key in ("article", "questions"):
            if key not in row:
                raise DataError(f"{where}: the field {key!r} is missing")
        article = _string(row, "article", where)
        questions = row["questions"]
        if not isinstance(questions, list) or not questions:
            raise DataError(f"{where}: 'questions' must be a non-empty list")
        for k, q in enumerate(questions, start=1):
            at = f"{where}, question {k}"
            if not isinstance(q, dict) or not {"question", "options", "gold_label"} <= set(q):
                raise DataError(f"{at}: needs 'question', 'options' and 'gold_label'")
            options = _options(q["options"], at)
            gold = q["gold_label"]
            if isinstance(gold, bool) or not isinstance(gold, int):
                raise DataError(f"{at}: 'gold_label' must be an int, not {gold!r:.40}")
            if not 1 <= gold <= len(options):
                raise DataError(f"{at}: 'gold_label' {gold} names no option (1 to {len(options)})")
            text = _string(q, "question", at)
            items.append(ReadingItem(len(items), article, text, options, gold - 1))
    return items


def load_gpqa(path: str | Path, limit: int | None = None) -> list[ReadingItem]:
    """The first ``limit`` questions of a GPQA-style file (correct answer first).

    Raises:
        DataError: a missing, empty, binary or malformed file (naming the line).
    """
    items: list[ReadingItem] = []
    for where, index, row in _records(Path(path), limit, "the GPQA-style file"):
        for key in GPQA_FIELDS:
            if key not in row:
                raise DataError(f"{where}: the field {key!r} is missing")
        options = tuple(_string(row, key, where) for key in ("Correct Answer", *GPQA_WRONG))
        same = [k for k, o in enumerate(options) if _normal(o) in map(_normal, options[:k])]
        if same:
            names = ("Correct Answer", *GPQA_WRONG)
            raise DataError(f"{where}: two options are the same text ({names[same[0]]!r})")
        items.append(ReadingItem(index, "", _string(row, "Question", where), options, 0))
    return items


def load_reading(path: str | Path, limit: int | None = None) -> tuple[str, list[ReadingItem]]:
    """A QuALITY-style or a GPQA-style file, told apart by its first record's fields.

    Returns ``("quality" or "gpqa", items)``: :func:`load_quality`'s or :func:`load_gpqa`'s.

    Raises:
        DataError: a bad file, or a first record that is neither style (naming the line
            and the fields each style needs).
    """
    for where, _, row in _records(Path(path), 1, "the reading file"):
        if "article" in row:
            return "quality", load_quality(path, limit)
        if "Question" in row:
            return "gpqa", load_gpqa(path, limit)
        raise DataError(
            f"{where}: neither a QuALITY-style record (fields 'article' and 'questions') nor "
            f"a GPQA-style one ({', '.join(repr(f) for f in GPQA_FIELDS)})"
        )
    raise AssertionError("unreachable: _records refuses a file with no records")  # pragma: no cover
