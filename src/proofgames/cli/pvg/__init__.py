"""``proofgames pvg ...``: the Prover-Verifier Games commands (the ``pvg`` extra).

Two parts, so that ``proofgames --help`` stays quick and works without PyTorch:

- :func:`pvg`, the command the top-level app registers: it hands every argument after
  ``pvg`` (``--help`` too) to :data:`app`; without PyTorch it is refused with one
  ``error:`` line naming the extra.
- :data:`app`, the pvg Typer app (``train``, ``stress``, ``reproduce``, ``report``,
  ``curves``, ``diagnose``, ``stability``, ``start-gradient``; see
  :mod:`~proofgames.cli.pvg._app`). It needs PyTorch, so it is imported when first
  asked for: ``from proofgames.cli.pvg import app`` loads it, ``import proofgames.cli``
  does not.

The commands share :mod:`proofgames.cli._common` (consoles, ``--json``, ``error:``)
with the rest of the command line, and :mod:`~proofgames.cli.pvg._support` among
themselves.

Example:
    >>> CONTEXT["allow_extra_args"] and CONTEXT["ignore_unknown_options"]
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from .._common import fail

if TYPE_CHECKING:  # loaded on first use (PyTorch): see __getattr__
    from ._app import app, report_command, reproduce_command, stress_command, train_command

__all__ = [
    "CONTEXT",
    "app",
    "pvg",
    "report_command",
    "reproduce_command",
    "stress_command",
    "train_command",
]

#: Every argument after ``pvg`` (``--help`` too) goes to the pvg command line unparsed.
CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}

#: The names :func:`__getattr__` loads from :mod:`~proofgames.cli.pvg._app` on first use.
_LAZY = ("app", "report_command", "reproduce_command", "stress_command", "train_command")


def __getattr__(name: str) -> Any:
    """Load :data:`app` (and the command functions) when first asked for: they need PyTorch.

    Example:
        >>> import proofgames.cli.pvg as pvg_cli
        >>> pvg_cli.no_such_name
        Traceback (most recent call last):
        AttributeError: module 'proofgames.cli.pvg' has no attribute 'no_such_name'
    """
    if name in _LAZY:
        from . import _app

        return getattr(_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pvg(ctx: typer.Context) -> None:
    """Prover-Verifier Games: train and stress-test agents (needs the 'pvg' extra)."""
    try:
        from ._app import app as pvg_app  # imported here: PyTorch loads only when needed
    except ImportError as exc:
        fail(f"proofgames pvg needs PyTorch: pip install 'proofgames[pvg]' ({exc})")
    code = pvg_app(args=list(ctx.args), prog_name="proofgames pvg", standalone_mode=False)
    if isinstance(code, int) and code:
        raise typer.Exit(code)
