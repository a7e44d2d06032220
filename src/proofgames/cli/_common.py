"""What every ``proofgames`` command shares: the consoles, the ``--json`` option, the error path.

Import these names rather than defining them again (the ``pvg`` commands may use them too):

- :data:`console`: the one stdout console (tables, messages); 120 columns when stdout is
  not a terminal, so a log or a pipe gets whole tables.
- :data:`err_console`: the one stderr console (errors, warnings, progress bars); one
  line per message, even in a pipe.
- :data:`JsonOption`: the ``--json`` flag, ``as_json: JsonOption = False``.
- :data:`OverwriteOption`: the ``--overwrite`` flag of the commands that write outputs.
- :func:`echo_json`: print strict JSON on stdout (a number that is not finite is null).
- :func:`fail`: print ``error: MESSAGE`` on stderr and exit with status 2.
- :func:`one_line_errors`: the one place a :class:`~proofgames.errors.ProofgamesError`
  becomes :func:`fail`'s line (and, where asked, a ``MemoryError`` too).
- :func:`run`: run a Typer app as a console script, a usage error also one ``error:`` line.

Example:
    >>> import typer
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli._common import JsonOption, echo_json, fail
    >>> app = typer.Typer()
    >>> @app.command()
    ... def show(n: int, as_json: JsonOption = False) -> None:
    ...     if n < 0:
    ...         fail(f"n must be non-negative, got {n}")
    ...     echo_json({"n": n}) if as_json else print(n)
    >>> print(CliRunner().invoke(app, ["3", "--json"]).stdout.strip())
    {"n": 3}
    >>> res = CliRunner().invoke(app, ["--", "-1"])
    >>> res.exit_code, res.stderr.strip()
    (2, 'error: n must be non-negative, got -1')
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.exceptions import TyperException

from .. import interrupts
from ..errors import ProofgamesError
from ..reporting.json import dumps

#: The stdout console. Tables are wide: non-terminal output (logs, pipes) gets room
#: instead of rich's 80 columns. Neither console turns ``:name:`` into an emoji: a party's
#: or a model's text is shown as it was sent (and rich's emoji table is never loaded).
console = Console(emoji=False) if sys.stdout.isatty() else Console(width=120, emoji=False)
#: The stderr console: one line per message, even piped (errors, warnings, progress).
err_console = Console(stderr=True, soft_wrap=True, emoji=False)

#: ``--json`` of every command that can print JSON; its output goes to stdout, any
#: progress bar stays on stderr.
JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        help="print JSON instead of tables (strict: NaN and infinities are null)",
    ),
]


#: ``--overwrite`` of every command that writes a report folder or an output file: it
#: replaces the command's own earlier output, never another command's or run's files
#: (:mod:`proofgames.reporting.outputs`).
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="replace this command's own earlier output there (never another command's)",
    ),
]


def echo_json(data: Any, *, indent: int | None = None) -> None:
    """Print ``data`` on stdout as strict JSON (non-finite numbers as ``null``).

    Example:
        >>> echo_json({"winner": "A", "ratio": float("nan")})
        {"winner": "A", "ratio": null}
    """
    print(dumps(data, indent=indent))


def error(message: str) -> None:
    """Print ``error: MESSAGE`` on stderr, on one line (``message`` is plain text).

    Example:
        >>> with err_console.capture() as shown:
        ...     error("no example [bb9]")
        >>> "error:" in shown.get() and "no example [bb9]" in shown.get()
        True
    """
    err_console.print(f"[bold red]error:[/] {escape(message)}")


def fail(message: str) -> NoReturn:
    """Refuse: print ``error: MESSAGE`` on stderr and exit with status 2.

    Example:
        >>> with err_console.capture() as shown:
        ...     try:
        ...         fail("--claim must be 0 or 1, got 7")
        ...     except typer.Exit as exc:
        ...         print("exit status", exc.exit_code)
        exit status 2
        >>> "--claim must be 0 or 1, got 7" in shown.get()
        True
    """
    error(message)
    raise typer.Exit(2)


@contextmanager
def one_line_errors(
    *, also: tuple[type[Exception], ...] = (), out_of_memory: str | None = None
) -> Iterator[None]:
    """Turn a :class:`~proofgames.errors.ProofgamesError` raised inside into :func:`fail`.

    Args:
        also: more exception types refused the same way (their ``str`` is the message),
            e.g. ``(OSError,)`` around a file being written.
        out_of_memory: if given, a ``MemoryError`` is refused as
            ``out of memory: OUT_OF_MEMORY`` (otherwise it propagates).

    Example:
        >>> with err_console.capture() as shown:
        ...     try:
        ...         with one_line_errors():
        ...             raise ProofgamesError("unknown example 'bb9'")
        ...     except typer.Exit as exc:
        ...         print("exit status", exc.exit_code)
        exit status 2
        >>> "unknown example 'bb9'" in shown.get()
        True
    """
    refused: tuple[type[Exception], ...] = (ProofgamesError, *also)
    try:
        yield
    except refused as exc:
        fail(str(exc))
    except MemoryError:
        if out_of_memory is None:
            raise
        fail(f"out of memory: {out_of_memory}")


def run(app: typer.Typer, args: Sequence[str], prog_name: str) -> NoReturn:
    """Run ``app`` as a console script; a usage error, too, is one ``error:`` line on stderr.

    Exits with the command's status: 2 for a usage error (with a pointer to ``--help``),
    a bare command group's help with status 2; a user's SIGINT or SIGTERM stops the
    command with one line and ``128 + signal`` (130, 143), never as a party's move
    (:mod:`proofgames.interrupts`).

    Example:
        >>> app = typer.Typer()
        >>> @app.command()
        ... def hello(n: int) -> None:
        ...     print("hello" * n)
        >>> try:
        ...     run(app, ["2"], "hello")
        ... except SystemExit as exc:
        ...     print("exit status", exc.code)
        hellohello
        exit status 0
    """
    try:
        with interrupts.guard():
            code = app(args=list(args), prog_name=prog_name, standalone_mode=False)
    except interrupts.Interrupted as exc:
        error(str(exc))
        sys.exit(exc.exit_code)
    except TyperException as exc:  # a bad option or value, as the parser found it
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help())  # a bare command group: its help, as Typer would
            sys.exit(2)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        error(f"{exc.format_message()}{hint}")
        sys.exit(getattr(exc, "exit_code", 2))
    except ProofgamesError as exc:  # one a command did not refuse itself (e.g. a plugin's)
        error(str(exc))
        sys.exit(2)
    except typer.Abort:  # Click's form of a KeyboardInterrupt that was not our guard's
        error(str(interrupts.Interrupted(signal.SIGINT)))
        sys.exit(128 + signal.SIGINT)
    sys.exit(code if isinstance(code, int) else 0)
