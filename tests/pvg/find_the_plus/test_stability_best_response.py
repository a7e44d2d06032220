"""Verifier-first stability runs train the verifier against the exact or the trained prover."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.pvg import FindThePlus  # noqa: E402
from proofgames.pvg.find_the_plus.stability import (  # noqa: E402
    StabilitySettings,
    earlier_runs,
    run_stability,
    stability_table,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FIRST = StabilitySettings(steps=2, certify_every=1, batch_size=16, certify_size=32,
                          errors_px=(0.5,), formulations=("verifier-first",))  # fmt: skip


def test_the_exact_prover_trains_the_verifier_by_default_and_the_trained_one_on_request(
    exact_searches,
):
    exact = run_stability(FIRST)
    assert exact_searches == [16, 16]  # one exact response per game step, on its batch
    exact_searches.clear()
    trained_results = run_stability(replace(FIRST, best_response="trained"))
    assert exact_searches == []  # the verifier's gradient saw the trained prover's messages
    assert trained_results["settings"]["best_response"] == "trained"
    assert exact["runs"][0]["rows"][0] == trained_results["runs"][0]["rows"][0]  # same start
    assert "against the trained prover" in stability_table(trained_results)
    assert "trained prover" not in stability_table(exact)


def test_an_unknown_best_response_is_refused_by_name():
    with pytest.raises(ValueError, match=r"best_response must be one of .* got 'oracle'"):
        run_stability(replace(FIRST, best_response="oracle"))


def test_results_saved_before_the_setting_existed_resume_as_the_exact_prover():
    results = json.loads(json.dumps(run_stability(replace(FIRST, steps=1))))
    del results["settings"]["best_response"]  # as results files of earlier versions are
    assert len(earlier_runs(results, FIRST, FindThePlus())) == 1
    with pytest.raises(ValueError, match="best_response 'auto' there, 'trained' now"):
        earlier_runs(results, replace(FIRST, best_response="trained"), FindThePlus())


def test_pvg_stability_best_response_is_recorded_and_a_bad_one_refused(tmp_path):
    runner = CliRunner()
    out = tmp_path / "trained-prover"
    args = ["stability", "--steps", "1", "--certify-every", "1", "--batch-size", "16",
            "--certify-size", "32", "--error", "0", "--formulation", "verifier-first",
            "--out", str(out), "--json", "--best-response"]  # fmt: skip
    ran = runner.invoke(app, [*args, "trained"])
    assert ran.exit_code == 0, ran.output
    assert json.loads((out / "stability.json").read_text())["settings"]["best_response"] == (
        "trained"
    )
    assert "against the trained prover" in (out / "stability.md").read_text()
    bad = runner.invoke(app, [*args, "oracle"])
    assert bad.exit_code == 2 and "oracle" in bad.output


def test_the_figure_draws_specificity_on_the_whole_unit_scale(monkeypatch):
    import proofgames.pvg.find_the_plus._stability_report as drawing

    results = run_stability(replace(FIRST, steps=1, best_response="trained"))
    drawn = []
    monkeypatch.setattr(drawing, "save_figure", lambda fig, path: drawn.append(fig))
    drawing.plot_stability(results, "unused.png")
    low, high = drawn[0].axes[0].get_ylim()
    assert low <= 0.0 and high >= 1.0  # a specificity of 0.004 must not fill the panel
    assert "(trained prover)" in drawn[0].axes[0].get_legend().get_texts()[0].get_text()
