"""``proofgames selfplay report``: learned debaters and baselines, measured exactly.

Trains A and B by self-play PPO on bisection, cross-examination and the stochastic
protocol, and single provers under consultancy and no debate, then writes the report
(``report.md``, ``results.json``, one figure per run) to ``--out``.  Needs the ``pvg``
extra (PyTorch).

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["selfplay", "report", "--scale", "0"])
    >>> res.exit_code, "--scale must be positive" in res.output
    (2, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import OverwriteOption, console, fail, one_line_errors

app = typer.Typer(
    no_args_is_help=True,
    help="Self-play: learned debaters against exact best responses, and baselines.",
)


@app.command("report")
def report(
    out: Annotated[str, typer.Option(help="directory for report.md, results.json and figures")] = (
        "reports/self-play"
    ),
    seed: Annotated[
        int, typer.Option(min=0, help="root seed of every random choice (non-negative)")
    ] = 0,
    scale: Annotated[
        float, typer.Option(help="multiply every run's training iterations (1: the report's)")
    ] = 1.0,
    overwrite: OverwriteOption = False,
) -> None:
    """Train every run of the self-play report and write it (a few minutes on one core)."""
    if not scale > 0:
        fail(f"--scale must be positive, got {scale}")
    from ..experiments.selfplay_report import write_report
    from ..reporting import writing_folder

    with (
        one_line_errors(),
        writing_folder(out, "proofgames selfplay report", overwrite=overwrite),
    ):
        path = write_report(Path(out), seed=seed, scale=scale)
    console.print(f"wrote {path}")
