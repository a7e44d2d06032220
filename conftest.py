"""Session-wide pytest configuration: opt-in markers, and doctests of missing extras skipped.

The ``browser`` and ``postgres`` tests need Debian's Chromium and PostgreSQL: they run
only when the ``-m`` expression names them (``pytest -m 'browser or postgres'``), so
``pytest`` and the quick loop ``pytest -m "not slow" -n 2`` leave them out alike.

The PyTorch subpackage needs torch; the judge server needs the ``judge`` extra;
the OpenSpiel and PettingZoo adapters need the ``selfplay`` extra; Alembic
runs the judge's migration scripts itself (importing ``env.py`` outside Alembic fails).
"""

import importlib.util

import pytest

OPT_IN = ("browser", "postgres")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the opt-in markers' tests unless the ``-m`` expression names them."""
    expression = config.getoption("markexpr") or ""
    left_out = [m for m in OPT_IN if m not in expression]
    dropped = [i for i in items if any(i.get_closest_marker(m) for m in left_out)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(dropped)
        items[:] = [i for i in items if i not in gone]


# Every module of proofgames.pvg, its subpackages (tasks/, find_the_plus/, ...) included,
# and the pvg commands' modules (the package itself imports no torch):
# pytest matches these globs with fnmatch, whose * also matches "/".
collect_ignore_glob = (
    []
    if importlib.util.find_spec("torch")
    else ["src/proofgames/pvg/*", "src/proofgames/cli/pvg/_*"]
)
if not importlib.util.find_spec("inspect_ai"):  # the 'language' extra
    collect_ignore_glob += [
        f"src/proofgames/language/{m}.py"
        for m in (
            "model_judge",
            "model_provers",
            "inspect_tasks",
            "local_model",
            "_inspect_registry",
        )
    ]
collect_ignore_glob += [  # the 'selfplay' extra: each adapter needs its library
    f"src/proofgames/selfplay/{module}.py"
    for module, needs in (("openspiel", "pyspiel"), ("pettingzoo", "pettingzoo"))
    if not importlib.util.find_spec(needs)
]
collect_ignore_glob.append("src/proofgames/judge/migrations/*")
if not all(importlib.util.find_spec(m) for m in ("fastapi", "sqlalchemy", "alembic", "argon2")):
    collect_ignore_glob += ["src/proofgames/judge/*", "tests/judge/judge_support.py"]
# A plugin that registers stalling provers: loaded by the interrupt tests' subprocesses
# only (importing it for its doctests would register them in the session's registry).
collect_ignore_glob.append("tests/cli/slow_party.py")
