"""The ``proofgames pvg`` Typer app: every command of the Prover-Verifier Games CLI.

Private to :mod:`proofgames.cli.pvg`, which exports :data:`app` (importing it loads
PyTorch). Each command is defined in a module of its own: ``train``
(:mod:`~proofgames.cli.pvg._train`), ``stress`` (:mod:`~proofgames.cli.pvg._stress`),
``reproduce`` and ``report`` (:mod:`~proofgames.cli.pvg._reproduce`), ``curves``,
``heldout``,
``diagnose``, ``stability`` and ``start-gradient``.

Example:
    >>> [command.name for command in app.registered_commands][:4]
    ['train', 'stress', 'reproduce', 'report']
"""

from __future__ import annotations

import typer

from ._curves import curves_command
from ._diagnose import diagnose_command
from ._heldout import heldout_command
from ._reproduce import report_command, reproduce_command
from ._stability import stability_command, start_gradient_command
from ._stress import stress_command
from ._train import train_command

__all__ = ["app", "report_command", "reproduce_command", "stress_command", "train_command"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Prover-Verifier Games (Anil et al. 2021): train agents, stress-test verifiers. "
    "A bad input is refused with a one-line message on stderr and exit status 2.",
)

app.command("train")(train_command)
app.command("stress")(stress_command)
app.command("reproduce")(reproduce_command)
app.command("report")(report_command)
app.command("curves")(curves_command)
app.command("heldout")(heldout_command)
app.command("diagnose")(diagnose_command)
app.command("stability")(stability_command)
app.command("start-gradient")(start_gradient_command)
