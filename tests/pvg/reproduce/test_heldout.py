"""Held-out rows of long-run checkpoints: rates and intervals from the saved counts."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from proofgames.analysis.intervals import confusion_intervals
from proofgames.errors import PVGError
from proofgames.pvg.reproduce.heldout import heldout_row, read_heldout


def entry(step: int, agents: str = "current", **counts: dict[str, int]) -> dict[str, object]:
    base = {"tp": 990, "fp": 10, "fn": 2, "tn": 998}
    attacks = {a: counts.get(a, base) for a in ("prover", "messages", "exhaustive")}
    return {"step": step, "agents": agents, "stress": {"attacks": attacks}}


def test_a_row_gives_each_rate_with_its_interval_from_the_counts():
    messages = {"tp": 1000, "fp": 37, "fn": 0, "tn": 963}
    exhaustive = {"tp": 1000, "fp": 288, "fn": 0, "tn": 712}
    row = heldout_row(entry(30000, messages=messages, exhaustive=exhaustive))
    lo, hi = confusion_intervals(1000, 37, 0, 963)["precision"]
    assert f"| {1000 / 1037:.3f} [{lo:.3f}, {hi:.3f}] / 1.000 |" in row
    lo, hi = confusion_intervals(1000, 288, 0, 712)["specificity"]
    assert row.startswith("| 30,000 | ") and row.endswith(f"| 0.712 [{lo:.3f}, {hi:.3f}] |")
    assert "kept" in heldout_row(entry(37000, "kept")) and "kept" not in row


@pytest.mark.parametrize(
    "bad",
    [
        entry(-1),
        {"step": True, "stress": {}},
        {"step": 2000, "stress": {"attacks": {}}},
        entry(2000, prover={"tp": -1, "fp": 0, "fn": 0, "tn": 1}),
        entry(2000, messages={"tp": 1.5, "fp": 0, "fn": 0, "tn": 1}),
        entry(2000, exhaustive={"tp": 1, "fp": 0, "fn": 0, "tn": 0}),  # no label-0 image
    ],
)
def test_a_malformed_entry_is_refused_with_its_reason(bad):
    with pytest.raises(PVGError, match=r"heldout\.json"):
        heldout_row(bad)


ROOT = Path(__file__).resolve().parents[3]


def test_the_committed_report_is_the_saved_counts():
    """reports/pvg-long-40k/report.md's held-out rows, each recomputed from heldout.json."""
    folder = ROOT / "reports" / "pvg-long-40k"
    if not (folder / "heldout.json").is_file():
        pytest.skip("no held-out counts in this checkout")
    report = (folder / "report.md").read_text()
    for name, entries in read_heldout(folder)["runs"].items():
        assert f"### {name}" in report
        for saved in entries:
            assert heldout_row(saved) in report, f"{name} step {saved['step']}"
