r"""Markdown tables: the one builder of every report's tables.

Example:
    >>> print(markdown_table(["name", "value"], [["a|b", 1], ["c", 2.5]], align=[None, "right"]))
    | name | value |
    |---|---:|
    | a\|b | 1 |
    | c | 2.5 |
    <BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: The separator cell of each alignment (``None``: the renderer's default, left).
_RULES = {None: "---", "left": ":---", "center": ":---:", "right": "---:"}


def cell(value: object) -> str:
    r"""``value`` as the text of one table cell: ``|`` escaped, line breaks as ``<br>``.

    Example:
        >>> cell("x | y\nz")
        'x \\| y<br>z'
    """
    text = str(value).replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>")


def markdown_table(
    headers: Sequence[object],
    rows: Iterable[Sequence[object]],
    align: Sequence[str | None] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table; every line, the last too, ends with a newline.

    Cells are ``str()`` of the values, escaped by :func:`cell`: format numbers before.
    ``align`` gives each column ``"left"``, ``"center"``, ``"right"`` or ``None`` (the
    default, ``---``).

    Raises:
        ValueError: a row or ``align`` whose length is not the number of headers, or an
            unknown alignment.

    Example:
        >>> print(markdown_table(["k", "n"], [], align=["center", "right"]), end="")
        | k | n |
        |:---:|---:|
    """
    width = len(headers)
    aligns = list(align) if align is not None else [None] * width
    if len(aligns) != width:
        raise ValueError(f"{len(aligns)} alignments for {width} columns")
    unknown = [a for a in aligns if a not in _RULES]
    if unknown:
        raise ValueError(f"alignment must be left, center, right or None, not {unknown[0]!r}")
    lines = [_line(headers), "|" + "".join(f"{_RULES[a]}|" for a in aligns)]
    for number, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"row {number} has {len(row)} cells, not {width}")
        lines.append(_line(row))
    return "".join(line + "\n" for line in lines)


def _line(cells: Sequence[object]) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"
