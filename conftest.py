"""Session-wide pytest configuration: skip doctests of subpackages whose extras are missing.

The PyTorch subpackage needs torch; the judge server needs the ``judge`` extra; Alembic
runs the judge's migration scripts itself (importing ``env.py`` outside Alembic fails).
"""

import importlib.util

# Every module of proofgames.pvg, its subpackages (tasks/, find_the_plus/, ...) included:
# pytest matches these globs with fnmatch, whose * also matches "/".
collect_ignore_glob = [] if importlib.util.find_spec("torch") else ["src/proofgames/pvg/*"]
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
collect_ignore_glob.append("src/proofgames/judge/migrations/*")
if not all(importlib.util.find_spec(m) for m in ("fastapi", "sqlalchemy", "alembic", "argon2")):
    collect_ignore_glob += ["src/proofgames/judge/*", "tests/judge_support.py"]
