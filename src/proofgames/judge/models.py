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
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
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


class Study(Base):
    """A set of questions answered by its raters, ``k`` answers per question by default."""

    __tablename__ = "studies"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    k: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class Membership(Base):
    """A rater's place in a study."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("study_id", "user_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))


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


class Question(Base):
    """One step question of one debate, posted by the verifier through the API."""

    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("study_id", "debate_id", "question_id"),)
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


class Assignment(Base):
    """A question handed to one rater; only that rater may read or answer it."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("question_pk", "rater_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_pk: Mapped[int] = mapped_column(ForeignKey("questions.id"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    skipped_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Answer(Base):
    """A rater's answer: yes/no with a confidence, and the hash of what they were shown."""

    __tablename__ = "answers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), unique=True)
    question_pk: Mapped[int] = mapped_column(ForeignKey("questions.id"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    yes: Mapped[bool] = mapped_column(Boolean)
    confidence: Mapped[int] = mapped_column(Integer)
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
