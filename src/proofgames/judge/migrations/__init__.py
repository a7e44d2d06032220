"""Alembic migrations of the judge server's database (run by :func:`..db.migrate`)."""
