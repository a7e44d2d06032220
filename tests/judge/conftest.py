"""The judge tests' shared fixture: an app on a fresh SQLite file, k = 1."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def judge(tmp_path: Any) -> Any:
    """A :class:`Judge` (admin, study with k = 1, API token) on ``tmp_path/judge.db``.

    A test file that needs another k or other settings defines its own ``judge``.
    """
    pytest.importorskip("fastapi")
    from .judge_support import Judge

    return Judge(f"sqlite:///{tmp_path / 'judge.db'}", k=1)
