r"""Writing reports and results: strict JSON, atomic writes, README blocks, tables, figures.

Every report and result writer of proofgames uses this package, the layer below them all
(it imports nothing from proofgames but :mod:`proofgames.errors`):

* :mod:`.json`: :func:`dumps`, strict JSON (a non-finite float is ``null``), and
  :func:`write_json`, the same written atomically;
* :mod:`.files`: :func:`write_atomic` and :func:`save_with` (a temporary file beside the
  target, ``fsync``, ``os.replace``), used for text, figures and checkpoints alike;
* :mod:`.readme`: :func:`check_block` and :func:`replace_block`, a generated block of a
  README between its markers;
* :mod:`.tables`: :func:`markdown_table`;
* :mod:`.figures`: :func:`save_figure`;
* :mod:`.outputs`: :func:`claim_folder` and :func:`check_output_file`, the one rule of
  where a command may write (never over another command's or run's files, never into an
  input, ``--overwrite`` to replace its own);
* :mod:`.reading`: :func:`read_text`, :func:`read_json`, :func:`read_json_lines` and
  :func:`open_regular`, every file read back: regular files only (never a FIFO or a
  device), a size cap, UTF-8, strict JSON of bounded depth, errors naming the file.

Example:
    >>> import pathlib, tempfile
    >>> from proofgames.reporting import markdown_table, write_json
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> write_json(path, {"x": float("inf")}).read_text()
    '{"x": null}\n'
    >>> markdown_table(["x"], [[1]])
    '| x |\n|---|\n| 1 |\n'
"""

from __future__ import annotations

from .figures import save_figure
from .files import WriteError, save_with, write_atomic
from .json import dumps, plain, write_json
from .outputs import (
    OutputError,
    check_output_file,
    claim_folder,
    finish_folder,
    writing_folder,
)
from .reading import (
    ReadError,
    open_regular,
    parse_json,
    read_bytes,
    read_json,
    read_json_lines,
    read_text,
)
from .readme import ReadmeError, check_block, markers, replace_block
from .tables import markdown_table

__all__ = [
    "OutputError",
    "ReadError",
    "ReadmeError",
    "WriteError",
    "check_block",
    "check_output_file",
    "claim_folder",
    "dumps",
    "finish_folder",
    "markdown_table",
    "markers",
    "open_regular",
    "parse_json",
    "plain",
    "read_bytes",
    "read_json",
    "read_json_lines",
    "read_text",
    "replace_block",
    "save_figure",
    "save_with",
    "write_atomic",
    "write_json",
    "writing_folder",
]
