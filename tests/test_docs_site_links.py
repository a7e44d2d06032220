"""The site keeps the guides' links to repository files working; a dead link fails it.

``tools/mkdocs_hooks.py`` puts the files the guides link to outside ``docs/`` (reports,
the README, sources, folders) into the built site and rewrites the links to them; a link
to nothing is left as written, so that ``mkdocs build --strict`` fails on it. Without the
hooks, the guides have 66 links that lead nowhere on the site (reports, the README,
sources); the old configuration reported them at INFO level only, so the build passed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "tools" / "mkdocs_hooks.py"


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", HOOKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_links_leaving_docs_are_rewritten_to_the_site_and_code_is_left_alone():
    hooks = _hooks()
    text = (
        "[r](../reports/README.md#x) ![f](../reports/judge/01-admin-invite.png) "
        "[`code`](../src/proofgames/__init__.py) `[not](../README.md)` [page](pvg.md) "
        "[dead](../no/such.md) [web](https://example.org/a.md)\n"
        "```\n[fenced](../README.md)\n```\n"
    )
    out = hooks.rewrite(text, "docs/pvg.md")
    assert "[r](repo/reports/README.md#x)" in out
    assert "![f](repo/reports/judge/01-admin-invite.png)" in out
    assert "[`code`](repo/src/proofgames/__init__.py)" in out
    for kept in ("`[not](../README.md)`", "[page](pvg.md)", "[dead](../no/such.md)",
                 "(https://example.org/a.md)", "[fenced](../README.md)"):  # fmt: skip
        assert kept in out, kept
    assert hooks.rewrite("[back](../../docs/pvg.md)", "reports/pvg/report.md") == (
        "[back](../../../pvg.md)"  # from repo/reports/pvg/report.md to the guide
    )
    assert hooks.links("[j](../reports/judge)", "docs/a.md") == ["reports/judge/index.md"]
    assert "01-admin-invite.png" in hooks.listing("reports/judge")


def _build(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", "site"],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_a_dead_link_fails_the_strict_build_and_live_ones_reach_the_site(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("a\n")
    (tmp_path / "README.md").write_text("# Front\n\nSee [the guide](docs/index.md).\n")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nhooks:\n  - " + str(HOOKS) + "\nvalidation:\n  links:\n"
        "    not_found: warn\n    anchors: warn\n    unrecognized_links: warn\n"
    )
    page = tmp_path / "docs" / "index.md"
    page.write_text("# Home\n\n[front](../README.md#front) [notes](../notes) [gone](../gone.md)\n")
    failed = _build(tmp_path)
    assert failed.returncode != 0 and "gone.md" in failed.stderr, failed.stderr[-2000:]
    page.write_text("# Home\n\n[front](../README.md#front) [notes](../notes)\n")
    built = _build(tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    site = tmp_path / "site"
    assert "Front" in (site / "repo" / "index.html").read_text()  # README.md: the index
    assert (site / "repo" / "notes" / "a.txt").read_text() == "a\n"
    assert "a.txt" in (site / "repo" / "notes" / "index.html").read_text()
    home = (site / "index.html").read_text()
    assert 'href="repo/#front"' in home and 'href="repo/notes/"' in home
