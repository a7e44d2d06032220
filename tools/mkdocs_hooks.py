"""MkDocs hooks: the repository files the guides link to are part of the built site.

The guides in ``docs/`` link to files outside it (``../reports/pvg/report.md``,
``../src/proofgames/protocols/bisection.py``, ``../README.md``) so that they read right on
GitHub. On the built site those links would lead nowhere. These hooks keep them working:

* :func:`on_files` adds every repository file a page links to outside ``docs/`` (and,
  for a Markdown file added so, the files it links to in turn) under ``repo/`` in the
  site: a report is rendered as a page, a figure or a source file is copied as it is.
  A link to a folder leads to a generated page that lists the folder's files.
* :func:`on_page_markdown` rewrites each relative link to the target's place in the site.

A link to a file that does not exist is left as written, so that ``mkdocs build --strict``
(with ``validation.links.not_found: warn``) fails on it.

Example:
    >>> site_path("docs/pvg.md"), site_path("reports/pvg/report.md")
    ('pvg.md', 'repo/reports/pvg/report.md')
    >>> rewrite("See [the report](../reports/pvg/report.md#table-2).", "docs/pvg.md")
    'See [the report](repo/reports/pvg/report.md#table-2).'
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the repository: docs_dir's parent (on_config)
DOCS = "docs"  # docs_dir's name
PREFIX = "repo"
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"`[^`\n]*`")
SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
LISTING = "index.md"


def site_path(repo_path: str) -> str:
    """Where a repository file lies in the site: ``docs/`` at the top, others under repo/."""
    if repo_path.startswith(f"{DOCS}/"):
        return repo_path[len(DOCS) + 1 :]
    return f"{PREFIX}/{repo_path}"


def repo_path(src_uri: str) -> str:
    """The repository path of a site file (the inverse of :func:`site_path`)."""
    if src_uri.startswith(f"{PREFIX}/"):
        return src_uri[len(PREFIX) + 1 :]
    return f"{DOCS}/{src_uri}"


def _target(link: str, page: str) -> tuple[str, str] | None:
    """``(repository path, '#fragment')`` of a relative link from ``page``, else None."""
    if not link or link.startswith(("#", "/")) or SCHEME.match(link):
        return None
    path, hash_, fragment = link.partition("#")
    full = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if full.startswith("..") or full == ".":
        return None  # outside the repository: left for the link check to flag
    if (ROOT / full).is_dir() and not full.startswith(f"{DOCS}/"):
        return f"{full}/{LISTING}", hash_ + fragment  # a generated listing of the folder
    if not (ROOT / full).is_file():
        return None  # dead: left for the link check to flag
    return full, hash_ + fragment


def listing(folder: str) -> str:
    """A Markdown page listing the files under ``folder`` (a repository path)."""
    base = ROOT / folder
    names = sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file())
    items = [f"- [{name}]({name}) ({(base / name).stat().st_size:,} bytes)" for name in names]
    return "\n".join([f"# {folder}/", "", "The files of this folder:", "", *items, ""])


def _text(page: str) -> str:
    """The Markdown of a repository page, or of a folder's generated listing."""
    if page.endswith(f"/{LISTING}") and not (ROOT / page).is_file():
        return listing(page[: -len(LISTING) - 1])
    return (ROOT / page).read_text(encoding="utf-8")


def _matches(text: str) -> list[re.Match[str]]:
    """The links of ``text``, outside fenced blocks and inline code."""
    masked = FENCE.sub(lambda m: " " * len(m[0]), text)
    code = [m.span() for m in CODE.finditer(masked)]
    return [m for m in LINK.finditer(masked) if not any(a < m.start() < b for a, b in code)]


def links(text: str, page: str) -> list[str]:
    """The repository files ``page`` (a repository path) links to."""
    targets = (_target(m[2], page) for m in _matches(text))
    return [t[0] for t in targets if t is not None]


def rewrite(text: str, page: str) -> str:
    """``text`` of ``page`` with each relative link pointing at its target in the site."""
    here = posixpath.dirname(site_path(page))
    out, last = [], 0
    for m in _matches(text):
        target = _target(m[2], page)
        if target is not None:
            new = posixpath.relpath(site_path(target[0]), here or ".") + target[1]
            out.append(text[last : m.start(2)] + new)
            last = m.end(2)
    return "".join(out) + text[last:]


def on_config(config: Any) -> Any:
    """Take the repository as the folder that holds ``docs_dir``."""
    global ROOT, DOCS
    docs = Path(config["docs_dir"]).resolve()
    ROOT, DOCS = docs.parent, docs.name
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the repository files the guides link to, and those their Markdown links to."""
    from mkdocs.structure.files import File

    queue = [repo_path(f.src_uri) for f in files.documentation_pages()]
    seen = {repo_path(f.src_uri) for f in files}
    while queue:
        page = queue.pop()
        for target in links(_text(page), page):
            if target in seen:
                continue
            seen.add(target)
            if (ROOT / target).is_file():
                source = {"abs_src_path": str(ROOT / target)}
            else:
                source = {"content": _text(target)}
            files.append(File.generated(config, site_path(target), **source))
            if target.endswith(".md"):
                queue.append(target)
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Point the page's relative links at their targets' places in the site."""
    return rewrite(markdown, repo_path(page.file.src_uri))
