"""The judge server's first schema: accounts, studies, questions, answers, audit log.

Revision ID: 0001
Revises:
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.Integer(), primary_key=True)


def _accounts() -> None:
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )
    op.create_table(
        "users",
        _id(),
        sa.Column("email", sa.String(254), nullable=False, unique=True),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
    )
    op.create_table(
        "login_failures",
        _id(),
        sa.Column("key", sa.String(300), nullable=False, index=True),
        sa.Column("at", sa.DateTime(), nullable=False, index=True),
    )
    op.create_table(
        "api_tokens",
        _id(),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )


def _studies() -> None:
    op.create_table(
        "studies",
        _id(),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "memberships",
        _id(),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.UniqueConstraint("study_id", "user_id"),
    )
    op.create_table(
        "invitations",
        _id(),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
    )


def _questions() -> None:
    op.create_table(
        "questions",
        _id(),
        sa.Column("study_id", sa.Integer(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("debate_id", sa.String(200), nullable=False),
        sa.Column("question_id", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("n_answers", sa.Integer(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("closed_at", sa.DateTime(), nullable=True),
        sa.UniqueConstraint("study_id", "debate_id", "question_id"),
    )
    op.create_table(
        "assignments",
        _id(),
        sa.Column(
            "question_pk", sa.Integer(), sa.ForeignKey("questions.id"), nullable=False, index=True
        ),
        sa.Column("rater_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("question_pk", "rater_id"),
    )
    op.create_table(
        "answers",
        _id(),
        sa.Column(
            "assignment_id",
            sa.Integer(),
            sa.ForeignKey("assignments.id"),
            nullable=False,
            unique=True,
        ),
        sa.Column(
            "question_pk", sa.Integer(), sa.ForeignKey("questions.id"), nullable=False, index=True
        ),
        sa.Column("rater_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("yes", sa.Boolean(), nullable=False),
        sa.Column("confidence", sa.Integer(), nullable=False),
        sa.Column("elapsed_ms", sa.Integer(), nullable=True),
        sa.Column("shown_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "audit_log",
        _id(),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=True),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
    )


def upgrade() -> None:
    """Create every table."""
    _accounts()
    _studies()
    _questions()


def downgrade() -> None:
    """Drop every table, dependants first."""
    for table in (
        "audit_log",
        "answers",
        "assignments",
        "questions",
        "invitations",
        "memberships",
        "studies",
        "api_tokens",
        "login_failures",
        "web_sessions",
        "users",
        "server_secrets",
    ):
        op.drop_table(table)
