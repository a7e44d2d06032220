r"""Replace a generated block of a Markdown file (README tables from reports and benchmarks).

A block is delimited by ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``.  Every file is
written atomically (:func:`write_atomic`): a reader, or a run killed half-way, sees the old
file or the new one, never a truncated mix.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = path.write_text("a\n<!-- t:start -->\nold\n<!-- t:end -->\nb\n")
    >>> replace_block(path, "t", "new\n"), path.read_text()
    (True, 'a\n<!-- t:start -->\nnew\n<!-- t:end -->\nb\n')
    >>> replace_block(path, "u", "new\n")
    False
    >>> replace_block(path, "u", "new\n", required=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames._readme.ReadmeError: .../README.md has no '<!-- u:start -->' marker ...
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import ProofgamesError


class ReadmeError(ProofgamesError, ValueError):
    """A file to update is missing, unreadable, or lacks its block's markers."""


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of block ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def check_block(path: Path, name: str) -> str:
    """The text of ``path``, checked to hold block ``name``'s markers (start before end).

    Call it before long work whose result goes into the block.

    Raises:
        ReadmeError: naming the file and what is wrong (missing, unreadable, not UTF-8, a
            marker missing or the end before the start).
    """
    start, end = markers(name)
    try:
        content = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ReadmeError(f"{path} does not exist (it should hold the {name!r} block)") from None
    except UnicodeDecodeError as exc:  # before ValueError, its base class
        raise ReadmeError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or exc
        raise ReadmeError(f"cannot read {str(path)!r}: {reason}") from None
    for marker in (start, end):
        if marker not in content:
            raise ReadmeError(
                f"{path} has no {marker!r} marker (block {name!r} goes between {start!r} "
                f"and {end!r})"
            )
    if content.index(end) < content.index(start):
        raise ReadmeError(f"{path}: the {end!r} marker comes before {start!r}")
    return content


def replace_block(path: Path, name: str, text: str, *, required: bool = False) -> bool:
    """Put ``text`` between the ``name`` markers of ``path`` (atomically).

    Returns ``False``, changing nothing, if the file or a marker is missing -- unless
    ``required``, when that is a :class:`ReadmeError` naming the file and the marker.
    """
    try:
        content = check_block(path, name)
    except ReadmeError:
        if required:
            raise
        return False
    start, end = markers(name)
    head, rest = content.split(start, 1)
    write_atomic(path, f"{head}{start}\n{text}{end}{rest.split(end, 1)[1]}")
    return True


def write_atomic(path: Path, data: str | bytes | Callable[[Path], object]) -> Path:
    """Write ``path`` through a temporary file in its folder and ``os.replace``.

    ``data`` is text (UTF-8), bytes, or a function that writes a given path (e.g.
    ``lambda p: figure.savefig(p, dpi=110)``; the temporary name keeps ``path``'s suffix, so
    formats inferred from it still are).  An existing file keeps its permissions; a
    symbolic link's target is what is replaced.

    Raises:
        ReadmeError: the folder cannot be written (the temporary file is removed).
    """
    target = Path(os.path.realpath(path))
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=target.suffix or ".tmp"
        )
    except OSError as exc:
        raise ReadmeError(f"cannot write {path}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, str):
                f.write(data.encode("utf-8"))
            elif isinstance(data, bytes):
                f.write(data)
        if callable(data):
            data(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise ReadmeError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
    return Path(path)
