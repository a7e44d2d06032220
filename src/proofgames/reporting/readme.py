r"""Replace a generated block of a Markdown file (README tables from reports and benchmarks).

A block is delimited by ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``; the file is
rewritten atomically (:func:`~proofgames.reporting.files.write_atomic`).

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
    proofgames.reporting.readme.ReadmeError: .../README.md has no '<!-- u:start -->' marker ...
"""

from __future__ import annotations

from pathlib import Path

from .files import WriteError, write_atomic
from .reading import TEXT_LIMIT, NoSuchFileError, ReadError, read_text


class ReadmeError(WriteError):
    """A file to update is missing, unreadable, or lacks its block's markers."""


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of block ``name``.

    Example:
        >>> markers("report:pvg")
        ('<!-- report:pvg:start -->', '<!-- report:pvg:end -->')
    """
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def check_block(path: Path, name: str) -> str:
    r"""The text of ``path``, checked to hold block ``name``'s markers (start before end).

    Call it before long work whose result goes into the block.

    Raises:
        ReadmeError: naming the file and what is wrong (missing, unreadable, not a regular
            file, over :data:`~proofgames.reporting.reading.TEXT_LIMIT`, not UTF-8, a marker
            missing or the end before the start).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "README.md"
        >>> _ = path.write_text("<!-- t:end -->\n<!-- t:start -->\n")
        >>> check_block(path, "t")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.reporting.readme.ReadmeError: ...: the '<!-- t:end -->' marker comes before ...
    """
    start, end = markers(name)
    try:  # a regular file only (a FIFO is refused, never read), at most 16 MiB
        content = read_text(path, "the file", TEXT_LIMIT)
    except NoSuchFileError:
        raise ReadmeError(f"{path} does not exist (it should hold the {name!r} block)") from None
    except ReadError as exc:
        raise ReadmeError(str(exc)) from None
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
    r"""Put ``text`` between the ``name`` markers of ``path`` (atomically).

    Returns ``False``, changing nothing, if the file or a marker is missing -- unless
    ``required``, when that is a :class:`ReadmeError` naming the file and the marker.

    Raises:
        ReadmeError: with ``required``, the file or a marker is missing.
        WriteError: the file cannot be rewritten.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "README.md"
        >>> _ = path.write_text("<!-- t:start -->\n<!-- t:end -->\n")
        >>> replace_block(path, "t", "| a |\n"), path.read_text()
        (True, '<!-- t:start -->\n| a |\n<!-- t:end -->\n')
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
