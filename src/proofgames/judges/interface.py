"""Step judges: the oracle interface for judgements about one step of an argument.

In doubly-efficient debate the verifier's oracle stands for human judgement. On
natural-language arguments it is asked one kind of question: *does this step follow
from the inputs shown?* A :class:`StepQuestion` holds exactly what the judge may see
(the part of the task the step uses, the texts of the earlier steps it relies on, and
the step itself) and nothing else, so a judge never reads the whole argument.

Every judge, whether a language model, a calculator, a scripted judge with a set error
rate or a panel of people answering through the judge server, implements
:class:`StepJudge`: an ``async`` method that returns a :class:`Judgement`. A judgement
carries P[yes] (0 or 1 for a deterministic judge; an estimate for a stochastic one,
e.g. from log-probabilities or from k raters) and its costs, so the ledger can count
judge calls, tokens read and human judgements separately.

Schema (plain data; :meth:`StepQuestion.to_dict` / :meth:`from_dict` round-trip it):

=================  ==========================================================
field              meaning
=================  ==========================================================
``task``           the part of the task statement the step uses (str)
``premises``       texts of the earlier steps in the step's relevant set (list)
``step``           the disputed step's text, with its claimed result (str)
``prompt``         the question put to the judge (str)
``question_id``    a stable id: SHA-256 of the canonical JSON of the above
=================  ==========================================================

Example:
    >>> q = StepQuestion(task="Tom has 3 apples.", premises=("He buys 2 more.",),
    ...                  step="So he has 3 + 2 = 5 apples.")
    >>> StepQuestion.from_dict(q.to_dict()) == q
    True
    >>> len(q.question_id)
    64
    >>> Judgement(p_yes=1.0, calls=1).verdict
    True
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from ..errors import OracleError

DEFAULT_PROMPT = "Does this step follow from the inputs shown?"
MAX_TEXT_CHARS = 20_000
"""The longest text a question may hold in any one field (a judge reads one step)."""

JudgeKind = Literal["model", "calculator", "scripted", "human"]


#: Unicode categories a reader cannot see, or that reorder what it sees: controls (but
#: tab, newline, carriage return), format characters (zero-width, bidirectional
#: overrides), surrogates, private use, unassigned, line and paragraph separators.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def unreadable_character(text: str) -> str | None:
    """The first character of ``text`` a judge would read differently from V; ``None`` if none.

    A character of :data:`HIDDEN_CATEGORIES`, or a digit other than ASCII ``0``-``9``
    (fullwidth, Arabic-Indic, superscript, mathematical bold: it looks like a number that
    no calculator reads as one). Such text would show a person or a model something other
    than what V checks and records: a question, and a prover's message, may not hold it.

    Example:
        >>> unreadable_character("So 7 * 5 = 35.") is None
        True
        >>> unreadable_character("So 7 * 5 = \u202e53\u202c.")
        'U+202E (RIGHT-TO-LEFT OVERRIDE) at position 12'
        >>> unreadable_character("x = \uff13")
        'U+FF13 (FULLWIDTH DIGIT THREE) at position 5'
    """
    if text.isascii() and text.isprintable():  # the fast path
        return None
    for i, ch in enumerate(text):
        if ch in "\t\n\r":
            continue
        category = unicodedata.category(ch)
        if category in HIDDEN_CATEGORIES or (
            not ch.isascii() and unicodedata.digit(ch, None) is not None
        ):
            return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')}) at position {i + 1}"
    return None


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise OracleError(f"step question field {name!r} must be a string, not {value!r}")
    if len(value) > MAX_TEXT_CHARS:
        raise OracleError(
            f"step question field {name!r} holds {len(value):,} characters; "
            f"the limit is {MAX_TEXT_CHARS:,}"
        )
    hidden = unreadable_character(value)
    if hidden is not None:
        raise OracleError(
            f"step question field {name!r} has an invisible, control or look-alike "
            f"character {hidden}"
        )
    return value


@dataclass(frozen=True)
class StepQuestion:
    """What a judge is shown: one step, its inputs, and the question.

    Args:
        task: The part of the task statement that the step uses.
        premises: Texts of the earlier steps in the step's relevant set, in order.
        step: The disputed step, with its claimed result.
        prompt: The question put to the judge.
    """

    task: str
    premises: tuple[str, ...]
    step: str
    prompt: str = DEFAULT_PROMPT
    question_id: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        _check_text("task", self.task)
        _check_text("step", self.step)
        _check_text("prompt", self.prompt)
        if not isinstance(self.premises, tuple):
            raise OracleError(f"step question premises must be a tuple, not {self.premises!r}")
        for i, premise in enumerate(self.premises):
            _check_text(f"premises[{i}]", premise)
        canonical = json.dumps(self._content(), sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        object.__setattr__(self, "question_id", digest)

    def _content(self) -> dict[str, object]:
        return {
            "task": self.task,
            "premises": list(self.premises),
            "step": self.step,
            "prompt": self.prompt,
        }

    def to_dict(self) -> dict[str, object]:
        """Return the question as plain JSON data (with its ``question_id``)."""
        return {**self._content(), "question_id": self.question_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> StepQuestion:
        """Rebuild a question from :meth:`to_dict` data, checking every field.

        Raises:
            OracleError: A field is missing, of the wrong type, too long, or the given
                ``question_id`` does not match the content.
        """
        if not isinstance(data, Mapping):
            raise OracleError(f"a step question must be a JSON object, not {data!r}")
        unknown = set(data) - {"task", "premises", "step", "prompt", "question_id"}
        if unknown:
            raise OracleError(f"step question has unknown fields {sorted(unknown)}")
        for key in ("task", "premises", "step"):
            if key not in data:
                raise OracleError(f"step question is missing {key!r}")
        premises = data["premises"]
        if not isinstance(premises, list):
            raise OracleError(f"step question premises must be a list, not {premises!r}")
        prompt = data.get("prompt", DEFAULT_PROMPT)
        question = cls(
            task=_check_text("task", data["task"]),
            premises=tuple(premises),
            step=_check_text("step", data["step"]),
            prompt=_check_text("prompt", prompt),
        )
        given = data.get("question_id")
        if given is not None and given != question.question_id:
            raise OracleError("step question_id does not match its content")
        return question


@dataclass(frozen=True)
class Judgement:
    """A judge's answer to one :class:`StepQuestion`, with its costs.

    Args:
        p_yes: P[the step follows]: 0.0 or 1.0 from a deterministic judge; an estimate
            in [0, 1] from a stochastic one (log-probabilities, or k raters' answers).
        calls: Judge calls spent (model requests, or human answers collected).
        human_judgements: How many of those calls were people's answers.
        input_tokens: Tokens the judge read (what a person would have to read).
        output_tokens: Tokens the judge wrote.
        cost_usd: Money, where the provider reports it.
        detail: Free-form provenance (model name, rater ids, raw answer), plain data.
    """

    p_yes: float
    calls: int = 1
    human_judgements: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    detail: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        p = self.p_yes
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p):
            raise OracleError(f"a judgement's p_yes must be a finite number, not {p!r}")
        if not 0.0 <= p <= 1.0:
            raise OracleError(f"a judgement's p_yes must lie in [0, 1], not {p!r}")
        for name in ("calls", "human_judgements", "input_tokens", "output_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise OracleError(f"a judgement's {name} must be an int >= 0, not {value!r}")
        if self.human_judgements > self.calls:
            raise OracleError("a judgement cannot hold more human judgements than calls")

    @property
    def verdict(self) -> bool:
        """True when the judge more likely says the step follows (p_yes > 1/2)."""
        return self.p_yes > 0.5


@runtime_checkable
class StepJudge(Protocol):
    """Anything that judges single steps: a model, a calculator, a script, people."""

    name: str
    kind: JudgeKind

    async def judge(self, question: StepQuestion) -> Judgement:
        """Answer one question. Raising means the judge failed (never a verdict)."""
        ...


class JudgeFailed(OracleError):
    """The judge failed (not a verdict): the run stops as ``"judge"``; the message says why."""
