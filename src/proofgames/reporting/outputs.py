"""One rule for every place a command writes: nothing another command or run made is lost.

* A report folder belongs to the command that made it: :func:`claim_folder` marks it
  with a small manifest (``.proofgames.json``, ``{"made_by": "proofgames report",
  "finished": false}``) before any work, and :func:`finish_folder` records that the
  output is complete. Another command never writes there; the same command replaces its
  own finished output only when given ``--overwrite`` (an unfinished one, say of a run
  that was interrupted, it simply continues). A folder that holds files but no manifest
  is nobody's known output and is refused, so nothing foreign is replaced.
* A single output file (a figure, a parameter file) is never an input of the command,
  never inside an input, a training run's folder or another command's report folder,
  and an existing one is replaced only with ``--overwrite`` (:func:`check_output_file`).
* Every write is atomic (:mod:`proofgames.reporting.files`).

All checks run before any work, so a refused command has spent nothing.

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "report"
    >>> claim_folder(folder, "proofgames report") == folder
    True
    >>> owner(folder)
    'proofgames report'
    >>> (folder / "report.md").write_text("# done")
    6
    >>> finish_folder(folder, "proofgames report")
    >>> claim_folder(folder, "proofgames language report")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.reporting.outputs.OutputError: --out .../report holds the output of 'proofg...
    >>> claim_folder(folder, "proofgames report", overwrite=True) == folder
    True
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .files import WriteError
from .json import write_json

#: The file that names the command a folder's output belongs to.
MANIFEST = ".proofgames.json"
#: Files that make a folder a training run's (its state, log and settings).
RUN_MARKERS = ("config.json", "metrics.jsonl", "state.pt", "agents.pt")


class OutputError(WriteError):
    """A command may not write where it was asked to: the place holds what it must not replace.

    Example:
        >>> issubclass(OutputError, WriteError)
        True
    """


def owner(folder: Path | str) -> str | None:
    """The command a folder's output belongs to (its manifest), or ``None``.

    A manifest that cannot be read names no owner.
    """
    made_by = _manifest(Path(folder)).get("made_by")
    return made_by if isinstance(made_by, str) else None


def _manifest(folder: Path) -> dict[str, object]:
    """A folder's manifest, or ``{}`` (none, or one that cannot be read)."""
    path = folder / MANIFEST
    try:
        if not path.is_file() or path.stat().st_size > 4096:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def claim_folder(
    folder: Path | str,
    made_by: str,
    *,
    option: str = "--out",
    overwrite: bool = False,
    inputs: Iterable[Path | str] = (),
    own: Iterable[str] = (),
    mark: bool = True,
) -> Path:
    """Check that ``made_by`` may write its output in ``folder``; mark the folder as its own.

    Args:
        folder: the output folder.
        made_by: the command, as users type it (``"proofgames report"``).
        option: the option that named the folder, for messages.
        overwrite: replace an earlier output of the same command.
        inputs: files and folders the command reads (it never writes into them).
        own: names of entries the command answers for under rules of its own (say, a
            reproduction's ``runs/``): a folder holding only those is the command's
            unfinished output.
        mark: write the manifest now (``finished: false``; the folder is made if
            missing); without it nothing is written until :func:`finish_folder`, for a
            command that writes nothing unless all of its output can be written.

    Raises:
        OutputError: the folder is a file, an input or inside one, holds another
            command's output or files of no known command, or holds this command's
            earlier output without ``overwrite``.
    """
    if "\x00" in str(folder):
        raise OutputError(f"{option} {str(folder)!r} cannot name a folder: it holds a NUL byte")
    path = Path(folder)
    _refuse_inputs(path, option, inputs)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{option} {path} is a file, not a folder")
    found = owner(path)
    held = [p.name for p in path.iterdir() if p.name != MANIFEST] if path.is_dir() else []
    if found is None and held and set(held) <= set(own):
        found, held = made_by, []  # only what the command's own rules govern
    if held:
        if found is None:
            raise OutputError(
                f"{option} {path} holds files that no proofgames command wrote there "
                "(no .proofgames.json); choose a new or empty folder"
            )
        if found != made_by:
            raise OutputError(
                f"{option} {path} holds the output of {found!r}; choose another folder"
            )
        if not overwrite and _manifest(path).get("finished") is not False:
            raise OutputError(
                f"{option} {path} holds an earlier {made_by!r} output; give --overwrite "
                "to replace it"
            )
    if mark:
        write_json(path / MANIFEST, {"made_by": made_by, "finished": False}, indent=1, parents=True)
    return path


@contextmanager
def writing_folder(
    folder: Path | str,
    made_by: str,
    *,
    option: str = "--out",
    overwrite: bool = False,
    inputs: Iterable[Path | str] = (),
    own: Iterable[str] = (),
    mark: bool = True,
) -> Iterator[Path]:
    """:func:`claim_folder` before the block, :func:`finish_folder` once it has succeeded.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp()) / "out"
        >>> with writing_folder(folder, "proofgames report") as out:
        ...     _ = (out / "report.md").write_text("# done")
        >>> _manifest(folder)
        {'made_by': 'proofgames report', 'finished': True}
    """
    path = claim_folder(
        folder, made_by, option=option, overwrite=overwrite, inputs=inputs, own=own, mark=mark
    )
    yield path
    finish_folder(path, made_by)


def finish_folder(folder: Path | str, made_by: str) -> None:
    """Record that ``made_by``'s output in ``folder`` is complete."""
    write_json(
        Path(folder) / MANIFEST, {"made_by": made_by, "finished": True}, indent=1, parents=True
    )


def check_output_file(
    path: Path | str,
    *,
    option: str = "--out",
    overwrite: bool = False,
    inputs: Iterable[Path | str] = (),
) -> Path:
    """Check that a command may write the single file ``path`` (nothing is written).

    Raises:
        OutputError: ``path`` is a folder, an input or inside one, lies in a training
            run's folder or another command's report folder, or exists and ``overwrite``
            was not given.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{option} {target} is a folder, not a file")
    _refuse_inputs(target, option, inputs)
    parent = target.parent if str(target.parent) else Path(".")
    made_by = owner(parent)
    if made_by is not None:
        raise OutputError(f"{option} {target} lies in the output folder of {made_by!r}")
    run = [name for name in RUN_MARKERS if (parent / name).exists()]
    if run:
        raise OutputError(
            f"{option} {target} lies in a training run's folder (it holds {', '.join(run)})"
        )
    if target.exists() and not overwrite:
        raise OutputError(f"{option} {target} exists; give --overwrite to replace it")
    return target


def _refuse_inputs(target: Path, option: str, inputs: Iterable[Path | str]) -> None:
    """Refuse ``target`` if it is one of ``inputs`` or lies inside one."""
    here = _real(target)
    for item in inputs:
        source = _real(Path(item))
        if here == source or source in here.parents:
            raise OutputError(f"{option} {target} is an input of this command ({item})")


def _real(path: Path) -> Path:
    """``path`` with links and ``..`` resolved, as far as it exists."""
    return Path(os.path.realpath(path))
