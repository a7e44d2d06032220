"""The command line's shape: the order of ``proofgames --help``, and one ``--json``.

``--help`` lists the commands in three panels, in the order a newcomer meets them; every
command that prints JSON takes the one ``--json`` defined in ``proofgames.cli._common``,
the ``proofgames pvg`` commands too (their app, :mod:`proofgames.cli.pvg`, needs PyTorch:
without it they are left out).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer
import typer.main
from typer.models import OptionInfo
from typer.testing import CliRunner

from proofgames.cli import COMMANDS, app
from proofgames.cli._common import JsonOption

SRC = Path(__file__).resolve().parents[2] / "src" / "proofgames"

#: ``proofgames --help``'s panels and their commands, in order.
HELP_ORDER = {
    "Debates": ["debate", "protocols", "strategies", "examples", "demo", "party-server"],
    "Analysis": ["exhaustive", "estimate", "report", "params"],
    "Learning, language and human judges": ["pvg", "language", "judge", "selfplay"],
}

#: Every command that can print JSON.
JSON_COMMANDS = {
    "debate",
    "demo",
    "exhaustive",
    "estimate",
    "params optimize",
    "language generated",
    "language gsm8k",
    "language compare",
    "language summarize",
    "language crossplay",
    "language reading",
}

#: Every ``proofgames pvg`` command that can print JSON (checked where PyTorch is).
PVG_JSON_COMMANDS = {
    "pvg train",
    "pvg stress",
    "pvg reproduce",
    "pvg curves",
    "pvg diagnose",
    "pvg stability",
    "pvg start-gradient",
}

HAS_TORCH = importlib.util.find_spec("torch") is not None


def commands(typer_app: typer.Typer, prefix: str = "") -> Iterator[tuple[str, Callable[..., Any]]]:
    """``(full command name, function)`` of every command of ``typer_app``, in order."""
    for info in typer_app.registered_commands:
        assert info.callback is not None
        name = info.name or info.callback.__name__.replace("_", "-")
        yield f"{prefix}{name}", info.callback
    for group in typer_app.registered_groups:
        assert group.typer_instance is not None and group.name is not None
        yield from commands(group.typer_instance, f"{prefix}{group.name} ")


def all_commands() -> Iterator[tuple[str, Callable[..., Any]]]:
    """:func:`commands` of the whole command line: ``pvg``'s too, where PyTorch is.

    The top-level commands are declared in :data:`proofgames.cli.COMMANDS` (loaded by
    name); ``proofgames pvg`` hands its arguments to an app of its own, loaded when it runs.
    """
    for name, entry in COMMANDS.items():
        target = entry.target()
        if entry.group:
            yield from commands(target, f"{name} ")
        else:
            yield name, target
    if HAS_TORCH:
        from proofgames.cli.pvg import app as pvg_app

        yield from commands(pvg_app, "pvg ")


def json_parameters(function: Callable[..., Any]) -> dict[str, Any]:
    """``{parameter: annotation}`` of the parameters of ``function`` that are ``--json``."""
    found = {}
    for name, hint in typing.get_type_hints(function, include_extras=True).items():
        for info in getattr(hint, "__metadata__", ()):
            decls = [info.default, *info.param_decls] if isinstance(info, OptionInfo) else []
            if "--json" in decls:
                found[name] = hint
    return found


def test_help_lists_the_commands_in_panels_in_a_newcomers_order() -> None:
    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    text = res.stdout
    panels = [m.start() for title in HELP_ORDER for m in re.finditer(f"─ {title} ─", text)]
    assert len(panels) == len(HELP_ORDER) and panels == sorted(panels), text
    listed = re.findall(r"^│ ([a-z-]+)\s", text, re.MULTILINE)
    shown = [name for name in listed if not name.startswith("-")]
    assert shown == [name for names in HELP_ORDER.values() for name in names], text
    for (title, names), start, end in zip(
        HELP_ORDER.items(), panels, [*panels[1:], len(text)], strict=True
    ):
        assert re.findall(r"^│ ([a-z-]+)\s", text[start:end], re.MULTILINE) == names, title


def test_every_command_is_in_the_help_order() -> None:
    assert list(COMMANDS) == [name for names in HELP_ORDER.values() for name in names]
    assert {name: entry.panel for name, entry in COMMANDS.items()} == {
        name: title for title, names in HELP_ORDER.items() for name in names
    }


def test_a_command_loads_its_own_module_only() -> None:
    """``proofgames debate ...`` builds the debate command alone (Click's lazy group)."""
    group = typer.main.get_command(app)
    assert not group.commands  # type: ignore[attr-defined]
    ctx = typer.Context(group)
    debate = group.get_command(ctx, "debate")  # type: ignore[attr-defined]
    assert debate is not None and debate.name == "debate"
    assert set(group.commands) == {"debate"}  # type: ignore[attr-defined]
    assert group.get_command(ctx, "no-such-command") is None  # type: ignore[attr-defined]
    assert group.list_commands(ctx) == list(COMMANDS)  # type: ignore[attr-defined]


def json_definitions(path: Path) -> int:
    """How many ``typer.Option(..., "--json", ...)`` calls the file at ``path`` makes."""
    found = 0
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Option":
            found += any(isinstance(a, ast.Constant) and a.value == "--json" for a in node.args)
    return found


def test_json_is_defined_once_in_the_source() -> None:
    defined = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if count := json_definitions(path):
            defined[relative.as_posix()] = count
    assert defined == {"cli/_common.py": 1}


def test_every_command_with_json_output_uses_the_shared_option() -> None:
    with_json = {}
    for name, function in all_commands():
        for parameter, hint in json_parameters(function).items():
            assert hint == JsonOption, f"{name}: --json ({parameter}) is not JsonOption"
            with_json[name] = parameter
    assert set(with_json) == JSON_COMMANDS | (PVG_JSON_COMMANDS if HAS_TORCH else set())


def test_each_command_group_keeps_its_subcommands_even_when_it_has_one() -> None:
    """A Typer app of one command would collapse into that command (``selfplay report``
    would become ``selfplay``); the lazy group builds each app as a group."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    for name, entry in COMMANDS.items():
        if not entry.group:
            continue
        built = group.get_command(ctx, name)  # type: ignore[attr-defined]
        expected = [
            full.split(" ", 1)[1].split(" ")[0] for full, _ in commands(entry.target(), f"{name} ")
        ]
        assert sorted(built.commands) == sorted(set(expected)), name
