r"""GSM8K model solutions: 1,319 questions, four GPT-3 solutions each, labelled correct or not.

The file (``example_model_solutions.jsonl`` from openai/grade-school-math) is not shipped
with proofgames: pass its path (the file, or the folder holding it).  Each record has
``question``, ``ground_truth`` and, per model, ``{"is_correct": bool, "solution": str}``.
A solution that does not parse is kept with its ``parse_error`` (its prover forfeits).

Example:
    >>> import json, tempfile, pathlib
    >>> row = {"question": "Tom has 3 apples. He buys 2 more. How many?",
    ...        "ground_truth": "3+2=<<3+2=5>>5\nA: 5",
    ...        "6b_finetuning": {"is_correct": False, "solution": "3+2=<<3+2=6>>6\nA: 6"}}
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / SOLUTIONS_FILE).write_text(json.dumps(row) + "\n")
    >>> [(s.model, s.is_correct, s.transcript.answer) for s in load_gsm8k_solutions(folder)]
    [('6b_finetuning', False, '6')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import ProofgamesError
from .parsers import parse_gsm8k
from .transcript import StepTranscript, TranscriptFormatError

SOLUTIONS_FILE = "example_model_solutions.jsonl"
MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


class DataError(ProofgamesError, ValueError):
    """A data file is missing or not in the expected format."""


@dataclass(frozen=True)
class GSM8KSolution:
    """One model-written solution with its label and parsed transcript."""

    index: int
    question: str
    model: str
    solution: str
    is_correct: bool
    transcript: StepTranscript | None
    parse_error: str = ""


def solutions_path(path: str | Path) -> Path:
    """The solutions file: ``path`` itself, or ``path/example_model_solutions.jsonl``."""
    p = Path(path)
    if p.is_dir():
        p = p / SOLUTIONS_FILE
    if not p.is_file():
        raise DataError(f"GSM8K model solutions not found at {p} (pass the file or its folder)")
    return p


def _record(line: str, n: int) -> dict[str, object]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"line {n}: not JSON ({exc.msg})") from None
    if not isinstance(row, dict) or not isinstance(row.get("question"), str):
        raise DataError(f"line {n}: a record needs a 'question' string")
    return row


def load_gsm8k_solutions(
    path: str | Path, limit: int | None = None, models: tuple[str, ...] = MODELS
) -> list[GSM8KSolution]:
    """Read up to ``limit`` questions' solutions by ``models``.

    Raises:
        DataError: The file is missing, or a record is malformed.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DataError(f"limit must be a positive int, not {limit!r}")
    out = []
    with solutions_path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if limit is not None and n > limit:
                break
            row = _record(line, n)
            for model in models:
                entry = row.get(model)
                if entry is None:
                    continue
                if not isinstance(entry, dict) or not isinstance(entry.get("solution"), str):
                    raise DataError(f"line {n}: {model} needs a 'solution' string")
                out.append(_solution(n - 1, str(row["question"]), model, entry))
    return out


def _solution(index: int, question: str, model: str, entry: dict[str, object]) -> GSM8KSolution:
    solution = str(entry["solution"])
    try:
        transcript: StepTranscript | None = parse_gsm8k(question, solution)
        error = ""
    except TranscriptFormatError as exc:
        transcript, error = None, str(exc)
    return GSM8KSolution(
        index, question, model, solution, bool(entry.get("is_correct")), transcript, error
    )
