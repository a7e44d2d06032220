"""Old import paths of modules that moved, kept working for one release (deprecated).

A module that moves leaves one line in :data:`MOVED`: its old dotted name and its new
one.  Importing the old name gives the new module itself (the same object, so classes,
registries and ``isinstance`` checks agree) and warns once with a
:class:`DeprecationWarning` that names the new path.  The aliases go in the release after
the move.

Example:
    >>> import importlib, warnings
    >>> MOVED["proofgames._moved_example"] = "proofgames.errors"
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = importlib.import_module("proofgames._moved_example")
    >>> old is importlib.import_module("proofgames.errors")
    True
    >>> "proofgames.errors" in str(caught[0].message)
    True
    >>> old.__spec__.name
    'proofgames.errors'

    >>> del MOVED["proofgames._moved_example"]
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

#: ``{old dotted name: new dotted name}`` of every module that moved in this release.
MOVED: dict[str, str] = {
    # proofgames.pvg (proofgames.pvg.find_the_plus and proofgames.pvg.reproduce, once
    # modules, are packages now: they keep their old public names themselves)
    "proofgames.pvg.bec": "proofgames.pvg.tasks.bec",
    "proofgames.pvg.needle": "proofgames.pvg.tasks.needle",
    "proofgames.pvg.plus_verifier": "proofgames.pvg.tasks.plus_verifier",
    "proofgames.pvg.detectors": "proofgames.pvg.find_the_plus.detectors",
    "proofgames.pvg.diagnostics": "proofgames.pvg.find_the_plus.diagnostics",
    "proofgames.pvg.message_search": "proofgames.pvg.find_the_plus.message_search",
    "proofgames.pvg.stability": "proofgames.pvg.find_the_plus.stability",
    "proofgames.pvg.start_gradient": "proofgames.pvg.find_the_plus.start_gradient",
    "proofgames.pvg.profiles": "proofgames.pvg.reproduce.profiles",
    "proofgames.pvg.report": "proofgames.pvg.reproduce.report",
    # the pvg commands, with the rest of the command line (proofgames.cli is the top layer)
    "proofgames.pvg.cli": "proofgames.cli.pvg",
    # the stochastic experiments, above protocols/ (proofgames.experiments)
    "proofgames.stochastic.montecarlo": "proofgames.experiments.montecarlo",
    "proofgames.stochastic.report": "proofgames.experiments.stochastic_report",
    "proofgames.stochastic.params_report": "proofgames.experiments.params_report",
    # exact analysis and sweeps in their own packages
    "proofgames.exhaustive": "proofgames.analysis.exhaustive",
    "proofgames.intervals": "proofgames.analysis.intervals",
    "proofgames.executors": "proofgames.sweeps.executors",
    # every step judge in one package (issue 35): the interface, and each judge
    "proofgames.judging": "proofgames.judges.interface",
    "proofgames.language.judges": "proofgames.judges",
    "proofgames.language.model_judge": "proofgames.judges.model",
    "proofgames.judge.human": "proofgames.judges.human",
}


class _Alias:
    """Loads an old name as the module now at the new one."""

    def __init__(self, new: str) -> None:
        self.new = new
        self._spec: object = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module ran under its new name); keep its own spec."""
        module.__spec__ = self._spec  # type: ignore[assignment]


class _MovedFinder:
    """Finds the old names listed in :data:`MOVED` (and nothing else)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))  # type: ignore[arg-type]


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the normal finders)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
