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
* :mod:`.figures`: :func:`save_figure`.

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
from .readme import ReadmeError, check_block, markers, replace_block
from .tables import markdown_table

__all__ = [
    "ReadmeError",
    "WriteError",
    "check_block",
    "dumps",
    "markdown_table",
    "markers",
    "plain",
    "replace_block",
    "save_figure",
    "save_with",
    "write_atomic",
    "write_json",
]
