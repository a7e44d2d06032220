"""Section 6 of the parameter report: the tiers-against-floors table, labels and figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgames.experiments import _params_tiers
from proofgames.experiments.params_report import _Sets


@pytest.mark.slow
def test_section_tables_every_key_with_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:  # fmt: skip
    monkeypatch.setattr(_params_tiers, "KS", (0.25, 0.5))
    monkeypatch.setattr(_params_tiers, "TS", (10,))
    monkeypatch.setattr(_params_tiers, "WORST", ("lean", "optimized-tight"))
    sets = _Sets()
    seq = _params_tiers.sequential_results(sets)
    rows = _params_tiers.tier_floor_rows(sets, seq)
    assert [r["K"] for r in rows] == ["0.25", "0.5"]
    for row, r in zip(rows, seq.values(), strict=True):
        # the sequential V's expectation lies between the floor and the tight tier's worst
        tight = sets.get("optimized-tight", r.tight.k, 10).v_samples
        assert r.floor <= r.honest.expected < tight < r.test.n
        assert row["worst sequential (cap)"] == f"{r.test.n:,}"
    monkeypatch.setattr(_params_tiers, "KS", (0.25,))
    text = "\n".join(_params_tiers.tiers_section(sets, tmp_path))
    assert (tmp_path / "v_queries_tiers_vs_k.png").stat().st_size > 0
    for label in ("exact dynamic programming", "grid maximum", "written proof evaluated",
                  "not re-derived here", "not machine-checked"):  # fmt: skip
        assert label in text
