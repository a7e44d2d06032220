"""The old import paths of the PVG modules that moved keep working, with a warning.

An old path warns when it is imported, and importing it leaves the alias in
``sys.modules``, on its parent package and in the new module's ``__spec__``; each test
imports it afresh and puts all three back afterwards (:func:`forgotten`).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest.importorskip("torch")

from proofgames._moved import MOVED

OLD_PVG = sorted(old for old in MOVED if old.startswith("proofgames.pvg."))


def test_every_moved_pvg_module_is_listed():
    assert OLD_PVG == [
        "proofgames.pvg.bec",
        "proofgames.pvg.cli",
        "proofgames.pvg.detectors",
        "proofgames.pvg.diagnostics",
        "proofgames.pvg.message_search",
        "proofgames.pvg.needle",
        "proofgames.pvg.plus_verifier",
        "proofgames.pvg.profiles",
        "proofgames.pvg.report",
        "proofgames.pvg.stability",
        "proofgames.pvg.start_gradient",
    ]


@contextmanager
def forgotten(old: str) -> Iterator[None]:
    """Import ``old`` as if for the first time in the block; leave no trace of it after."""
    new = importlib.import_module(MOVED[old])
    parent, _, leaf = old.rpartition(".")
    package = sys.modules[parent]
    saved = (sys.modules.pop(old, None), package.__dict__.get(leaf), new.__spec__)
    try:
        yield
    finally:
        module, attribute, spec = saved
        sys.modules.pop(old, None)
        if module is not None:
            sys.modules[old] = module
        package.__dict__.pop(leaf, None)
        if attribute is not None:
            setattr(package, leaf, attribute)
        new.__spec__ = spec


@pytest.mark.parametrize("old", OLD_PVG)
def test_an_old_module_path_imports_the_new_module_and_warns(old):
    with forgotten(old), pytest.warns(DeprecationWarning, match=re.escape(MOVED[old])) as caught:
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert len(caught) == 1


def test_the_old_find_the_plus_module_names_come_from_the_task_and_warn_once(monkeypatch):
    import proofgames.pvg.find_the_plus as research
    from proofgames.pvg.tasks import find_the_plus as task

    for name in ("FindThePlus", "PlusProver", "plus_mask"):  # as if never asked for
        monkeypatch.delitem(vars(research), name, raising=False)
    with pytest.warns(DeprecationWarning, match="proofgames.pvg.tasks.find_the_plus") as caught:
        from proofgames.pvg.find_the_plus import FindThePlus, PlusProver, plus_mask
        from proofgames.pvg.find_the_plus import FindThePlus as again
    assert (FindThePlus, PlusProver, plus_mask) == (
        task.FindThePlus,
        task.PlusProver,
        task.plus_mask,
    )
    assert again is FindThePlus and len(caught) == 3


def test_the_research_package_does_not_forward_other_names():
    import proofgames.pvg.find_the_plus as research

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        research.nothing  # noqa: B018
    # its own modules still import as submodules
    from proofgames.pvg.find_the_plus import stability

    assert stability.__name__ == "proofgames.pvg.find_the_plus.stability"


def test_the_old_reproduce_module_names_and_the_cli_app_keep_their_paths():
    import typer

    from proofgames.cli.pvg import app
    from proofgames.pvg.reproduce import BECTrace, reproduce, seed_jobs, summarize
    from proofgames.pvg.reproduce import reproduce as module

    assert isinstance(app, typer.Typer)
    assert callable(reproduce) and reproduce.__module__ == "proofgames.pvg.reproduce.reproduce"
    assert (BECTrace, seed_jobs, summarize) is not None and module is reproduce
