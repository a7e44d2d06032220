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

The commands are declared once, in :data:`COMMANDS`, and loaded by name (Click's lazy
group): ``proofgames debate ...`` imports and builds the ``debate`` command alone, not the
other twelve; ``--help`` and the documentation tests load them all.  Each command, in
turn, imports what it runs when it runs.

Example:
    >>> from typer.testing import CliRunner
    >>> res = CliRunner().invoke(app, ["protocols"])
    >>> res.exit_code, "bisection" in res.stdout
    (0, True)
    >>> COMMANDS["params"].module, COMMANDS["params"].group
    ('params', True)
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

import typer
import typer.main
from typer.core import TyperGroup

from ._common import one_line_errors, run

__all__ = ["COMMANDS", "Entry", "app", "main"]

DEBATES = "Debates"
ANALYSIS = "Analysis"
BEYOND = "Learning, language and human judges"


@dataclass(frozen=True)
class Entry:
    """One top-level command: where it lives and how it is shown.

    Attributes:
        module: its module under :mod:`proofgames.cli`.
        attribute: the command's function there, or (``group``) its Typer app.
        panel: the ``--help`` panel that lists it.
        group: the attribute is a Typer app of subcommands, not one function.
        cls: the name of a command class in the module (``TyperCommand`` subclass), if any.
        context: the name of a Click context-settings mapping in the module, if any.
        help_option: whether the command takes ``--help`` itself (``pvg`` passes it on).
    """

    module: str
    attribute: str
    panel: str
    group: bool = False
    cls: str | None = None
    context: str | None = None
    help_option: bool = True

    def target(self) -> Any:
        """The command's function, or its Typer app (``group``), imported."""
        module = importlib.import_module(f"{__name__}.{self.module}")
        return getattr(module, self.attribute)

    def build(self, name: str) -> Any:
        """The Click command ``name`` runs: its function or app, converted by Typer."""
        target = self.target()
        command: Any
        if self.group:
            command = typer.main.get_group(target)  # a group even of one subcommand
        else:
            module = sys.modules[f"{__name__}.{self.module}"]
            single = typer.Typer(add_completion=False)
            single.command(
                name,
                cls=getattr(module, self.cls) if self.cls else None,
                context_settings=getattr(module, self.context) if self.context else None,
                add_help_option=self.help_option,
                rich_help_panel=self.panel,
            )(target)
            command = typer.main.get_command(single)
        command.name = name
        command.rich_help_panel = self.panel
        return command


#: Every top-level command, in ``--help``'s order: the one place a command is declared.
COMMANDS: dict[str, Entry] = {
    "debate": Entry("debate", "debate", DEBATES, cls="DebateCommand"),
    "protocols": Entry("catalog", "protocols", DEBATES),
    "strategies": Entry("catalog", "strategies", DEBATES),
    "examples": Entry("catalog", "examples", DEBATES),
    "demo": Entry("demo", "demo", DEBATES),
    "party-server": Entry("debate", "party_server", DEBATES),
    "exhaustive": Entry("debate", "exhaustive", ANALYSIS),
    "estimate": Entry("stochastic", "estimate", ANALYSIS),
    "report": Entry("stochastic", "report", ANALYSIS),
    "params": Entry("params", "app", ANALYSIS, group=True),
    "pvg": Entry("pvg", "pvg", BEYOND, context="CONTEXT", help_option=False),
    "language": Entry("language", "app", BEYOND, group=True),
    "judge": Entry("judge", "app", BEYOND, group=True),
    "selfplay": Entry("selfplay", "app", BEYOND, group=True),
}


class _Commands(TyperGroup):
    """The root group: commands loaded by name from :data:`COMMANDS`; NUL arguments refused.

    An argument with a NUL character is a usage error, whatever it is: no shell can pass
    one, but in-process callers can, and typer's path parameters would raise
    ``ValueError`` from ``os.stat`` on it (a traceback, not a message).
    """

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = COMMANDS[cmd_name].build(cmd_name)
        return self.commands.get(cmd_name)

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


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point: usage errors, too, are one ``error:`` line on stderr.

    Args:
        argv: the arguments (default: the process's, ``sys.argv[1:]``).

    Example:
        >>> from proofgames.cli._common import err_console
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
