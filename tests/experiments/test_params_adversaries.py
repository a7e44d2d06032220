"""Section 7 of the parameter report: the committed figures regenerate the committed page,
every simulated interval meets its exact figure, and the floors rule the goal out; the
simulation of one tier on a made-up row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from proofgames.experiments import params_adversaries as pa

FOLDER = Path(__file__).resolve().parents[2] / "reports" / "params"


@pytest.fixture(scope="module")
def committed() -> dict[str, object]:
    return dict(json.loads((FOLDER / "adversaries.json").read_text()))


def test_committed_page_is_what_the_figures_give(committed: dict[str, object]) -> None:
    assert pa.adversaries_markdown(committed) == (FOLDER / "adversaries.md").read_text()


def test_simulated_cells_meet_their_exact_figures(committed: dict[str, object]) -> None:
    """95% intervals: of the 16 random cells (4 a tier; the fixed-n query cells are
    constant), a miss or two is chance; more would be a bug."""
    tiers = committed["tiers"]
    assert isinstance(tiers, list) and len(tiers) == 4
    misses = [(row["tier"], key) for row in tiers
              for key, cell in row["simulated"].items() if not cell["inside"]]  # fmt: skip
    assert len(misses) <= 2, misses
    for row in tiers:
        assert row["optimal_b_abort_mass"] == 0.0
        if row["tier"] != "sequential":  # V draws exactly n on every abort
            assert row["simulated"]["liar_queries"]["mean"] == row["n"]


def test_floors_rule_out_the_goal_and_sit_below_the_test(committed: dict[str, object]) -> None:
    f = committed["floors"]
    assert isinstance(f, dict)
    honest = f["sequential_honest_half"][0]
    assert f["wald"] < f["goal"] < f["family"] <= f["lagrangian"]["floor"] < honest
    assert f["goal"] == pytest.approx(0.6 * f["tight_worst"])
    assert f["family"] == min(c["floor"] for c in f["family_cells"])


def test_liar_is_certified_and_v_is_cheaper_than_its_cap(committed: dict[str, object]) -> None:
    seq = committed["tiers"][-1]  # type: ignore[index]
    assert seq["liar"]["certified_optimal"]
    assert seq["liar_queries"][1] < seq["n"]
    assert seq["disputed"]["expected_queries"][1] < seq["n"]
    assert seq["liar_value"] <= 0.4 and seq["completeness"][0] >= 0.6


def test_simulate_one_fixed_tier_row() -> None:
    row = {"tier": "made-up", "n": 400, "theta": 0.1, "liar_announcement": 0.62,
           "r_b": 10**6, "theta_b": 0.25, "r_a": 10**6, "liar_value": 0.62,
           "completeness": 0.7, "disputed_accept": 1.0, "disputed_queries": 400,
           "liar_round_accept": 0.0, "liar_queries": 400, "optimal_b_abort_mass": 0.0}  # fmt: skip
    out = pa._simulate(row, 0.7, 0.4, 2_000, np.random.SeedSequence(3))
    assert out == pa._simulate(row, 0.7, 0.4, 2_000, np.random.SeedSequence(3))  # seeded
    # B (threshold 0.25) never catches 0.62 against truth 0.4: the output is the coin
    assert out["soundness_error"]["inside"] and out["liar_queries"]["mean"] == 400
    assert out["completeness"]["inside"]
    row["optimal_b_abort_mass"] = 1e-3
    with pytest.raises(AssertionError, match="aborts"):
        pa._simulate(row, 0.7, 0.4, 10, np.random.SeedSequence(3))


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--section", "nope"], "unknown section 'nope'"),
     (["--section", "adversaries", "--readme", "README.md"], "--readme needs the whole report"),
     (["--section", "adversaries", "--debates", "0"], "debates must be a positive integer")],
)  # fmt: skip
def test_bad_section_arguments_are_refused(extra: list[str], message: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from proofgames.cli import app

    (tmp_path / "README.md").write_text("<!-- report:params -->\n<!-- /report:params -->\n")
    result = CliRunner().invoke(app, ["params", "report", "--out", str(tmp_path / "o"), *extra],
                                env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "o" / "adversaries.md").exists()
