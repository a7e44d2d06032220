"""A study's design: what a rater reads, answers and is checked on, and in what order.

A rater goes through a study in stages (see :mod:`proofgames.judge.handout`):

1. **consent**: the consent text and the instructions (with a worked example), which
   the rater must accept before anything else;
2. **training**: every ``training`` question, each followed by its feedback (right or
   wrong, and the designer's explanation);
3. **qualification**: every ``qualification`` question, without feedback; a rater whose
   share of right answers is below ``pass_mark`` is not handed work (a study without
   qualification questions qualifies everyone);
4. **work**: the verifier's questions (``k`` raters each), with ``gold`` and
   ``attention`` questions (known answers) interleaved at ``gold_rate``, up to
   ``quota`` work answers, in the oldest-first or a per-rater random ``ordering``;
   with ``one_step_per_debate`` no rater sees two steps of the same debate.

Questions of the kinds other than ``work`` carry their ``expected`` answer and an
``explanation``; every rater answers each of them (they never close). A study is open
from ``starts_at`` to ``ends_at`` (either may be unset). With ``probability`` a rater
answers P(the step follows) and is scored on gold by the Brier rule.

Example:
    >>> design = Design(gold_rate=0.1, quota=40, ordering="random").checked()
    >>> design.quota, design.ordering
    (40, 'random')
    >>> Design(gold_rate=1.5).checked()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.judge.errors.BadInput: gold_rate must be a number from 0 to 0.5, not 1.5
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from .accounts import audit
from .errors import BadInput, readable
from .models import Study, User

KINDS = ("work", "gold", "attention", "training", "qualification")
"""The kinds of question; every kind but ``work`` has an expected answer."""
CHECKED_KINDS = ("gold", "attention")
"""The kinds interleaved with the work to check raters during it."""
ORDERINGS = ("oldest", "random")
MAX_TEXT = 20_000
MAX_GOLD_RATE = 0.5
"""At most every other work turn is a check (more would be a test, not a study)."""


def _fraction(name: str, value: object, top: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= top
    ):
        raise BadInput(f"{name} must be a number from 0 to {top:g}, not {value!r}")
    return float(value)


def _count(name: str, value: object, top: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise BadInput(f"{name} must be a whole number from 1 to {top:,} (or unset), not {value!r}")
    return value


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise BadInput(f"{name} must be text of at most {MAX_TEXT:,} characters")
    return readable(name, value)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise BadInput(f"{name} must be true or false, not {value!r}")
    return value


@dataclass(frozen=True)
class Design:
    """A study's design (the fields of :class:`~proofgames.judge.models.Study` it sets).

    Times are naive UTC, as the database stores them.
    """

    consent: str = ""
    instructions: str = ""
    gold_rate: float = 0.0
    pass_mark: float = 0.8
    quota: int | None = None
    one_step_per_debate: bool = False
    ordering: str = "oldest"
    probability: bool = False
    feedback: bool = True
    starts_at: dt.datetime | None = None
    ends_at: dt.datetime | None = None
    pay_cents_per_hour: int | None = None

    def checked(self) -> Design:
        """The design itself if every field is in range; else :class:`BadInput` naming one."""
        _text("consent", self.consent)
        _text("instructions", self.instructions)
        _fraction("gold_rate", self.gold_rate, MAX_GOLD_RATE)
        _fraction("pass_mark", self.pass_mark, 1.0)
        _count("quota", self.quota, 1_000_000)
        _flag("one_step_per_debate", self.one_step_per_debate)
        _flag("probability", self.probability)
        _flag("feedback", self.feedback)
        if self.ordering not in ORDERINGS:
            raise BadInput(f"ordering must be one of {', '.join(ORDERINGS)}, not {self.ordering!r}")
        _count("pay_cents_per_hour", self.pay_cents_per_hour, 1_000_000)
        for name in ("starts_at", "ends_at"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, dt.datetime) or value.tzinfo):
                raise BadInput(f"{name} must be a UTC time without a zone, or unset")
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise BadInput("ends_at must come after starts_at")
        return self

    @classmethod
    def of(cls, study: Study) -> Design:
        """The design a study has now."""
        return cls(**{f.name: getattr(study, f.name) for f in dataclasses.fields(cls)})


def set_design(db: Session, study: Study, actor: User | None = None, **changes: Any) -> Design:
    """Change some of a study's design (checked first: nothing changes on a bad field).

    Raises:
        BadInput: An unknown field, or a value out of range.
    """
    names = {f.name for f in dataclasses.fields(Design)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise BadInput(f"not a field of a study's design: {', '.join(unknown)}")
    design = dataclasses.replace(Design.of(study), **changes).checked()
    for name in changes:
        setattr(study, name, getattr(design, name))
    logged = {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in changes.items()}
    audit(db, actor, "design_study", study=study.id, **logged)
    db.commit()
    return design


def check_kind(kind: object, expected: object, explanation: object) -> tuple[str, bool | None, str]:
    """A question's kind, expected answer and explanation, checked together.

    A ``work`` question has no expected answer (the verifier does not know it); every
    other kind must have one.

    Example:
        >>> check_kind("gold", True, "7 * 5 is 35.")
        ('gold', True, '7 * 5 is 35.')
    """
    if kind not in KINDS:
        raise BadInput(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "work" and expected is not None:
        raise BadInput("a work question has no expected answer (only the raters know it)")
    if kind != "work" and not isinstance(expected, bool):
        raise BadInput(f"a {kind} question needs its expected answer, true or false")
    answer = expected if isinstance(expected, bool) else None
    return str(kind), answer, _text("explanation", explanation)


def is_open(study: Study, now: dt.datetime) -> str | None:
    """Why the study takes no answers at ``now`` (naive UTC), or None if it is open."""
    if study.starts_at is not None and now < study.starts_at:
        return f"this study opens at {study.starts_at:%Y-%m-%d %H:%M} UTC"
    if study.ends_at is not None and now >= study.ends_at:
        return f"this study ended at {study.ends_at:%Y-%m-%d %H:%M} UTC"
    return None
