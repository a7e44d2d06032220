"""Every file the PVG code writes or reads back: atomic writes, strict JSON, run folders.

Private to :mod:`proofgames.pvg`.

* Writes are atomic: the data goes to a temporary file beside the target, which then
  replaces it in one step (:func:`os.replace`), so a run killed mid-write, or a write that
  fails, leaves the old file whole (or none) and no half-written one.
* JSON is strict: a float that is not a finite number (a diverged loss) is written as
  ``null``, so every JSON file and ``--json`` output parses anywhere (:func:`json_text`).
* A run folder's files are :data:`RUN_FILES`: :func:`run_files` finds another run's files
  in a folder before a new run writes there, :func:`remove_run` removes them.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import PVGError

#: What a training run (``pvg train``, or one run of ``pvg reproduce``) writes in its folder.
RUN_FILES = (
    "agents.pt",
    "config.json",
    "metrics.jsonl",
    "state.pt",
    "run.json",
    "tensorboard",
)


class MissingFileError(PVGError, FileNotFoundError):
    """A file the PVG code was asked to read does not exist."""


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, +-inf) replaced by ``None``, recursively.

    Tuples become lists; everything else is kept, so integers stay integers.

    Example:
        >>> finite({"loss": float("nan"), "steps": 3, "curve": (0.5, float("inf"))})
        {'loss': None, 'steps': 3, 'curve': [0.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def json_text(data: Any, indent: int | None = None) -> str:
    """Strict JSON of ``data``: non-finite floats are ``null`` (see :func:`finite`)."""
    return json.dumps(finite(data), indent=indent, allow_nan=False)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` on success.

    Raises:
        PVGError: the folder cannot be created or the file cannot be written (e.g. the
            disk is full); ``path`` is then unchanged.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(handle)
        os.chmod(name, _mode(path))  # mkstemp's is 0o600: give the mode open() would
    except OSError as exc:
        raise PVGError(f"cannot write {path}: {exc.strerror or exc}") from exc
    partial = Path(name)
    try:
        yield partial
        os.replace(partial, path)
    except OSError as exc:
        raise PVGError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)


def _mode(path: Path) -> int:
    """The permissions ``path`` has, or a new file would get from ``open`` (the umask's)."""
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as partial:
        partial.write_text(text)


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as partial:
        partial.write_bytes(data)


def write_json(path: Path, data: Any, indent: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically as strict JSON (see :func:`json_text`)."""
    write_text(path, json_text(data, indent) + ("\n" if indent is not None else ""))


def save_with(path: Path, save: Callable[[Path], None]) -> None:
    """Write ``path`` atomically with ``save(temporary_path)`` (e.g. ``torch.save``)."""
    with atomic_path(path) as partial:
        save(partial)


def read_json(path: Path, what: str) -> Any:
    """The JSON content of ``path``, ``what`` naming the file in errors.

    Raises:
        MissingFileError: no such file.
        PVGError: it cannot be read, or is not JSON.
    """
    if not path.exists():
        raise MissingFileError(f"{what} {path}: no such file")
    if not path.is_file():
        raise PVGError(f"{what} {path} is not a file")
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise PVGError(f"cannot read {what} {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise PVGError(f"{what} {path} is not JSON ({exc})") from exc


def check_folder(path: Path, option: str) -> None:
    """Refuse a folder to write into that is a file, or lies under one.

    Raises:
        PVGError: naming ``option`` and the file in the way.
    """
    for place in (path, *path.parents):
        if place.exists():
            if not place.is_dir():
                raise PVGError(
                    f"{option} {path} is a file, not a folder"
                    if place == path
                    else f"{option} {path} lies under {place}, which is a file, not a folder"
                )
            if not os.access(place, os.W_OK | os.X_OK):
                raise PVGError(f"{option} {path}: cannot write in {place} (permission denied)")
            return


def check_file_to_write(path: Path, option: str) -> None:
    """Refuse a file to write that is a folder, or whose folder cannot be one."""
    if path.is_dir():
        raise PVGError(f"{option} {path} is a folder, not a file")
    check_folder(path.parent, option)


def run_files(folder: Path) -> list[str]:
    """The names of :data:`RUN_FILES` present in ``folder`` (none if it does not exist)."""
    if not folder.is_dir():
        return []
    return [name for name in RUN_FILES if (folder / name).exists()]


def remove_run(folder: Path) -> None:
    """Remove the run files (:data:`RUN_FILES`) of ``folder``; other files stay."""
    for name in run_files(folder):
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
