r"""Replace a generated block of a Markdown file (README tables from reports and benchmarks).

A block is delimited by ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = path.write_text("a\n<!-- t:start -->\nold\n<!-- t:end -->\nb\n")
    >>> replace_block(path, "t", "new\n"), path.read_text()
    (True, 'a\n<!-- t:start -->\nnew\n<!-- t:end -->\nb\n')
"""

from __future__ import annotations

from pathlib import Path


def replace_block(path: Path, name: str, text: str) -> bool:
    """Put ``text`` between the ``name`` markers of ``path``; ``False`` if there are none."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if not path.exists():
        return False
    content = path.read_text()
    if start not in content or end not in content:
        return False
    head, rest = content.split(start, 1)
    path.write_text(f"{head}{start}\n{text}{end}{rest.split(end, 1)[1]}")
    return True
