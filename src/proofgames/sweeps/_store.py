"""A resumable store of a sweep's finished work items: one JSON line per item.

The first line names the sweep (a JSON object of its settings); each further line is
``{"key": KEY, "result": RESULT}``, appended and flushed as the item finishes.  Opening the
file again gives the items already done, so an interrupted sweep continues with the rest;
a line cut short by the interruption is dropped.  A store made for other settings is
refused rather than mixed with this sweep's results.

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

import json
from pathlib import Path
from typing import Any

from ..errors import ProofgamesError
from ..reporting.json import dumps, plain


class StoreError(ProofgamesError, ValueError):
    """A store file cannot be used: unreadable, not a store, or another sweep's."""


class ResultStore:
    """Finished items of one sweep in a JSON-lines file (see the module docstring).

    Attributes:
        path: the file.
        sweep: the settings that name the sweep (the file's first line).
        done: ``{key: result}`` of the items finished so far.
    """

    def __init__(self, path: Path, sweep: dict[str, Any]) -> None:
        self.path, self.sweep = path, plain(sweep)
        self.done: dict[str, Any] = {}
        try:
            text = path.read_text() if path.exists() else ""
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in it
            raise StoreError(f"cannot read the store {str(path)!r}: {exc}") from None
        if text:
            self._load(text)
        else:
            self._write(dumps({"sweep": self.sweep}) + "\n", "w")

    def _load(self, text: str) -> None:
        lines = text.split("\n")
        whole, cut = lines[:-1], lines[-1]  # text after the last newline was cut short
        try:
            head = json.loads(whole[0]) if whole else None
        except json.JSONDecodeError:
            head = None
        if not isinstance(head, dict) or "sweep" not in head:
            raise StoreError(f"{self.path} is not a sweep store (its first line names no sweep)")
        if head["sweep"] != self.sweep:
            raise StoreError(
                f"{self.path} holds another sweep's results (settings {head['sweep']}); "
                "give another store file or remove it"
            )
        for number, line in enumerate(whole[1:], start=2):
            try:
                record = json.loads(line)
                key, result = record["key"], record["result"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise StoreError(f"{self.path}, line {number}: not a stored item") from None
            self.done.setdefault(str(key), result)
        if cut:  # drop the torn line, so that the next record starts on a line of its own
            self._write("\n".join(whole) + "\n", "w")

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
        """Write one finished item (a JSON-able result) down."""
        if key in self.done:
            return
        record = plain(result)
        self._write(dumps({"key": key, "result": record}) + "\n", "a")
        self.done[key] = record
