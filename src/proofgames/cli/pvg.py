"""``proofgames pvg ...``: hands its arguments to the Prover-Verifier Games command line.

That command line (:mod:`proofgames.pvg.cli`) needs PyTorch (the ``pvg`` extra), so it is
imported only when ``proofgames pvg`` runs; without PyTorch the command is refused with
one ``error:`` line naming the extra.

Example:
    >>> from proofgames.cli.pvg import CONTEXT
    >>> CONTEXT["allow_extra_args"] and CONTEXT["ignore_unknown_options"]
    True
"""

from __future__ import annotations

import typer

from ._common import fail

#: Every argument after ``pvg`` (``--help`` too) goes to the pvg command line unparsed.
CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


def pvg(ctx: typer.Context) -> None:
    """Prover-Verifier Games: train and stress-test agents (needs the 'pvg' extra)."""
    try:
        from ..pvg.cli import app as pvg_app  # imported here: PyTorch loads only when needed
    except ImportError as exc:
        fail(f"proofgames pvg needs PyTorch: pip install 'proofgames[pvg]' ({exc})")
    code = pvg_app(args=list(ctx.args), prog_name="proofgames pvg", standalone_mode=False)
    if isinstance(code, int) and code:
        raise typer.Exit(code)
