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

:func:`load` imports both lists. Scanning the installed packages' entry points costs every
process about 15 ms, so it waits until it can matter: the command line and the party
runner import the modules ``PROOFGAMES_PLUGINS`` names at start (:func:`load_if_named`,
which loads both lists when that variable names any), and otherwise every registry loads
both lists, once per process (:func:`ensure_loaded`), the first time a name is not found
in it or its names are listed. A plugin that cannot be imported is then a clear error at
that lookup.
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

import functools
import importlib
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import ProofgamesError

ENV = "PROOFGAMES_PLUGINS"
GROUP = "proofgames.plugins"

#: Modules outside proofgames that registered something in this process.
_REGISTERED: dict[str, None] = {}
#: Whether this process has loaded its plugins (:func:`ensure_loaded`).
_LOADED = False
#: Held while they load: a second thread's lookup waits for them; the loading thread's own
#: lookups (a plugin's import looking a name up) pass, as the lock is re-entrant.
_LOADING = threading.RLock()


def note(obj: object) -> None:
    """Remember the module that defined ``obj`` when it is not part of proofgames.

    A ``functools.partial`` is its function's (its own ``__module__`` is ``functools``).

    Example:
        >>> import functools
        >>> note(functools.partial(registered))  # proofgames' own: nothing to note
        >>> "functools" in registered()
        False
    """
    while isinstance(obj, functools.partial):
        obj = obj.func
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
    from importlib.metadata import entry_points  # about 10 ms: only when plugins load

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


def ensure_loaded() -> bool:
    """Load this process's plugins (:func:`load`) unless that has been done or begun.

    Registries call it when a name is not found and before listing names. Another thread's
    lookup waits until the plugins have loaded. The flag is set before loading, so a
    plugin that looks a name up while it is imported does not load the plugins again; a
    failed load clears it and raises, and the next lookup tries again.

    Returns:
        Whether the plugins were loaded by this call (then a lookup that missed may retry).

    Raises:
        ProofgamesError: a plugin cannot be imported (see :func:`load`).

    Example:
        >>> _ = ensure_loaded()
        >>> ensure_loaded()  # once loaded, not again
        False
    """
    global _LOADED
    with _LOADING:
        if _LOADED:
            return False
        _LOADED = True
        try:
            load()
        except BaseException:
            _LOADED = False
            raise
        return True


def load_if_named(env: Mapping[str, str] | None = None) -> list[str]:
    """At a process's start: load the plugins now if ``PROOFGAMES_PLUGINS`` names any.

    A module named there is one the user asked for, so an error in it is reported at once;
    with none named, the entry points wait for :func:`ensure_loaded`.

    Returns:
        The modules imported (none when the variable names none).

    Raises:
        ProofgamesError: a named module cannot be imported.
    """
    global _LOADED
    environ = os.environ if env is None else env
    if not environ.get(ENV, "").strip(", "):
        return []
    names = load(environ)
    if env is None:
        _LOADED = True
    return names
