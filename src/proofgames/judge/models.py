"""The judge server's tables (SQLAlchemy 2 declarative models).

The schema is created and changed only by the Alembic migrations under
``migrations/versions``; these classes describe it for queries. Invariants that must
hold under concurrent writers live in the database itself:

* one answer per assignment (``answers.assignment_id`` is unique), one assignment per
  (question, rater), one question per (study, debate, question id);
* a question's ``n_answers`` only grows through a conditional ``UPDATE ... WHERE
  n_answers < k``, so it never passes ``k`` (see :mod:`proofgames.judge.service`).

Example:
    >>> sorted(Base.metadata.tables)[:3]
    ['answers', 'api_tokens', 'assignments']
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> dt.datetime:
    """The current time in UTC, without tzinfo (how every timestamp is stored)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base of every judge-server table."""


class ServerSecret(Base):
    """The server's signing key, made once and kept with the data (restarts keep sessions)."""

    __tablename__ = "server_secrets"
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class User(Base):
    """An admin or a rater; passwords are stored only as argon2 hashes."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    role: Mapped[str] = mapped_column(String(10))  # "admin" | "rater"
    password_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    disabled_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class WebSession(Base):
    """A login: the cookie holds its signed id; logging out revokes it."""

    __tablename__ = "web_sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class LoginFailure(Base):
    """One failed login, by key (``ip:...`` or ``email:...``), for rate limiting."""

    __tablename__ = "login_failures"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(300), index=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, index=True)


class ApiToken(Base):
    """A bearer token for the HTTP API (stored as its SHA-256), owned by an admin."""

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    label: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Study(Base):
    """A set of questions answered by its raters, ``k`` answers per question by default.

    Its design (see :mod:`proofgames.judge.design`): the consent text and instructions
    a rater reads first; ``gold_rate``, the share of work turns that serve a gold or
    attention question; ``pass_mark``, the share of qualification questions a rater must
    get right; ``quota``, the most work answers per rater; ``one_step_per_debate``;
    ``ordering`` (``"oldest"`` or ``"random"``, a different order per rater);
    ``probability`` (answers are P(yes), scored by the Brier rule); ``feedback`` (show
    gold feedback during the work); the dates it is open; the pay rate for the export.
    """

    __tablename__ = "studies"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    k: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    consent: Mapped[str] = mapped_column(Text, default="")
    instructions: Mapped[str] = mapped_column(Text, default="")
    gold_rate: Mapped[float] = mapped_column(Float, default=0.0)
    pass_mark: Mapped[float] = mapped_column(Float, default=0.8)
    quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    one_step_per_debate: Mapped[bool] = mapped_column(Boolean, default=False)
    ordering: Mapped[str] = mapped_column(String(10), default="oldest")
    probability: Mapped[bool] = mapped_column(Boolean, default=False)
    feedback: Mapped[bool] = mapped_column(Boolean, default=True)
    starts_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    ends_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    pay_cents_per_hour: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Membership(Base):
    """A rater's place in a study, and their progress in it.

    ``n_training``, ``n_qualification`` and ``n_work`` count the rater's answers to the
    study's questions of each kind (``right_qualification``: those equal to the expected
    answer); they grow in the transaction that stores each answer.
    """

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("study_id", "user_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    consented_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    deactivated_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    # the rater's progress, counted as each answer is stored (in the answer's transaction)
    n_training: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    n_qualification: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    right_qualification: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    n_work: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Invitation(Base):
    """A one-use invitation to join a study as a rater (stored as the token's SHA-256)."""

    __tablename__ = "invitations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str] = mapped_column(String(254))
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Question(Base):
    """One step question of one debate, posted by the verifier through the API.

    ``kind`` is ``"work"`` (the verifier's question, answered by k raters) or one the
    study's designer posts with its ``expected`` answer and the ``explanation`` shown
    as feedback: ``"gold"`` and ``"attention"`` (interleaved with the work),
    ``"training"`` (answered first, with feedback) and ``"qualification"`` (answered
    before the work; the rater must reach the study's pass mark). ``shuffle`` is a
    random key for the randomised order.
    """

    __tablename__ = "questions"
    __table_args__ = (
        UniqueConstraint("study_id", "debate_id", "question_id"),
        Index("ix_questions_study_kind_closed", "study_id", "kind", "closed"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"))
    debate_id: Mapped[str] = mapped_column(String(200))
    question_id: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    k: Mapped[int] = mapped_column(Integer)
    n_answers: Mapped[int] = mapped_column(Integer, default=0)
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    closed_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    kind: Mapped[str] = mapped_column(String(14), default="work")
    expected: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    explanation: Mapped[str] = mapped_column(Text, default="")
    shuffle: Mapped[int] = mapped_column(Integer, default=0)


class Assignment(Base):
    """A question handed to one rater; only that rater may read or answer it.

    ``done``: answered or skipped (set in that transaction), so a rater's open
    assignment is found without walking the ones they finished.
    """

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("question_pk", "rater_id"),
        Index("ix_assignments_rater_done", "rater_id", "done"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_pk: Mapped[int] = mapped_column(ForeignKey("questions.id"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    skipped_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    done: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Answer(Base):
    """A rater's answer and the hash of what they were shown.

    ``yes`` is null for "can't tell" (which takes no slot: the question stays open for
    others). ``probability`` is the rater's P(yes) in a probability study; ``rationale``
    their optional free text.
    """

    __tablename__ = "answers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), unique=True)
    question_pk: Mapped[int] = mapped_column(ForeignKey("questions.id"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    yes: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    confidence: Mapped[int] = mapped_column(Integer)
    probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    rationale: Mapped[str] = mapped_column(Text, default="")
    elapsed_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    shown_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class AuditEntry(Base):
    """Who did what and when; an answer's entry holds exactly what the rater was shown."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    note: Mapped[str] = mapped_column(Text, default="")
