"""The one Markdown table builder: alignment, escaping, and the reports' tables unchanged."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from proofgames.reporting import markdown_table

ROOT = Path(__file__).resolve().parents[2]


def test_a_table_is_a_header_a_rule_and_a_line_per_row() -> None:
    assert markdown_table(["a", "b"], [[1, "x"], [2.5, None]]) == (
        "| a | b |\n|---|---|\n| 1 | x |\n| 2.5 | None |\n"
    )
    assert markdown_table(["only"], []) == "| only |\n|---|\n"


def test_alignment_per_column() -> None:
    table = markdown_table(["l", "c", "r", "d"], [[1, 2, 3, 4]],
                           align=["left", "center", "right", None])  # fmt: skip
    assert table.splitlines()[1] == "|:---|:---:|---:|---|"


def test_pipes_are_escaped_and_line_breaks_kept_inside_the_cell() -> None:
    table = markdown_table(["a|b"], [["x | y"], ["one\ntwo"]])
    assert table == "| a\\|b |\n|---|\n| x \\| y |\n| one<br>two |\n"
    assert all(line.replace("\\|", "").count("|") == 2 for line in table.splitlines())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"rows": [[1, 2]]}, "row 0 has 2 cells, not 1"),
     ({"rows": [], "align": ["left", "left"]}, "2 alignments for 1 columns"),
     ({"rows": [], "align": ["middle"]}, "not 'middle'")],
)  # fmt: skip
def test_a_ragged_row_or_an_unknown_alignment_is_refused(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        markdown_table(["x"], **kwargs)


def _old_table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    """The stochastic and params reports' table as it was built by hand."""

    def fmt(v: Any) -> str:
        if isinstance(v, bool):
            return "yes" if v else "**NO**"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    return head + "".join("| " + " | ".join(fmt(r[c]) for c in cols) + " |\n" for r in rows)


def test_the_experiment_reports_tables_are_unchanged() -> None:
    from proofgames.experiments._report_text import table

    rng = random.Random(0)
    values = [True, False, 0.5, 1e-9, 123456.789, 3, "a b", None, float("nan"), "—"]
    for _ in range(200):
        cols = [f"c{i}" for i in range(rng.randint(1, 6))]
        rows = [{c: rng.choice(values) for c in cols} for _ in range(rng.randint(0, 4))]
        assert table(rows, cols) == _old_table(rows, cols)


def test_the_language_tables_regenerate_byte_for_byte(tmp_path: Path) -> None:
    from proofgames.language._report_figures import write_markdown

    folder = ROOT / "reports" / "language"
    write_markdown(json.loads((folder / "results.json").read_text()), tmp_path)
    assert (tmp_path / "tables.md").read_text() == (folder / "tables.md").read_text()


def test_a_stability_table_regenerates_byte_for_byte() -> None:
    pytest.importorskip("torch")
    from proofgames.pvg.find_the_plus.stability import stability_table

    folder = ROOT / "reports" / "pvg-stability" / "weight-decay-1"
    results = json.loads((folder / "stability.json").read_text())
    assert stability_table(results) == (folder / "stability.md").read_text()
