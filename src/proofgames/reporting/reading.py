r"""Reading files safely: regular files only, a size cap, UTF-8, strict and shallow JSON.

Every file proofgames reads back (parameter files, DIMACS formulas, sweep stores, logs,
results, data sets, READMEs, checkpoints) goes through this module, so that a bad file
is one clear :class:`ReadError` naming it -- never a hang, a traceback or a silent guess:

* Only a **regular file** is read (a symbolic link to one too).  A FIFO, a device, a
  socket or a folder is refused from ``os.stat`` before it is opened; the file is then
  opened with ``O_NONBLOCK`` (so that a FIFO swapped in meanwhile cannot block the
  ``open``) and checked again with ``os.fstat``.
* A **size cap**: a file over ``max_bytes`` is refused before it is read, and at most
  ``max_bytes + 1`` bytes are ever read (a file that grows meanwhile is refused too).
  The defaults, per kind of file, are :data:`SETTINGS_LIMIT` (1 MiB: a parameter file),
  :data:`TEXT_LIMIT` (16 MiB: a README), :data:`DATA_LIMIT` (256 MiB: stores, logs,
  results, data sets, DIMACS formulas) and :data:`CHECKPOINT_LIMIT` (4 GiB); every
  reader takes ``max_bytes`` to override them.
* **UTF-8** text, the first bad byte named with its line.
* **Strict JSON**: no ``NaN``/``Infinity`` literals, no key twice in one object, and at
  most ``max_depth`` (:data:`MAX_DEPTH`) nested arrays and objects -- checked by a scan
  of the brackets outside strings *before* :func:`json.loads` recurses, so a deeply
  nested file cannot exhaust the stack.  A number too large for a float reads as
  ``inf``: the caller's range checks refuse it with the value's name.
* **JSON lines**: :func:`read_json_lines` gives ``(line number, value)`` pairs; an error
  names the file and the line.

Example:
    >>> import os, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.json").write_text('{"x": [1, 2]}')
    >>> read_json(folder / "a.json", "the settings file")
    {'x': [1, 2]}
    >>> _ = (folder / "b.json").write_text('{"x": 1, "x": 2}')
    >>> read_json(folder / "b.json", "the settings file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.reporting.reading.ReadError: ...b.json: not valid JSON (the key 'x' appears twice...
    >>> os.mkfifo(folder / "pipe")
    >>> read_text(folder / "pipe", "the store")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.reporting.reading.ReadError: cannot read the store .../pipe: it is a FIFO...
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import numpy as np

from ..errors import ProofgamesError

__all__ = [
    "CHECKPOINT_LIMIT",
    "DATA_LIMIT",
    "MAX_DEPTH",
    "SETTINGS_LIMIT",
    "TEXT_LIMIT",
    "NoSuchFileError",
    "ReadError",
    "decode",
    "open_regular",
    "parse_json",
    "parse_json_lines",
    "read_bytes",
    "read_json",
    "read_json_lines",
    "read_text",
    "shown",
]

SETTINGS_LIMIT = 1 << 20
"""1 MiB: a small settings file (a ``--params`` file, a run's ``config.json``)."""
TEXT_LIMIT = 16 << 20
"""16 MiB: a document (a README whose block is replaced)."""
DATA_LIMIT = 256 << 20
"""256 MiB: stores, logs, results, data sets and DIMACS formulas (the default)."""
CHECKPOINT_LIMIT = 4 << 30
"""4 GiB: a checkpoint or training state read by ``torch.load``."""
MAX_DEPTH = 64
"""Deepest nesting of JSON arrays and objects read (proofgames writes at most about 10)."""

PathLike = str | os.PathLike[str]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_OTHER = re.compile(r"[^\[\]{}]+")


class ReadError(ProofgamesError, ValueError):
    """A file cannot be read as what it should be; the message names the file (and line)."""


class NoSuchFileError(ReadError, FileNotFoundError):
    """The file to read does not exist.

    Example:
        >>> read_bytes("/nonexistent/p.json", "the --params file")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.NoSuchFileError: cannot read ...p.json: no such file
    """


def shown(path: PathLike) -> str:
    r"""``path`` as a message shows it: as is, or quoted if it holds unprintable characters.

    Example:
        >>> shown("runs/a.json"), shown("bad\nname")
        ('runs/a.json', "'bad\\nname'")
    """
    text = os.fsdecode(path)
    return text if text.isprintable() else repr(text)


def _refuse_kind(mode: int, path: PathLike, what: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise ReadError(f"cannot read {what} {shown(path)}: it is {kind}, not a regular file")


def _refuse_size(size: int, path: PathLike, what: str, max_bytes: int) -> None:
    if size > max_bytes:
        raise ReadError(
            f"cannot read {what} {shown(path)}: it holds more than {max_bytes:,} bytes, "
            f"the limit for {what}"
        )


def _open(path: PathLike, what: str, flags: int) -> int:
    """``os.open(path, flags)`` after ``os.stat`` found a regular file there."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            return os.open(path, flags)
    except FileNotFoundError:
        raise NoSuchFileError(f"cannot read {what} {shown(path)}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or exc
        raise ReadError(f"cannot read {what} {shown(path)}: {reason}") from None
    _refuse_kind(mode, path, what)
    raise AssertionError("unreachable")  # pragma: no cover


@contextmanager
def open_regular(path: PathLike, what: str, max_bytes: int = DATA_LIMIT) -> Iterator[IO[bytes]]:
    """Open ``path`` for reading in binary, refused unless a regular file of at most ``max_bytes``.

    ``what`` names the file in errors (``"the store"``, ``"the PVG checkpoint"``).  The file
    is checked with ``os.stat`` before it is opened, opened without blocking
    (``O_NONBLOCK``) and checked again with ``os.fstat``; it is closed on leaving.

    Raises:
        NoSuchFileError: there is no such file.
        ReadError: not a regular file, over ``max_bytes``, or the system refuses it
            (permission, a name with a NUL...), naming the file and why.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "w.bin"
        >>> _ = path.write_bytes(b"weights")
        >>> with open_regular(path, "the checkpoint") as f:
        ...     f.read()
        b'weights'
        >>> with open_regular(path.parent, "the checkpoint") as f:  # doctest: +ELLIPSIS
        ...     pass
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: cannot read ...: it is a directory, ...
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = _open(path, what, flags)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        _refuse_kind(info.st_mode, path, what)  # replaced since os.stat
        _refuse_size(info.st_size, path, what, max_bytes)
        yield f


def read_bytes(path: PathLike, what: str, max_bytes: int = DATA_LIMIT) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` (see :func:`open_regular`).

    Raises:
        NoSuchFileError: there is no such file.
        ReadError: not a regular file, too large (also if it grew while read), or
            unreadable, naming the file and why.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "f.bin"
        >>> _ = path.write_bytes(b"12345")
        >>> read_bytes(path, "the file")
        b'12345'
        >>> read_bytes(path, "the file", max_bytes=4)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: cannot read ...f.bin: it holds more than 4 bytes...
    """
    with open_regular(path, what, max_bytes) as f:
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:  # a read that fails (an I/O error, a file system gone)
            raise ReadError(f"cannot read {what} {shown(path)}: {exc.strerror or exc}") from None
    _refuse_size(len(data), path, what, max_bytes)
    return data


def decode(data: bytes, path: PathLike, what: str) -> str:
    r"""``data`` (read from ``path``) as UTF-8 text.

    Raises:
        ReadError: naming the file, the first bad byte, its value and its line.

    Example:
        >>> decode(b"ok\n\xff", "f.txt", "the README")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: ... f.txt: not UTF-8 text (byte 3 is 0xff) on line 2
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ReadError(
            f"{what} {shown(path)}: not UTF-8 text (byte {exc.start} is "
            f"{data[exc.start]:#04x}) on line {line}"
        ) from None


def read_text(path: PathLike, what: str, max_bytes: int = DATA_LIMIT) -> str:
    r"""The UTF-8 text of the regular file ``path`` (:func:`read_bytes`, then :func:`decode`).

    Line ends are kept as they are in the file.

    Raises:
        NoSuchFileError: there is no such file.
        ReadError: as :func:`read_bytes`, or not UTF-8.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "README.md"
        >>> _ = path.write_bytes("café\r\n".encode())
        >>> read_text(path, "the README")
        'café\r\n'
    """
    return decode(read_bytes(path, what, max_bytes), path, what)


def _depth(text: str, max_depth: int) -> int:
    """The deepest nesting of arrays and objects in ``text``, brackets in strings not counted.

    Strings are cut out first (a string is a quote, then anything but a quote or a
    backslash, or a backslash and any character, then a quote); the nesting is then the
    largest running count of opening less closing brackets.  Up to the first error
    :func:`json.loads` would meet, that is exactly how deep it would recurse; after it,
    the count may only be higher, so a refusal is never missed.
    """
    if text.count("[") + text.count("{") <= max_depth:  # cannot be deeper: no scan
        return 0
    brackets = _OTHER.sub("", _STRING.sub("", text)).encode("ascii")
    steps = np.frombuffer(brackets, dtype=np.uint8)
    if not steps.size:
        return 0
    opening = (steps == ord("[")) | (steps == ord("{"))
    return int(np.cumsum(np.where(opening, 1, -1), dtype=np.int64).max())


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed: strict JSON has no NaN or Infinity")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def parse_json(text: str, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON ``text`` (from the source ``what`` names) as Python values.

    No ``NaN``/``Infinity``, no key twice in one object, at most ``max_depth`` nested
    arrays and objects (checked before parsing).

    Raises:
        ReadError: ``"WHAT: not valid JSON (why)"``.

    Example:
        >>> parse_json('{"a": [1.5, null]}', "line 1")
        {'a': [1.5, None]}
        >>> parse_json("[" * 100 + "]" * 100, "log, line 3")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: log, line 3: not valid JSON (nested deeper than...
        >>> parse_json('{"a": NaN}', "x.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: x.json: not valid JSON (NaN is not allowed: ...)
    """
    too_deep = f"{what}: not valid JSON (nested deeper than {max_depth} levels, the limit)"
    if _depth(text, max_depth) > max_depth:
        raise ReadError(too_deep)
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique)
    except RecursionError:  # not reached after the scan; kept as a backstop
        raise ReadError(too_deep) from None
    except ValueError as exc:  # JSONDecodeError, the hooks' refusals, a 5,000-digit integer
        raise ReadError(f"{what}: not valid JSON ({exc})") from None


def read_json(
    path: PathLike, what: str, max_bytes: int = DATA_LIMIT, max_depth: int = MAX_DEPTH
) -> Any:
    """The strict JSON content of the regular UTF-8 file ``path`` (:func:`parse_json`).

    Raises:
        NoSuchFileError: there is no such file.
        ReadError: naming the file: unreadable, too large, not UTF-8, not strict JSON or
            nested too deep.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.json"
        >>> _ = path.write_text('{"w": Infinity}')
        >>> read_json(path, "the --params file")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: ...p.json: not valid JSON (Infinity is not...
    """
    return parse_json(read_text(path, what, max_bytes), f"{what} {shown(path)}", max_depth)


def parse_json_lines(
    text: str, what: str, max_depth: int = MAX_DEPTH, *, torn_tail: bool = False
) -> list[tuple[int, Any]]:
    r"""``(line number, value)`` of each line of ``text`` (from the file ``what`` names).

    Lines end with ``"\n"``; a blank line is skipped.  With ``torn_tail``, text after the
    last newline that is not valid JSON is dropped silently: it is a line whose append was
    interrupted (a writer appends each line with its newline in one write), so it cannot
    be a finished record.

    Raises:
        ReadError: ``"WHAT, line N: not valid JSON (why)"``.

    Example:
        >>> parse_json_lines('{"step": 1}\n\n{"step": 2}\n{"st', "the log", torn_tail=True)
        [(1, {'step': 1}), (3, {'step': 2})]
        >>> parse_json_lines('{"step": 1}\n{"st', "the log")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.reading.ReadError: the log, line 2: not valid JSON (Unterminated...
    """
    lines = text.split("\n")
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((number, parse_json(line, f"{what}, line {number}", max_depth)))
        except ReadError:
            if torn_tail and number == len(lines):
                break
            raise
    return out


def read_json_lines(
    path: PathLike,
    what: str,
    max_bytes: int = DATA_LIMIT,
    max_depth: int = MAX_DEPTH,
    *,
    torn_tail: bool = False,
) -> list[tuple[int, Any]]:
    r"""``(line number, value)`` of each line of the JSON-lines file ``path``.

    See :func:`parse_json_lines` (``torn_tail``) and :func:`read_text`.

    Raises:
        NoSuchFileError: there is no such file.
        ReadError: naming the file (and the line): unreadable, too large, not UTF-8, or a
            line that is not strict JSON.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "metrics.jsonl"
        >>> _ = path.write_text('{"step": 1}\n[1, 2]\n')
        >>> read_json_lines(path, "the metric log")
        [(1, {'step': 1}), (2, [1, 2])]
    """
    text = read_text(path, what, max_bytes)
    return parse_json_lines(text, f"{what} {shown(path)}", max_depth, torn_tail=torn_tail)
