"""The judge server's database: migrations match the models, both ways; bad URLs refused."""

from __future__ import annotations

import pytest

pytest.importorskip("alembic")
pytest.importorskip("sqlalchemy")

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from proofgames.errors import ConfigurationError
from proofgames.judge.db import MIGRATIONS, current_revision, make_engine, migrate
from proofgames.judge.models import Base


def test_the_migrations_build_exactly_the_models(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'j.db'}")
    migrate(engine)
    migrate(engine)  # a second start changes nothing
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_the_migration_downgrades_to_an_empty_database(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'j.db'}")
    migrate(engine)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
    assert current_revision(engine) is None
    assert inspect(engine).get_table_names() == ["alembic_version"]


@pytest.mark.parametrize(
    ("url", "words"),
    [("not a url", "malformed"), ("mysql://u@h/d", "unsupported database 'mysql'")],
)
def test_a_bad_database_url_is_refused_by_name(url, words):
    with pytest.raises(ConfigurationError, match=words):
        make_engine(url)
