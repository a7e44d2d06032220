r"""Saving a report's figures: to a file atomically, or to a binary stream.

Figures are drawn with matplotlib's object API (``matplotlib.figure.Figure``), not
:mod:`matplotlib.pyplot`, so that a caller's backend and pyplot's list of open figures
stay as they were; this module does not import matplotlib at all.

Example:
    >>> import io, pathlib, tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(1, 1))
    >>> _ = fig.subplots().plot([0, 1])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "line.png"
    >>> save_figure(fig, path, dpi=20) == path, path.read_bytes()[:4]
    (True, b'\x89PNG')
    >>> stream = io.BytesIO()
    >>> _ = save_figure(fig, stream, dpi=20)
    >>> stream.getvalue()[:4]
    b'\x89PNG'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, Protocol

from .files import save_with


class Drawn(Protocol):
    """What :func:`save_figure` needs of a figure: matplotlib's ``savefig``."""

    def savefig(self, fname: Any, **kwargs: Any) -> Any:
        """Write the figure to ``fname`` (a path or a binary stream)."""


def save_figure(
    fig: Drawn,
    target: Path | BinaryIO,
    *,
    dpi: float = 110,
    fmt: str | None = None,
    parents: bool = False,
) -> Path | BinaryIO:
    """Save ``fig`` to a file (atomically, see :func:`~.files.save_with`) or a binary stream.

    ``fmt``: the image format; by default the file's suffix (``.png``, ``.svg``...), and
    PNG for a stream or a file without one.  ``parents`` makes missing folders.

    Raises:
        WriteError: the file cannot be written (the old one, if any, is kept).
    """
    if not isinstance(target, Path):
        fig.savefig(target, dpi=dpi, format=fmt or "png")
        return target
    kind = fmt or target.suffix.lstrip(".") or "png"
    return save_with(target, lambda tmp: fig.savefig(tmp, dpi=dpi, format=kind), parents=parents)
