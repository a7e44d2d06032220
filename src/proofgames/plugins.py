"""Protocols, strategies and instance kinds from outside proofgames: plugin modules.

A module that calls :func:`~proofgames.protocols.register_protocol`,
:func:`~proofgames.strategies.register_strategy` or
:func:`~proofgames.instances.register_instance_kind` is a *plugin*.  Importing it is
enough in the process that imports it.  Other processes find plugins three ways:

* a prover's own process (``isolation="process"``) gets every plugin its parent had
  registered, automatically: :func:`child_environment` names them in
  ``PROOFGAMES_PLUGINS`` and puts their folders on ``PYTHONPATH``;
* an installed package declares its module in the ``proofgames.plugins`` entry-point
  group;
* anything else (a Dask worker, a shell) sets ``PROOFGAMES_PLUGINS=pkg.mod,other.mod``.

:func:`load` imports both lists; the party runner and the command line call it at start.
A protocol defined in a script's ``__main__`` cannot be imported by another process: put
it in a module.

Example:
    >>> env = child_environment({}, ["proofgames.intervals"])
    >>> env["PROOFGAMES_PLUGINS"]
    'proofgames.intervals'
    >>> load(env) == ["proofgames.intervals"]
    True
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path

from .errors import ProofgamesError

ENV = "PROOFGAMES_PLUGINS"
GROUP = "proofgames.plugins"

#: Modules outside proofgames that registered something in this process.
_REGISTERED: dict[str, None] = {}


def note(obj: object) -> None:
    """Remember the module that defined ``obj`` when it is not part of proofgames."""
    module = getattr(obj, "__module__", None)
    if type(module) is str and module != "__main__" and module.split(".")[0] != "proofgames":
        _REGISTERED[module] = None


def registered() -> list[str]:
    """Plugin modules that registered something in this process, in order."""
    return list(_REGISTERED)


def _root(module: str) -> str | None:
    """The folder from which ``module`` is imported (its top package's parent)."""
    mod = sys.modules.get(module)
    file = getattr(mod, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve().parent
    depth = module.count(".") + (Path(file).name == "__init__.py")
    for _ in range(depth):
        path = path.parent
    return str(path)


def child_environment(
    env: Mapping[str, str], modules: Iterable[str] | None = None
) -> dict[str, str]:
    """``env`` for a new Python process that must import ``modules`` (default: every plugin).

    ``PROOFGAMES_PLUGINS`` lists them after any already named there, and ``PYTHONPATH``
    gains the folders they are imported from.
    """
    names = registered() if modules is None else list(modules)
    out = dict(env)
    listed = [m for m in out.get(ENV, "").split(",") if m]
    out[ENV] = ",".join(dict.fromkeys(listed + names))
    roots = [r for r in map(_root, names) if r]
    if roots:
        old = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
        out["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(roots + old))
    return out


def for_workers() -> tuple[list[str], list[str]]:
    """``(modules, folders)``: what a worker process must import, and where they are found.

    A pool's worker started fresh (``spawn``) knows none of the plugins registered here;
    :func:`import_in_worker` imports them there.
    """
    names = registered()
    return names, [r for r in map(_root, names) if r]


def import_in_worker(modules: Iterable[str], folders: Iterable[str]) -> None:
    """In a worker process: put ``folders`` on ``sys.path`` and import ``modules``."""
    for folder in folders:
        if folder not in sys.path:
            sys.path.insert(0, folder)
    for name in modules:
        importlib.import_module(name)


def load(env: Mapping[str, str] | None = None) -> list[str]:
    """Import the plugins named in ``PROOFGAMES_PLUGINS`` and the entry-point group.

    Returns:
        The modules imported (or already imported), in order.

    Raises:
        ProofgamesError: a named module cannot be imported (the error says which).
    """
    environ = os.environ if env is None else env
    names = [m.strip() for m in environ.get(ENV, "").split(",") if m.strip()]
    names += [ep.module for ep in entry_points(group=GROUP)]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise ProofgamesError(
                f"plugin {name!r} (from {ENV} or the {GROUP!r} entry points) could not be "
                f"imported: {type(exc).__name__}: {exc}"
            ) from None
    return names
