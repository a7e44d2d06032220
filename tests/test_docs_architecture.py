"""The architecture page reaches every paper figure, command and report generator.

From the README's link, a newcomer reaches the file of any of them in two hops: the
README links ``docs/architecture.md``, whose tables link the files. This test keeps the
tables complete as protocols, commands and reports are added.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from proofgames.cli import app
from proofgames.protocols import get_protocol, protocol_names

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
TEXT = PAGE.read_text()


def _section(title: str) -> str:
    return TEXT.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _linked_files(text: str) -> set[Path]:
    return {(PAGE.parent / link).resolve() for link in re.findall(r"\]\(([^)#]+)\)", text)}


def test_the_readme_links_the_architecture_page():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()


def test_every_built_in_protocol_is_listed_with_its_figure_and_file():
    figures = _section("Where each paper figure lives")
    linked = _linked_files(figures)
    for name in protocol_names():
        info = get_protocol(name)
        module = info.play.__module__
        if not module.startswith("proofgames."):
            continue  # a plugin (the tests' toy protocol): its own file documents it
        path = (ROOT / "src" / Path(*module.split("."))).with_suffix(".py").resolve()
        assert path in linked, f"{name}: {path} is not linked"
        figure = info.figure.split(" (")[0].split(",")[0]
        row = next(line for line in figures.splitlines() if path.name in line)
        assert figure.split()[-1] in row, (name, figure, row)


def _commands() -> list[str]:
    """Every command path: ``debate``, ``params report``, ``pvg train``, ..."""
    click_app = typer.main.get_command(app)
    ctx = typer.Context(click_app)
    out = []
    for name in click_app.list_commands(ctx):  # type: ignore[attr-defined]
        command = click_app.get_command(ctx, name)  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        out += [f"{name} {sub}" for sub in subs] if subs else [name]
    return out


def test_every_command_is_listed_with_a_file_that_exists():
    commands = _section("Where each command lives")
    assert len(_commands()) >= 15
    for command in _commands():
        words = command.split()
        first = re.compile(rf"(proofgames |`){re.escape(words[0])}\b")
        rows = [
            line for line in commands.splitlines() if line.startswith("|") and first.search(line)
        ]
        assert rows, f"proofgames {command} is not listed"
        if len(words) > 1:
            assert any(words[1] in row for row in rows), f"proofgames {command} is not listed"
    for path in _linked_files(commands):
        assert path.exists(), path


def test_every_report_is_listed_with_its_generator():
    reports = _section("Where each report is generated")
    for folder in sorted(p.name for p in (ROOT / "reports").iterdir() if p.is_dir()):
        assert (
            f"`reports/{folder}`" in reports
            or f" `{folder}`" in reports
            or (f", `{folder}`" in reports)
        ), f"reports/{folder} is not listed"
    for path in _linked_files(reports):
        assert path.exists(), path
