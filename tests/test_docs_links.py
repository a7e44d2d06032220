"""Every relative link of the README, the docs and the reports leads somewhere.

A link to a file must name a file of the repository; a link with ``#anchor`` must name a
heading of its target (GitHub's anchors: lower case, punctuation dropped, spaces to
hyphens). Links to web addresses are not followed (no network here).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "reports").glob("**/*.md")]
)
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`[^`\n]*`")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (``-1``, ``-2`` for repeats)."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if m := re.match(r"#{1,6}\s+(.*)", line):
            base = anchor(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    """The link targets of a page, outside code."""
    text = CODE.sub("", FENCE.sub("", page.read_text()))
    return [a or b for a, b in LINK.findall(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment.lower() not in anchors(file):
            broken.append(f"{target}: no heading #{fragment} in {file.name}")
    assert not broken, broken


def test_the_anchor_rule_follows_github() -> None:
    assert anchor("Sweeps on a cluster") == "sweeps-on-a-cluster"
    assert anchor("Executors: local processes and Dask distributed") == (
        "executors-local-processes-and-dask-distributed"
    )
    assert anchor("The oracle bridge: `HumanJudge`") == "the-oracle-bridge-humanjudge"
    assert anchor("Prover\u2013Verifier Games") == "proververifier-games"  # an en dash
