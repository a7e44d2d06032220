"""The ``proofgames`` command line: :data:`app` (the Typer app) and :func:`main` (the script).

One module per command group; :mod:`proofgames.cli._common` holds what they share (the
consoles, ``--json``, the one ``error:`` path). ``proofgames --help`` lists the commands
in three panels, in the order a newcomer meets them:

- *Debates*: ``debate``, ``protocols``, ``strategies``, ``examples``, ``demo``,
  ``party-server`` (:mod:`~proofgames.cli.debate`, :mod:`~proofgames.cli.catalog`,
  :mod:`~proofgames.cli.demo`);
- *Analysis*: ``exhaustive``, ``estimate``, ``report``, ``params``
  (:mod:`~proofgames.cli.debate`, :mod:`~proofgames.cli.stochastic`,
  :mod:`~proofgames.cli.params`);
- *Learning, language and human judges*: ``pvg``, ``language``, ``judge``, ``selfplay``
  (:mod:`~proofgames.cli.pvg`, :mod:`~proofgames.cli.language`,
  :mod:`~proofgames.cli.judge`, :mod:`~proofgames.cli.selfplay`).

Each command imports what it runs when it runs, so ``proofgames --help`` stays quick.

Example:
    >>> from typer.testing import CliRunner
    >>> res = CliRunner().invoke(app, ["protocols"])
    >>> res.exit_code, "bisection" in res.stdout
    (0, True)
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from . import catalog, debate, demo, judge, language, params, pvg, selfplay, stochastic
from ._common import console, err_console, one_line_errors, run
from .debate import outcome_table

__all__ = ["app", "console", "err_console", "main", "outcome_table"]

DEBATES = "Debates"
ANALYSIS = "Analysis"
BEYOND = "Learning, language and human judges"


class _Commands(TyperGroup):
    """The root group: an argument with a NUL character is a usage error, whatever it is.

    No shell can pass one, but in-process callers can, and typer's path parameters would
    raise ``ValueError`` from ``os.stat`` on it (a traceback, not a message).
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for number, arg in enumerate(args, 1):
            if "\x00" in arg:
                raise typer.BadParameter(
                    f"argument {number} ({arg!r}) contains a NUL character, which no file "
                    "name, number or name can hold"
                )
        return list(super().parse_args(ctx, args))


app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    no_args_is_help=True,
    help="Interactive-proof games for AI oversight: doubly-efficient debate on real computations.",
)


@app.callback()
def _load_plugins() -> None:
    """Import the plugin modules ``PROOFGAMES_PLUGINS`` names before a command.

    The entry points are scanned when a registry first misses a name or lists its names
    (:func:`proofgames.plugins.ensure_loaded`), not by every command.
    """
    from .. import plugins

    with one_line_errors():
        plugins.load_if_named()


app.command(rich_help_panel=DEBATES, cls=debate.DebateCommand)(debate.debate)
app.command(rich_help_panel=DEBATES)(catalog.protocols)
app.command(rich_help_panel=DEBATES)(catalog.strategies)
app.command(rich_help_panel=DEBATES)(catalog.examples)
app.command(rich_help_panel=DEBATES)(demo.demo)
app.command("party-server", rich_help_panel=DEBATES)(debate.party_server)

app.command(rich_help_panel=ANALYSIS)(debate.exhaustive)
app.command(rich_help_panel=ANALYSIS)(stochastic.estimate)
app.command(rich_help_panel=ANALYSIS)(stochastic.report)
app.add_typer(params.app, name="params", rich_help_panel=ANALYSIS)

pvg_command = app.command("pvg", context_settings=pvg.CONTEXT, add_help_option=False,
                          rich_help_panel=BEYOND)  # fmt: skip
pvg_command(pvg.pvg)
app.add_typer(language.app, name="language", rich_help_panel=BEYOND)
app.add_typer(judge.app, name="judge", rich_help_panel=BEYOND)
app.add_typer(selfplay.app, name="selfplay", rich_help_panel=BEYOND)


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point: usage errors, too, are one ``error:`` line on stderr.

    Args:
        argv: the arguments (default: the process's, ``sys.argv[1:]``).

    Example:
        >>> with err_console.capture() as shown:
        ...     try:
        ...         main(["strategies", "no-such-protocol"])
        ...     except SystemExit as exc:
        ...         print("exit status", exc.code)
        exit status 2
        >>> "unknown protocol 'no-such-protocol'" in shown.get()
        True
    """
    run(app, sys.argv[1:] if argv is None else argv, "proofgames")
