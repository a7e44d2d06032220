r"""Atomic file writes: a reader, or a run killed half-way, sees the old file or the new one.

Every file proofgames writes (reports, results, figures, checkpoints) goes through
:func:`save_with`: the content goes to a temporary file in the target's folder, which is
flushed and synced to the disk (``os.fsync``) and then put in the target's place in one
step (``os.replace``); the folder is synced too where the system allows it, so that the
rename itself survives a crash.  A save that fails leaves the old file whole and no
temporary file behind.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "note.txt"
    >>> write_atomic(path, "old\n") == path
    True
    >>> _ = save_with(path, lambda tmp: tmp.write_text("new\n"))
    >>> path.read_text(), sorted(p.name for p in path.parent.iterdir())
    ('new\n', ['note.txt'])
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..errors import ProofgamesError


class WriteError(ProofgamesError, ValueError):
    """A file cannot be written: no such folder, no permission, the disk is full.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> write_atomic(folder / "nowhere" / "x.md", "text")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.files.WriteError: cannot write .../nowhere/x.md: No such file ...
    """


def write_atomic(path: Path | str, data: str | bytes, *, parents: bool = False) -> Path:
    r"""Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically (see :func:`save_with`).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a" / "b.txt"
        >>> write_atomic(path, "café", parents=True).read_bytes()
        b'caf\xc3\xa9'
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(payload)

    return save_with(path, write, parents=parents)


def save_with(path: Path | str, save: Callable[[Path], object], *, parents: bool = False) -> Path:
    """Write ``path`` atomically with ``save(temporary_path)``; return ``path``.

    ``save`` writes a whole file at the path it is given (``torch.save``, ``savefig``...);
    that temporary path keeps ``path``'s suffix, so a format inferred from it still is.
    Then the file is synced (``os.fsync``), takes the permissions of the file it replaces
    (or those ``open`` gives a new file under the umask) and replaces ``path`` with
    ``os.replace``; the folder is synced where the system supports it.  A symbolic link's
    target is what is replaced.  With ``parents``, missing folders are made first.

    Raises:
        WriteError: the folder is missing (without ``parents``) or cannot be written, or
            ``save`` raised an :class:`OSError`; ``path`` is then unchanged and the
            temporary file removed.  Other exceptions of ``save`` pass through, with the
            same clean-up.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.bin"
        >>> save_with(path, lambda tmp: tmp.write_bytes(b"weights")).read_bytes()
        b'weights'
    """
    target = Path(os.path.realpath(path))
    try:
        if parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=target.suffix or ".tmp"
        )
        os.close(fd)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    tmp = Path(name)
    try:
        save(tmp)
        with open(tmp, "rb+") as f:
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode(target))
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise WriteError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    _sync_folder(target.parent)
    return Path(path)


def _read_umask() -> int:
    """The process's umask (read once, at import: reading it means setting it)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def _mode(path: Path) -> int:
    """The permissions of ``path``, or those ``open`` gives a new file (0o666 less the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_UMASK


def _sync_folder(folder: Path) -> None:
    """``fsync`` a folder, so that a rename in it is on the disk (where that is supported)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # e.g. Windows, where a folder cannot be opened
        return
    try:
        with contextlib.suppress(OSError):  # some file systems refuse to sync a folder
            os.fsync(fd)
    finally:
        os.close(fd)
