"""A resumable store of a sweep's finished work items: one JSON line per item, checksummed.

The first line names the store's format and the sweep: ``{"format": FORMAT, "sweep":
SETTINGS}``, where the settings are every argument that changes the sweep's results.
Each further line is one finished item, ``{"key": KEY, "result": RESULT, "sha256":
DIGEST}``, appended and flushed as the item finishes.  ``DIGEST`` is the SHA-256 of the
header's canonical JSON, a newline and ``{"key": KEY, "result": RESULT}``'s canonical
JSON (:func:`checksum`: sorted keys, no spaces, ASCII), so that a line edited by hand or
damaged, or copied from a store of other settings, is refused.  (It guards against
accidents, not against someone who recomputes it: a store is trusted no further than
the checks of each result, which the sweep gives as ``check``.)

Opening the file again gives the items already done, so an interrupted sweep continues
with the rest.  Nothing in the file is trusted: it must be a regular file within the size
cap (:data:`~proofgames.reporting.reading.DATA_LIMIT`), every line strict JSON, the
header that of this sweep, each line's checksum right, and each result what the sweep's
``check`` accepts; anything else is refused with a :class:`StoreError` naming the file
and the line.  The one exception is text after the last newline: a line whose append was
interrupted (each line is written with its newline in one write), so it cannot be a
finished item; it is dropped silently (cut from the file), and that item is run again.

A store of the first format (no ``"format"``, no checksums) is refused, with how to start
afresh: its lines cannot be verified.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = ResultStore(Path(d) / "s.jsonl", {"seed": 0})
    ...     store.add("chunk-0", {"accepted": 3})
    ...     again = ResultStore(Path(d) / "s.jsonl", {"seed": 0})
    ...     again.done
    {'chunk-0': {'accepted': 3}}
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ProofgamesError
from ..reporting.json import dumps, plain
from ..reporting.reading import (
    DATA_LIMIT,
    NoSuchFileError,
    ReadError,
    decode,
    parse_json,
    read_bytes,
    shown,
)

FORMAT = "proofgames sweep store 2"
"""The format named in a store's first line (the first format had none, nor checksums)."""

Check = Callable[[str, Any], None]
"""A sweep's check of one stored item ``(key, result)``: raises ``ValueError`` with why."""

_DIGEST = re.compile(r"[0-9a-f]{64}")


class StoreError(ProofgamesError, ValueError):
    """A store file cannot be used: unreadable, not a store, another sweep's, or damaged."""


def canonical(obj: Any) -> str:
    r"""The canonical JSON of ``obj``: sorted keys, no spaces, ASCII, no NaN or Infinity.

    Raises:
        ValueError: ``obj`` holds a non-finite float.
        TypeError: ``obj`` holds something JSON has no form for.

    Example:
        >>> canonical({"b": [1.5, None], "a": "é"})
        '{"a":"\\u00e9","b":[1.5,null]}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)  # fmt: skip


def checksum(header: dict[str, Any], key: str, result: Any) -> str:
    """The SHA-256 (hex) that binds one item to its store's header.

    Raises:
        ValueError: as :func:`canonical`.

    Example:
        >>> head = {"format": FORMAT, "sweep": {"seed": 0}}
        >>> checksum(head, "a", 1) == checksum(head, "a", 1.0), len(checksum(head, "a", 1))
        (False, 64)
    """
    text = f"{canonical(header)}\n{canonical({'key': key, 'result': result})}"
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class ResultStore:
    """Finished items of one sweep in a JSON-lines file (see the module docstring).

    Args:
        path: the file (made, with its folder, if missing).
        sweep: the settings that name the sweep (JSON-able): every argument that changes
            its results.
        check: raises ``ValueError`` (the reason) for a result that is not one of this
            sweep's items; called on every stored item read back, and on every item
            added.  ``None`` accepts any JSON value.
        max_bytes: the largest file read back.

    Attributes:
        path: the file.
        sweep: the settings (plain JSON).
        done: ``{key: result}`` of the items finished so far.

    Raises:
        StoreError: the file cannot be read or written, or is refused (see the module
            docstring), naming the file and, for a bad line, its number.
    """

    def __init__(
        self, path: Path, sweep: dict[str, Any], check: Check | None = None,
        max_bytes: int = DATA_LIMIT,
    ) -> None:  # fmt: skip
        self.path, self.sweep = Path(path), plain(sweep)
        self.header = {"format": FORMAT, "sweep": self.sweep}
        self.check = check
        self.done: dict[str, Any] = {}
        try:
            data = read_bytes(self.path, "the store", max_bytes)
        except NoSuchFileError:
            data = b""
        except ReadError as exc:
            raise StoreError(str(exc)) from None
        if data:
            self._load(data)
        else:
            self._write(dumps(self.header) + "\n", "w")

    def _refuse(self, number: int, problem: str) -> StoreError:
        return StoreError(f"the store {shown(self.path)}, line {number}: {problem}")

    def _load(self, data: bytes) -> None:
        end = data.rfind(b"\n") + 1  # text after the last newline was cut short
        try:
            text = decode(data[:end], self.path, "the store")
        except ReadError as exc:
            raise StoreError(str(exc)) from None
        lines = text.split("\n")[:-1]
        self._check_header(lines[0] if lines else "")
        for number, line in enumerate(lines[1:], start=2):
            key, result = self._item(number, line)
            self.done.setdefault(key, result)
        if end < len(data):  # drop the torn line, so that the next record starts its own
            try:
                os.truncate(self.path, end)
            except OSError as exc:
                raise StoreError(
                    f"cannot write the store {shown(self.path)}: {exc.strerror or exc}"
                ) from None

    def _check_header(self, line: str) -> None:
        try:
            head = parse_json(line, f"the store {shown(self.path)}, line 1")
        except ReadError:
            head = None
        if not isinstance(head, dict) or "sweep" not in head:
            raise StoreError(
                f"{shown(self.path)} is not a sweep store (its first line names no sweep)"
            )
        if "format" not in head:
            raise StoreError(
                f"{shown(self.path)} is a store of an older proofgames, without checksums, "
                "which cannot be verified: remove it (or give another --store) to start afresh"
            )
        if head["format"] != FORMAT or set(head) != {"format", "sweep"}:
            raise StoreError(
                f"{shown(self.path)} is not a sweep store of this proofgames (its first line "
                f"should name the format {FORMAT!r} and the sweep)"
            )
        if _canonical_or_none(head["sweep"]) != canonical(self.sweep):
            settings = _canonical_or_none(head["sweep"]) or "?"
            raise StoreError(
                f"{shown(self.path)} holds another sweep's results (settings "
                f"{settings[:200]}); give another store file or remove it"
            )

    def _item(self, number: int, line: str) -> tuple[str, Any]:
        """One stored item, checked: its form, its checksum, then the sweep's check."""
        try:
            record = parse_json(line, f"the store {shown(self.path)}, line {number}")
        except ReadError as exc:
            raise StoreError(str(exc)) from None
        if not isinstance(record, dict) or set(record) != {"key", "result", "sha256"}:
            raise self._refuse(number, 'not a stored item {"key", "result", "sha256"}')
        key, result, digest = record["key"], record["result"], record["sha256"]
        if not (isinstance(key, str) and isinstance(digest, str) and _DIGEST.fullmatch(digest)):
            raise self._refuse(number, "not a stored item (a string key and a SHA-256 digest)")
        try:
            right = checksum(self.header, key, result)
        except ValueError:  # a number too large for a float
            right = ""
        if digest != right:
            problem = "its checksum does not match (the line was edited or damaged)"
            raise self._refuse(number, f"{problem}; remove the line to run that item again")
        self._check(number, key, result)
        return key, result

    def _check(self, number: int, key: str, result: Any) -> None:
        if self.check is None:
            return
        try:
            self.check(key, result)
        except ValueError as exc:
            raise self._refuse(
                number, f"item {key!r} is not a result of this sweep ({exc})"
            ) from None

    def _write(self, text: str, mode: str) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open(mode) as f:
                f.write(text)
                f.flush()
        except (OSError, ValueError) as exc:
            problem = getattr(exc, "strerror", None) or exc
            raise StoreError(f"cannot write the store {str(self.path)!r}: {problem}") from None

    def add(self, key: str, result: Any) -> None:
        """Write one finished item (a JSON-able result) down, with its checksum.

        Raises:
            StoreError: the file cannot be written, or ``check`` refuses the result (a
                bug in the sweep: nothing is written).
        """
        if key in self.done:
            return
        record = plain(result)
        if self.check is not None:
            try:
                self.check(key, record)
            except ValueError as exc:
                raise StoreError(
                    f"item {key!r} of the store {shown(self.path)} is not a result of its "
                    f"sweep ({exc}); it was not stored"
                ) from None
        line = {"key": key, "result": record, "sha256": checksum(self.header, key, record)}
        self._write(dumps(line) + "\n", "a")
        self.done[key] = record


def _canonical_or_none(obj: Any) -> str | None:
    try:
        return canonical(obj)
    except (TypeError, ValueError):
        return None
