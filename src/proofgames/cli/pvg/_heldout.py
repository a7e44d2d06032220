"""``proofgames pvg heldout``: the held-out report of long runs' checkpoints.

Private to :mod:`proofgames.cli.pvg`, which registers the command. See
:mod:`proofgames.pvg.reproduce.heldout` for the ``heldout.json`` it reads.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Annotated

import typer

from ...errors import PVGError
from ...pvg.reproduce._figures import plot_learning
from ...pvg.reproduce.heldout import FIGURE_FILE, read_heldout, write_report
from ...reporting import write_atomic
from .._common import console, one_line_errors
from ._curves import run_curve


def heldout_command(
    folder: Annotated[
        Path,
        typer.Argument(
            help="A folder of run folders with its heldout.json (e.g. reports/pvg-long-40k)."
        ),
    ],
) -> None:
    """Rewrite a long-run folder's report.md and curves.png from heldout.json and the runs' logs.

    The runs named in ``heldout.json`` must be sub-folders with their ``metrics.jsonl``;
    their learning curves go to ``curves.png`` and their held-out tables (with 95 %
    Clopper-Pearson intervals from the saved counts) to ``report.md``.
    """
    with one_line_errors():
        if not folder.is_dir():
            raise PVGError(f"{folder} is not a folder")
        names = sorted(read_heldout(folder)["runs"])
        curves = [run_curve(folder / name) for name in names]
        last = {c["run"]: {k: v[-1] for k, v in c.items() if isinstance(v, list)} for c in curves}
        figure = io.BytesIO()
        plot_learning(curves, figure)
        write_atomic(folder / FIGURE_FILE, figure.getvalue())
        path = write_report(folder, last)
    console.print(f"wrote {path} and {folder / FIGURE_FILE}")
