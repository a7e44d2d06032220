"""Old import paths of modules that moved, kept working for one release (deprecated).

A module that moves leaves one line in :data:`MOVED`: its old dotted name and its new
one.  Importing the old name gives the new module itself (the same object, so classes,
registries and ``isinstance`` checks agree) and warns once with a
:class:`DeprecationWarning` that names the new path.  The aliases go in the release after
the move.

Example:
    >>> import importlib, warnings
    >>> MOVED["proofgames._moved_example"] = "proofgames.intervals"
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = importlib.import_module("proofgames._moved_example")
    >>> old is importlib.import_module("proofgames.intervals")
    True
    >>> "proofgames.intervals" in str(caught[0].message)
    True
    >>> del MOVED["proofgames._moved_example"]
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

#: ``{old dotted name: new dotted name}`` of every module that moved in this release.
MOVED: dict[str, str] = {}


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module now at the new one."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed under its new name."""


class _MovedFinder(importlib.abc.MetaPathFinder):
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
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the normal finders)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
