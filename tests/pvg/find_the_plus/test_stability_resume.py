"""A stopped stability experiment continues from its runs' saved states, losing nothing."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import PVGError, TrainingStopped  # noqa: E402
from proofgames.pvg import FindThePlus  # noqa: E402
from proofgames.pvg._game import Game  # noqa: E402
from proofgames.pvg.checkpoint import STATE_FILE, load_training_state  # noqa: E402
from proofgames.pvg.find_the_plus.stability import (  # noqa: E402
    PointingProver,
    StabilitySettings,
    carried_rows,
    earlier_runs,
    run_name,
    run_stability,
    stability_table,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMALL = StabilitySettings(steps=4, certify_every=2, batch_size=16, certify_size=32,
                          errors_px=(0.5,), formulations=("simultaneous",),
                          updates=("alternating",))  # fmt: skip
NAME = run_name(("simultaneous", "alternating", 0.5))


def _sigterm_during_game_step(monkeypatch, which):
    """Send this process SIGTERM while game step ``which`` is played (once)."""
    played = []
    original = Game.play

    def play(self, *args):
        played.append(1)
        if len(played) == which:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, *args)

    monkeypatch.setattr(Game, "play", play)


def test_runs_are_saved_under_names_that_say_which_game_they_play():
    assert NAME == "simultaneous-alternating-error-0.5px"
    assert run_name(("verifier-first", "-", 0.0)) == "verifier-first-error-0px"
    assert run_name(("simultaneous", "simultaneous", None)) == (
        "simultaneous-simultaneous-trained-start"
    )


def test_a_run_stopped_between_certifications_continues_to_the_same_certifications(
    tmp_path, monkeypatch
):
    whole = run_stability(SMALL, runs_dir=tmp_path / "whole")
    saved = []
    _sigterm_during_game_step(monkeypatch, 3)
    with pytest.raises(TrainingStopped, match="after game step 3"):
        run_stability(SMALL, progress=lambda p: saved.append(json.dumps(p)),
                      runs_dir=tmp_path / "stopped")  # fmt: skip
    monkeypatch.undo()
    folder = tmp_path / "stopped" / NAME
    assert load_training_state(folder).step == 3  # saved where it stopped, not at step 2
    partial = json.loads(saved[-1])
    assert [row["step"] for row in partial["runs"][0]["rows"]] == [0, 2]
    certified = []
    resumed = run_stability(
        SMALL,
        done=earlier_runs(partial, SMALL, FindThePlus()),
        progress=lambda p: certified.append(p["runs"][-1]["rows"][-1]["step"]),
        runs_dir=tmp_path / "stopped",
    )
    assert certified == [4, 4]  # only the step still to play, then the finished run
    assert resumed["runs"][0]["rows"] == whole["runs"][0]["rows"]
    assert resumed["runs"][0]["lost_at"] == whole["runs"][0]["lost_at"]


def test_an_earlier_record_that_disagrees_with_the_saved_state_is_refused_by_name(
    tmp_path, monkeypatch
):
    _sigterm_during_game_step(monkeypatch, 3)
    with pytest.raises(TrainingStopped):
        run_stability(SMALL, runs_dir=tmp_path)
    folder = tmp_path / NAME
    earlier = {"rows": [{"step": 0}]}  # the certification at step 2 is missing
    with pytest.raises(PVGError, match=r"at game step 3.*steps \[0\], not \[0, 2\]; delete"):
        carried_rows(folder, earlier, 2, 4)
    with pytest.raises(PVGError, match="no list of certifications"):
        carried_rows(folder, {"rows": "all"}, 2, 4)
    assert (folder / STATE_FILE).is_file()  # refused, not cleared


def test_a_run_played_again_first_clears_what_its_folder_held(tmp_path):
    for name in (STATE_FILE, "metrics.jsonl"):
        (tmp_path / name).write_text("from an earlier experiment")
    assert carried_rows(tmp_path, None, 2, 4) == []
    assert not (tmp_path / STATE_FILE).exists() and not (tmp_path / "metrics.jsonl").exists()


def test_pvg_stability_stopped_by_sigterm_says_how_to_continue_and_resume_matches(
    tmp_path, monkeypatch
):
    args = ["stability", "--steps", "4", "--certify-every", "2", "--batch-size", "16",
            "--certify-size", "32", "--error", "0.5", "--formulation", "simultaneous",
            "--update", "alternating"]  # fmt: skip
    whole = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    out = tmp_path / "stopped"
    _sigterm_during_game_step(monkeypatch, 3)
    stopped = CliRunner().invoke(app, [*args, "--out", str(out)])
    monkeypatch.undo()
    assert stopped.exit_code == 2 and "--resume continues the experiment" in stopped.output
    assert (out / "runs" / NAME / STATE_FILE).is_file()
    resumed = CliRunner().invoke(app, [*args, "--out", str(out), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "0 finished run(s) reused, 1 unfinished or shorter continued" in resumed.output
    rows = [json.loads((f / "stability.json").read_text())["runs"][0]["rows"]
            for f in (tmp_path / "whole", out)]  # fmt: skip
    assert rows[0] == rows[1]


def test_settings_that_differ_from_the_saved_state_are_refused_before_playing(tmp_path):
    run_stability(SMALL, runs_dir=tmp_path)
    record = {"rows": [{"step": 0}, {"step": 2}, {"step": 4}]}
    assert [r["step"] for r in carried_rows(tmp_path / NAME, record, 2, 4)] == [0, 2, 4]
    bigger = replace(SMALL, batch_size=32)
    earlier = {**record, "formulation": "simultaneous", "update": "alternating",
               "error_px": 0.5, "finished": False}  # fmt: skip
    with pytest.raises(PVGError, match="batch_size"):
        run_stability(bigger, done=[earlier], runs_dir=tmp_path)


def test_a_run_depends_on_its_settings_alone_not_on_the_global_torch_generator():
    task = FindThePlus()
    torch.manual_seed(1)
    first = PointingProver(task, 0.5, seed=3).state_dict()
    torch.manual_seed(2)
    second = PointingProver(task, 0.5, seed=3).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    torch.manual_seed(2)
    PointingProver(task, 0.5, seed=3)
    assert torch.equal(torch.get_rng_state(), torch.manual_seed(2).get_state())  # untouched
    rows = []
    for global_seed in (1, 2):  # e.g. a run played first, or after another run
        torch.manual_seed(global_seed)
        rows.append(run_stability(SMALL)["runs"][0]["rows"])
    assert rows[0] == rows[1]


def _tiny_results():
    return json.loads(json.dumps(run_stability(replace(SMALL, steps=2))))


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (lambda r: r["runs"].__setitem__(0, "x"), "run 0 of the results is not a run record"),
        (lambda r: r["runs"][0].pop("formulation"), "run 0 of the results has no formulation"),
        (lambda r: r["runs"][0].update(error_px="big"), "error_px must be a number"),
        (lambda r: r["runs"][0].update(rows=[]), "has no certification rows"),
        (lambda r: r["runs"][0]["rows"][1].update(sound="yes"), "run 0 of the results, row 1"),
        (lambda r: r["runs"][0]["rows"][0].update(step=True), "row 0: needs an integer step"),
        (lambda r: r["runs"][0].update(finished="no"), "finished must be true or false"),
        (lambda r: r["runs"][0].update(lost_at="never"), "lost_at must be a game step"),
    ],
)
def test_resuming_from_a_damaged_results_file_is_refused_naming_the_place(tamper, named):
    results = _tiny_results()
    tamper(results)
    with pytest.raises(PVGError, match=named):
        earlier_runs(results, replace(SMALL, steps=2), FindThePlus())


def test_pvg_stability_resume_reports_a_damaged_results_file_in_one_line(tmp_path):
    args = ["stability", "--steps", "2", "--certify-every", "2", "--batch-size", "16",
            "--certify-size", "32", "--error", "0.5", "--formulation", "simultaneous",
            "--update", "alternating", "--out", str(tmp_path)]  # fmt: skip
    assert CliRunner().invoke(app, args).exit_code == 0
    path = tmp_path / "stability.json"
    saved = json.loads(path.read_text())
    saved["runs"][0]["rows"][0]["exhaustive_recall"] = None
    path.write_text(json.dumps(saved))
    resumed = CliRunner().invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 2 and resumed.exception is not None
    assert "run 0 of the results, row 0" in resumed.output and "Traceback" not in resumed.output
    assert json.loads(path.read_text()) == saved  # refused before anything was written


def test_undefined_pointing_figures_are_kept_as_null_and_shown_as_a_dash():
    results = _tiny_results()
    for row in results["runs"][0]["rows"]:
        row["pointing_error_px"] = row["on_plus"] = None  # a batch without a label-1 image
    assert (
        earlier_runs(results, replace(SMALL, steps=2), FindThePlus())[0]["rows"][0]
        == (results["runs"][0]["rows"][0])
    )
    assert "| — | — |" in stability_table(results)


def test_an_experiment_resumed_with_more_steps_plays_its_runs_on_to_the_longer_ones(tmp_path):
    longer = replace(SMALL, steps=6)
    whole = run_stability(longer, runs_dir=tmp_path / "whole")
    short = json.loads(json.dumps(run_stability(SMALL, runs_dir=tmp_path / "short")))
    certified = []
    extended = run_stability(
        longer,
        done=earlier_runs(short, longer, FindThePlus()),
        progress=lambda p: certified.append(p["runs"][-1]["rows"][-1]["step"]),
        runs_dir=tmp_path / "short",
    )
    assert certified == [6, 6]  # played on from step 4, not again
    assert extended["runs"][0]["rows"] == whole["runs"][0]["rows"]
    assert extended["settings"]["steps"] == 6
