"""Small C kernels, compiled on first use into a cache directory and loaded with ctypes.

The engine's inner loops exist twice: as numba functions and as short C sources.  Loading
numba and its cached kernels costs about half a second in a fresh process, longer than a
whole short command; a C kernel loads in about a millisecond.  :func:`load` compiles a
source once with the system's C compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) into
``$PROOFGAMES_CACHE/kernels/<name>-<hash>.so`` (default ``~/.cache/proofgames``), the
hash covering the source, the flags and the platform, so an edited source is rebuilt and
nothing is ever built by hand.  Where no compiler works, or ``PROOFGAMES_KERNELS=numba``
says so, :func:`load` returns ``None`` and the callers use numba: the same arithmetic,
bit-identical results (tests compare the two on many machines).

The library is called through :class:`ctypes.CDLL`, which releases the GIL for the
call, so two threads can simulate at once.  Floating-point code is compiled without
contraction (``-ffp-contract=off``) or fast-math, so each operation rounds as numba's
and numpy's do.

Example:
    >>> import ctypes
    >>> lib = load("doc-example", "long twice(long x) { return 2 * x; }")
    >>> lib is None or lib.twice(ctypes.c_long(21)) == 42
    True
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from .errors import ProofgamesError

BACKEND_ENV = "PROOFGAMES_KERNELS"
"""``auto`` (default: C where a compiler works, else numba), ``c`` (C or an error) or ``numba``."""
CACHE_ENV = "PROOFGAMES_CACHE"
FLAGS = ("-O2", "-std=c99", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math")
BACKENDS = ("auto", "c", "numba")

_LOADED: dict[str, ctypes.CDLL | None] = {}
_LOADING = threading.Lock()
FAILURES: dict[str, str] = {}
"""Why a kernel fell back to numba, by name (empty when every C kernel loaded)."""


class KernelError(ProofgamesError):
    """A bad :data:`BACKEND_ENV`, or ``PROOFGAMES_KERNELS=c`` and a C kernel failed to build."""


def backend() -> str:
    """The requested backend (:data:`BACKEND_ENV`), checked.

    Raises:
        KernelError: an unknown value, naming the choices.
    """
    value = os.environ.get(BACKEND_ENV, "auto").strip().lower() or "auto"
    if value not in BACKENDS:
        raise KernelError(f"{BACKEND_ENV} must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$PROOFGAMES_CACHE/kernels``."""
    root = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "proofgames"
    return Path(root) / "kernels"


def _compiler() -> str | None:
    named = os.environ.get("CC")
    if named:
        return shutil.which(named)
    return next((p for c in ("cc", "gcc", "clang") if (p := shutil.which(c))), None)


def library_path(name: str, source: str) -> Path:
    """The cache file for ``source``: its name carries a hash of source, flags and platform."""
    key = "\0".join([source, *FLAGS, platform.system(), platform.machine()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return cache_dir() / f"{name}-{digest}.so"


def _build(source: str, target: Path) -> None:
    """Compile ``source`` to ``target``, atomically (a temporary file renamed into place)."""
    cc = _compiler()
    if cc is None:
        raise KernelError("no C compiler found (set CC, or install cc, gcc or clang)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / "kernel.so"  # the source goes in on standard input
        proc = subprocess.run(
            [cc, *FLAGS, "-o", str(out), "-x", "c", "-"],
            input=source,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise KernelError(f"{cc} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
        os.replace(out, target)


def _open(source: str, path: Path) -> ctypes.CDLL:
    """Load the cached library: built first if missing, rebuilt once if it does not load.

    A cached file may fail to load when another system left it (a shared home, say).
    """
    if not path.exists():
        _build(source, path)
        return ctypes.CDLL(str(path))
    try:
        return ctypes.CDLL(str(path))
    except OSError:
        _build(source, path)
        return ctypes.CDLL(str(path))


def load(name: str, source: str) -> ctypes.CDLL | None:
    """The compiled ``source`` (built on first use), or ``None`` to use numba instead.

    Memoized per process by ``name``.  ``None`` when :data:`BACKEND_ENV` is ``numba`` or,
    under ``auto``, when the build or load fails (the reason is kept in :data:`FAILURES`).

    Raises:
        KernelError: under ``PROOFGAMES_KERNELS=c`` when the kernel cannot be built or
            loaded; for an unknown backend.
    """
    if name in _LOADED:
        return _LOADED[name]
    with _LOADING:  # two parties' set-ups may reach for a kernel at once (one build)
        if name not in _LOADED:
            _LOADED[name] = _load(name, source)
        return _LOADED[name]


def _load(name: str, source: str) -> ctypes.CDLL | None:
    chosen = backend()
    lib = None
    if chosen != "numba":
        path = library_path(name, source)
        try:
            lib = _open(source, path)
        except (OSError, KernelError) as exc:
            if chosen == "c":
                raise KernelError(f"C kernel {name!r} unavailable: {exc}") from exc
            FAILURES[name] = str(exc)
    return lib


def reset() -> None:
    """Forget the loaded kernels, so the next :func:`load` looks again (for tests)."""
    _LOADED.clear()
    FAILURES.clear()
