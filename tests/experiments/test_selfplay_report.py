"""The self-play report: every run trained, its curve written as strict JSON and Markdown."""

import json
from dataclasses import replace

import pytest

from proofgames.errors import ProofgamesError
from proofgames.experiments.selfplay_report import SPECS, scaled, write_report


def test_scaling_keeps_at_least_one_iteration_and_sets_the_seed() -> None:
    cfg = scaled(SPECS[0], 1e-9, seed=7)
    assert (cfg.iterations, cfg.eval_every, cfg.seed) == (1, 1, 7)
    assert scaled(SPECS[0], 1.0, 0) == SPECS[0].config


def test_bad_arguments_are_refused_before_any_training(tmp_path) -> None:
    with pytest.raises(ProofgamesError, match="scale must be positive"):
        write_report(tmp_path, scale=0.0)
    with pytest.raises(ProofgamesError, match="cannot make the folder"):
        (tmp_path / "file").write_text("")
        write_report(tmp_path / "file" / "out", scale=1.0, specs=())


@pytest.mark.slow
def test_a_tiny_report_writes_every_run(tmp_path) -> None:
    specs = tuple(
        replace(s, config=replace(s.config, eval_instances=2, train_instances=4, episodes=4,
                                  wilson_plays=min(s.config.wilson_plays, 2)))
        for s in SPECS
    )  # fmt: skip
    path = write_report(tmp_path, scale=1e-9, specs=specs)
    text = path.read_text()
    data = json.loads((tmp_path / "results.json").read_text())
    assert [r["name"] for r in data["runs"]] == [s.name for s in SPECS]
    for run in data["runs"]:
        assert [row["iteration"] for row in run["curve"]] == [0, 1]
        assert (tmp_path / f"{run['name']}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"### {run['name']}" in text
    assert data["meta"]["load_average_before"] and "Do learned provers lie?" in text
    no_debate = next(r for r in data["runs"] if r["name"] == "no-debate")
    assert no_debate["final"]["false_acceptance"] == 1.0  # V accepts every claim
    for name in ("bisection", "cross-examination"):  # where each side goes wrong, per row
        run = next(r for r in data["runs"] if r["name"] == name)
        assert all(0.0 <= row[k] <= 1.0 for row in run["curve"] for k in ("a_correct", "b_correct"))
    assert "A's messages right" in text and "B's decisions right" in text
