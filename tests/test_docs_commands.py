"""Issue 34, defect 9: every ``proofgames`` command the README and docs show exists.

``docs/wire.md`` named a ``proofgames play`` command there has never been. This reads
the code in the README and ``docs/`` (inline and fenced) and asks the command line for
the help of each command and subcommand it names.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from proofgames.cli import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
COMMAND = re.compile(r"(?<![\w./-])proofgames((?: [a-z][a-z0-9-]*)+)")


def _shown() -> set[tuple[str, ...]]:
    """(command, subcommand) pairs named in code on the pages (subcommand may be '')."""
    found = set()
    for page in PAGES:
        for block, inline in CODE.findall(page.read_text(encoding="utf-8")):
            for line in (block or inline).splitlines():
                line = line.split("#")[0]  # a shell comment is prose
                if re.search(r"\b(import|from)\s+proofgames", line):
                    continue
                for words in COMMAND.findall(line):
                    parts = words.split()
                    found.add((parts[0], parts[1] if len(parts) > 1 else ""))
    return found


def _tree() -> dict[str, set[str]]:
    """Each command of the CLI, with its subcommands (empty for a plain command)."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    out = {}
    for name in group.list_commands(ctx):  # type: ignore[attr-defined]
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        out[name] = set(getattr(command, "commands", {}) or {})
    return out


def test_the_pages_name_commands_at_all():
    shown = _shown()
    assert {c for c, _ in shown} >= {"debate", "estimate", "judge", "pvg", "language"}


@pytest.mark.parametrize(("command", "sub"), sorted(_shown()))
def test_each_command_named_in_the_docs_exists(command, sub):
    tree = _tree()
    assert command in tree, f"the docs name 'proofgames {command}', which does not exist"
    if tree[command] and sub and not sub.startswith("-"):
        assert sub in tree[command], f"'proofgames {command} {sub}' does not exist"
