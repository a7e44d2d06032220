"""What a real study needs: its design, gold questions, phases, richer answers, revocation.

* ``studies``: consent and instructions, the gold rate, the qualification's pass mark,
  a quota per rater, one step per debate, the order questions are handed out in (``ordering``),
  whether answers are probabilities, whether gold feedback is shown, start and end
  dates, and the pay rate for the payment export;
* ``questions``: their kind (work, gold, attention, training, qualification), the
  expected answer of the non-work kinds, the feedback shown after them, and a random
  key for the randomised order;
* ``memberships``: when the rater consented and when they were deactivated;
* ``answers``: "can't tell" (``yes`` is null), a probability, a free-text rationale;
* ``api_tokens`` and ``invitations``: when they were revoked; ``users``: when disabled.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_NULLABLE_TIMES = {
    "memberships": ("consented_at", "deactivated_at"),
    "api_tokens": ("revoked_at",),
    "invitations": ("revoked_at",),
    "users": ("disabled_at",),
}


def _studies() -> None:
    columns: list[sa.Column[object]] = [
        sa.Column("consent", sa.Text(), nullable=False, server_default=""),
        sa.Column("instructions", sa.Text(), nullable=False, server_default=""),
        sa.Column("gold_rate", sa.Float(), nullable=False, server_default="0"),
        sa.Column("pass_mark", sa.Float(), nullable=False, server_default="0.8"),
        sa.Column("quota", sa.Integer(), nullable=True),
        sa.Column("one_step_per_debate", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("ordering", sa.String(10), nullable=False, server_default="oldest"),
        sa.Column("probability", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("feedback", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("starts_at", sa.DateTime(), nullable=True),
        sa.Column("ends_at", sa.DateTime(), nullable=True),
        sa.Column("pay_cents_per_hour", sa.Integer(), nullable=True),
    ]
    with op.batch_alter_table("studies") as table:
        for column in columns:
            table.add_column(column)


def _questions_and_answers() -> None:
    with op.batch_alter_table("questions") as table:
        table.add_column(sa.Column("kind", sa.String(14), nullable=False, server_default="work"))
        table.add_column(sa.Column("expected", sa.Boolean(), nullable=True))
        table.add_column(sa.Column("explanation", sa.Text(), nullable=False, server_default=""))
        table.add_column(sa.Column("shuffle", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_questions_study_kind", "questions", ["study_id", "kind"])
    with op.batch_alter_table("answers") as table:
        table.alter_column("yes", existing_type=sa.Boolean(), nullable=True)
        table.add_column(sa.Column("probability", sa.Float(), nullable=True))
        table.add_column(sa.Column("rationale", sa.Text(), nullable=False, server_default=""))


def upgrade() -> None:
    """Add the study design, question kinds, answer fields and revocation times."""
    _studies()
    _questions_and_answers()
    for name, columns in _NULLABLE_TIMES.items():
        with op.batch_alter_table(name) as table:
            for column in columns:
                table.add_column(sa.Column(column, sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop what :func:`upgrade` added (a can't-tell answer must be gone first)."""
    for name, columns in _NULLABLE_TIMES.items():
        with op.batch_alter_table(name) as table:
            for column in columns:
                table.drop_column(column)
    with op.batch_alter_table("answers") as table:
        table.drop_column("rationale")
        table.drop_column("probability")
        table.alter_column("yes", existing_type=sa.Boolean(), nullable=False)
    op.drop_index("ix_questions_study_kind", "questions")
    with op.batch_alter_table("questions") as table:
        for column in ("shuffle", "explanation", "expected", "kind"):
            table.drop_column(column)
    with op.batch_alter_table("studies") as table:
        for column in (
            "pay_cents_per_hour", "ends_at", "starts_at", "feedback", "probability", "ordering",
            "one_step_per_debate", "quota", "pass_mark", "gold_rate", "instructions", "consent",
        ):  # fmt: skip
            table.drop_column(column)
