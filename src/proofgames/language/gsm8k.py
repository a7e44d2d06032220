r"""GSM8K: official problems, model-written solutions, and a demo set written for proofgames.

Three sources, each JSON lines read strictly: every field is typed (``is_correct`` is a
JSON boolean, never the string ``"false"``), a record with a missing, extra or mistyped
field is refused naming the file and the line, and a file with no records is an error
(an empty data set measures nothing).

* **Problems** in the format of openai/grade-school-math's ``test.jsonl``:
  ``{"question": str, "answer": str}``, the answer one step a line with calculator
  annotations ``<<expr=value>>``, ending ``#### N`` (:func:`load_gsm8k_problems`).
* **Model solutions** (``example_model_solutions.jsonl`` from the same repository):
  ``question``, ``ground_truth`` and, per model, ``{"is_correct": bool, "solution": str}``
  (:func:`load_gsm8k_solutions`).  A solution that does not parse is kept with its
  ``parse_error`` (its prover forfeits).
* :data:`DEMO_PROBLEMS`: twelve problems written for proofgames (not taken from GSM8K), in
  the ``test.jsonl`` format, shipped with the package for the offline demo.

The GSM8K files are not shipped: download them from openai/grade-school-math and pass
the path (a file, or the folder holding it), or name the Hugging Face data set with
``hf:`` (:func:`hf_problems`; online, with the ``datasets`` package).  :func:`load_gsm8k`
reads either kind as solutions to debate: model solutions with their labels; problems as
the reference solution (correct) and, where the last step's annotation gives the answer,
the same solution with a slip planted there (:func:`plant_slip`; wrong).

Example:
    >>> import json, tempfile, pathlib
    >>> row = {"question": "Tom has 3 apples. He buys 2 more. How many?",
    ...        "ground_truth": "3+2=<<3+2=5>>5\nA: 5",
    ...        "6b_finetuning": {"is_correct": False, "solution": "3+2=<<3+2=6>>6\nA: 6"}}
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / SOLUTIONS_FILE).write_text(json.dumps(row) + "\n")
    >>> [(s.model, s.is_correct, s.transcript.answer) for s in load_gsm8k_solutions(folder)]
    [('6b_finetuning', False, '6')]
    >>> [(s.model, s.is_correct) for s in load_gsm8k(limit=1)]  # the demo problems
    [('reference', True), ('planted-slip', False)]
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..errors import ProofgamesError
from ..reporting import write_atomic
from ..reporting.reading import DATA_LIMIT, ReadError, read_bytes
from .parsers import ANNOTATION, parse_gsm8k
from .transcript import NUMBER, StepTranscript, TranscriptFormatError, same_value

SOLUTIONS_FILE = "example_model_solutions.jsonl"
PROBLEMS_FILE = "test.jsonl"
MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
DEMO_PROBLEMS = Path(__file__).resolve().with_name("data") / "demo_problems.jsonl"
"""The offline demo: problems written for proofgames, in GSM8K's ``test.jsonl`` format."""
_ANSWER_LINE = re.compile(r"####[ \t]*(\S.*?)\s*")
_PLAIN = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


class DataError(ProofgamesError, ValueError):
    """A data file is missing or not in the expected format."""


@dataclass(frozen=True)
class GSM8KProblem:
    """One problem with its reference solution (``test.jsonl`` format)."""

    index: int
    question: str
    solution: str
    answer: str
    transcript: StepTranscript


@dataclass(frozen=True)
class GSM8KSolution:
    """One solution to debate, with its label and parsed transcript."""

    index: int
    question: str
    model: str
    solution: str
    is_correct: bool
    transcript: StepTranscript | None
    parse_error: str = ""


HF_PREFIX = "hf:"
HF_DEFAULT = ("openai/gsm8k", "main", "test")
"""The Hugging Face data set, configuration and split that ``hf:`` alone names."""
CACHE_ENV = "PROOFGAMES_CACHE"
"""Where ``hf:`` downloads are kept (default ``~/.cache/proofgames``)."""


def hf_problems(spec: str, cache: str | Path | None = None) -> Path:
    """GSM8K problems from Hugging Face as a local ``test.jsonl``, downloaded once.

    ``spec`` is ``hf:`` (openai/gsm8k, configuration ``main``, split ``test``) or
    ``hf:NAME[:CONFIG[:SPLIT]]``. The rows (``question`` and ``answer`` strings, nothing
    else kept) are written once to ``CACHE/gsm8k/<name>-<config>-<split>.jsonl`` and read
    from there as strictly as any file. It needs the ``datasets`` package (``pip install
    datasets``) and the network the first time; later runs read the cached file.

    Raises:
        DataError: A malformed spec; ``datasets`` missing; the download failing (the
            cause is named); a row without ``question`` and ``answer`` strings.

    Example:
        >>> hf_problems("hf:a:b:c:d")
        Traceback (most recent call last):
        ...
        proofgames.language.gsm8k.DataError: 'hf:a:b:c:d': give hf:[NAME[:CONFIG[:SPLIT]]]
    """
    parts = spec.removeprefix(HF_PREFIX).split(":") if spec != HF_PREFIX else []
    safe = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
    if len(parts) > 3 or not all(safe.fullmatch(x) and ".." not in x for x in parts):
        raise DataError(f"{spec!r}: give hf:[NAME[:CONFIG[:SPLIT]]]")
    name, config, split = (*parts, *HF_DEFAULT[len(parts) :])
    root = Path(cache or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "proofgames")
    file = root / "gsm8k" / f"{name}-{config}-{split}.jsonl".replace("/", "--")
    if not file.is_file():
        rows = _hf_rows(name, config, split)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"cannot keep the download in {file.parent}: {exc.strerror}") from None
        write_atomic(file, "".join(json.dumps(r) + "\n" for r in rows))
    return file


def _hf_rows(name: str, config: str, split: str) -> list[dict[str, str]]:
    """``question`` and ``answer`` of every row of the split (``datasets``)."""
    try:
        import datasets  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise DataError(
            "hf: data needs the Hugging Face 'datasets' package (pip install datasets) and"
            " the network; or download test.jsonl and pass its path"
        ) from None
    try:
        rows = list(datasets.load_dataset(name, config, split=split))
    except Exception as exc:  # any failure of the download, named
        where = f"{name} ({config}, {split})"
        raise DataError(f"could not load {where} from Hugging Face: {exc}") from exc
    out = []
    for n, row in enumerate(rows, start=1):
        if not (isinstance(row.get("question"), str) and isinstance(row.get("answer"), str)):
            raise DataError(f"{name} ({split}), row {n}: no 'question' and 'answer' strings")
        out.append({"question": row["question"], "answer": row["answer"]})
    if not out:
        raise DataError(f"{name} ({config}, {split}) has no rows: it measures nothing")
    return out


def solutions_path(path: str | Path) -> Path:
    """The solutions file: ``path`` itself, or ``path/example_model_solutions.jsonl``.

    Raises:
        DataError: Nothing there.

    Example:
        >>> solutions_path(DEMO_PROBLEMS.parent)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.language.gsm8k.DataError: GSM8K data not found in the folder ...
    """
    return _file(path, (SOLUTIONS_FILE,))


def data_path(path: str | Path) -> Path:
    """A GSM8K file: ``path`` itself, or in that folder the model solutions, else ``test.jsonl``.

    Raises:
        DataError: Nothing there.

    Example:
        >>> data_path(DEMO_PROBLEMS) == DEMO_PROBLEMS
        True
    """
    return _file(path, (SOLUTIONS_FILE, PROBLEMS_FILE))


def _file(path: str | Path, names: tuple[str, ...]) -> Path:
    p = Path(path)
    if p.is_dir():
        found = [p / name for name in names if (p / name).is_file()]
        if not found:
            raise DataError(f"GSM8K data not found in the folder {p}: no {' or '.join(names)}")
        p = found[0]
    if not p.is_file():
        raise DataError(f"GSM8K data not found at {p} (pass the file or its folder)")
    return p


def _text(path: Path, what: str = "the GSM8K file") -> str:
    """The file's text; binary or non-UTF-8 content is a :class:`DataError`."""
    try:  # a regular file only (a FIFO or a device is refused, never read), size-capped
        data = read_bytes(path, what, DATA_LIMIT)
    except ReadError as exc:
        raise DataError(str(exc)) from None
    if b"\x00" in data:
        raise DataError(f"{path} is a binary file, not JSON lines")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"the field {twice[0]!r} appears twice")
    return dict(pairs)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _records(
    path: Path, limit: int | None, what: str = "the GSM8K file"
) -> Iterator[tuple[str, int, dict[str, object]]]:
    """``(where, index, record)`` for each line, up to ``limit``; none at all is an error."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DataError(f"limit must be a positive int, not {limit!r}")
    lines = _text(path, what).split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    if not lines:
        raise DataError(f"{path} has no records: an empty data set measures nothing")
    for n, line in enumerate(lines[:limit], start=1):
        where = f"{path}, line {n}"
        if not line.strip():
            raise DataError(f"{where}: an empty line, not a JSON record")
        try:
            row = json.loads(line, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            if isinstance(exc, RecursionError):
                reason = "nested too deeply"
            raise DataError(f"{where}: not JSON ({reason})") from None
        if not isinstance(row, dict):
            raise DataError(f"{where}: a record must be a JSON object, not {type(row).__name__}")
        yield where, n - 1, row


def _fields(
    row: dict[str, object], need: tuple[str, ...], may: tuple[str, ...], where: str
) -> None:
    unknown = [k for k in row if k not in need and k not in may]
    if unknown:
        known = ", ".join((*need, *may))
        raise DataError(f"{where}: unknown field {unknown[0]!r} (a record has {known})")
    missing = [k for k in need if k not in row]
    if missing:
        raise DataError(f"{where}: the field {missing[0]!r} is missing")


def _string(row: dict[str, object], key: str, where: str) -> str:
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{where}: {key!r} must be a non-empty string, not {value!r:.60}")
    return value


def load_gsm8k_problems(path: str | Path, limit: int | None = None) -> list[GSM8KProblem]:
    """Read up to ``limit`` problems in the ``test.jsonl`` format (``question``, ``answer``).

    Raises:
        DataError: The file is missing, empty, binary or not UTF-8; or a record is not an
            object with exactly a ``question`` and an ``answer`` string ending ``#### N``
            (N a number) that parses (the message names the file and the line).

    Example:
        >>> [p.answer for p in load_gsm8k_problems(DEMO_PROBLEMS, limit=3)]
        ['7', '80', '216']
    """
    out = []
    for where, index, row in _records(data_path(path), limit):
        _fields(row, ("question", "answer"), (), where)
        question, solution = _string(row, "question", where), _string(row, "answer", where)
        last = solution.strip().splitlines()[-1].strip()
        final = _ANSWER_LINE.fullmatch(last)
        if final is None or NUMBER.fullmatch(final.group(1)) is None:
            raise DataError(f"{where}: the answer must end with a line '#### <number>'")
        try:
            transcript = parse_gsm8k(question, solution)
        except TranscriptFormatError as exc:
            raise DataError(f"{where}: {exc}") from None
        out.append(GSM8KProblem(index, question, solution, final.group(1), transcript))
    return out


def _entry(row: dict[str, object], model: str, where: str) -> tuple[str, bool]:
    entry = row[model]
    if not isinstance(entry, dict):
        raise DataError(f"{where}: {model!r} must be an object with is_correct and solution")
    _fields(entry, ("is_correct", "solution"), (), f"{where}, {model}")
    label = entry["is_correct"]
    if not isinstance(label, bool):
        raise DataError(
            f"{where}: {model}.is_correct must be true or false (a JSON boolean), not {label!r}"
        )
    return _string(entry, "solution", f"{where}, {model}"), label


def load_gsm8k_solutions(
    path: str | Path, limit: int | None = None, models: tuple[str, ...] = MODELS
) -> list[GSM8KSolution]:
    """Read up to ``limit`` questions' solutions by ``models``.

    Raises:
        DataError: The file is missing, empty, binary or not UTF-8; a record is malformed
            (the message names the file and the line); or it holds no solution by
            ``models``.

    Example:
        >>> load_gsm8k_solutions(DEMO_PROBLEMS)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.language.gsm8k.DataError: ...line 1: unknown field 'answer' (a record has ...
    """
    if not models or any(m not in MODELS for m in models):
        raise DataError(f"models must be some of {', '.join(MODELS)}, not {models!r}")
    file = solutions_path(path)
    out = []
    for where, index, row in _records(file, limit):
        _fields(row, ("question", "ground_truth"), MODELS, where)
        question = _string(row, "question", where)
        _string(row, "ground_truth", where)
        for model in MODELS:
            if model in row:
                solution, label = _entry(row, model, where)
                if model in models:
                    out.append(_solution(index, question, model, solution, label))
    if not out:
        raise DataError(f"{file} holds no solution by {', '.join(models)}")
    return out


def _solution(index: int, question: str, model: str, solution: str, label: bool) -> GSM8KSolution:
    try:
        transcript: StepTranscript | None = parse_gsm8k(question, solution)
        error = ""
    except TranscriptFormatError as exc:
        transcript, error = None, str(exc)
    return GSM8KSolution(index, question, model, solution, label, transcript, error)


def plant_slip(solution: str) -> str | None:
    r"""The solution with a slip in its last step; ``None`` where there is no place for one.

    The last step's last annotation ``<<expr=v>>`` must give the final answer ``#### v``
    (``v`` a plain number).  The slip makes ``v`` one more there, in the number written
    right after the annotation and in the answer: the argument stays consistent with its
    wrong answer, and only the last step's arithmetic is false.

    Example:
        >>> print(plant_slip("He has 3 + 2 = <<3+2=5>>5 apples.\n#### 5"))
        He has 3 + 2 = <<3+2=6>>6 apples.
        #### 6
        >>> plant_slip("He has 5 apples.\n#### 5") is None
        True
    """
    lines = [ln.strip() for ln in solution.strip().splitlines() if ln.strip()]
    final = _ANSWER_LINE.fullmatch(lines[-1]) if len(lines) >= 2 else None
    found = list(ANNOTATION.finditer(lines[-2])) if final is not None else []
    if final is None or not found:
        return None
    value = found[-1].group(2).strip()
    if _PLAIN.fullmatch(value) is None or not same_value(value, final.group(1)):
        return None
    wrong = str(Decimal(value.replace(",", "")) + 1)
    after = lines[-2][found[-1].end() :]
    shown = re.match(r"\$?(-?\d[\d,]*(?:\.\d+)?)", after)
    if shown is not None and same_value(shown.group(1), value):
        after = after[: shown.start(1)] + wrong + after[shown.end(1) :]
    step = f"{lines[-2][: found[-1].start()]}<<{found[-1].group(1)}={wrong}>>{after}"
    return "\n".join((*lines[:-2], step, f"#### {wrong}"))


def load_gsm8k(path: str | Path | None = None, limit: int | None = None) -> list[GSM8KSolution]:
    """The solutions to debate from a GSM8K file of either kind (``None``: the demo problems).

    A file whose first record has an ``answer`` field holds problems: each gives its
    reference solution (``model="reference"``, correct) and, where :func:`plant_slip`
    finds a place, the slipped solution (``model="planted-slip"``, wrong).  Any other
    file holds model solutions (:func:`load_gsm8k_solutions`).

    Raises:
        DataError: As :func:`load_gsm8k_problems` or :func:`load_gsm8k_solutions`.

    Example:
        >>> sols = load_gsm8k()
        >>> len(sols), sum(s.is_correct for s in sols)
        (24, 12)
    """
    if path is not None and str(path).startswith(HF_PREFIX):
        path = hf_problems(str(path))
    file = data_path(DEMO_PROBLEMS if path is None else path)
    first = next(_records(file, 1))[2]
    if "answer" not in first:
        return load_gsm8k_solutions(file, limit)
    out = []
    for p in load_gsm8k_problems(file, limit):
        out.append(GSM8KSolution(p.index, p.question, "reference", p.solution, True, p.transcript))
        slipped = plant_slip(p.solution)
        if slipped is not None:
            out.append(_solution(p.index, p.question, "planted-slip", slipped, False))
    return out
