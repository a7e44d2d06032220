"""The files of a PVG run folder, and reading the JSON the PVG code wrote.

Private to :mod:`proofgames.pvg`.  Writing goes through :mod:`proofgames.reporting`
(atomic writes with ``fsync``, strict JSON).

* A run folder's files are :data:`RUN_FILES`: :func:`run_files` finds another run's files
  in a folder before a new run writes there, :func:`remove_run` removes them.
* :func:`read_json` reads a JSON file back, naming it in its errors; :func:`check_folder`
  and :func:`check_file_to_write` refuse places that cannot be written before any work.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import PVGError
from ..reporting import reading
from ..reporting.reading import DATA_LIMIT

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


def read_json(path: Path, what: str, max_bytes: int = DATA_LIMIT) -> Any:
    """The strict JSON content of ``path``, ``what`` naming the file in errors.

    A regular file only (a FIFO or a device is refused without being read), of at most
    ``max_bytes``, UTF-8, strict JSON nested at most 64 deep
    (:func:`proofgames.reporting.reading.read_json`).

    Raises:
        MissingFileError: no such file.
        PVGError: it cannot be read, is not a regular file, is too large, or is not
            strict JSON (naming the file and why).
    """
    try:
        return reading.read_json(path, what, max_bytes)
    except reading.NoSuchFileError:
        raise MissingFileError(f"{what} {path}: no such file") from None
    except reading.ReadError as exc:
        raise PVGError(str(exc)) from None


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
