"""The equilibrium-stability experiment: play started at the hand-set sound protocol."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.pvg import FindThePlus, stress_test  # noqa: E402
from proofgames.pvg.find_the_plus.stability import (  # noqa: E402
    PointingProver,
    StabilitySettings,
    certify,
    finished_runs,
    run_stability,
    sound_verifier,
    stability_table,
)
from proofgames.pvg.tasks.find_the_plus import plus_centres  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = StabilitySettings(steps=2, certify_every=1, batch_size=16, certify_size=64,
                         errors_px=(0.0,), formulations=("simultaneous",))  # fmt: skip


def test_the_hand_set_verifier_is_certified_sound_and_complete_by_exhaustive_search():
    task = FindThePlus()
    exact = stress_test(task, sound_verifier(task), None, ("exhaustive",))["exhaustive"]
    assert exact.perfect and exact.tn > 0


def test_the_experiment_certifies_the_hand_set_protocol_at_step_0():
    results = run_stability(TINY)
    assert [(run["formulation"], run["update"]) for run in results["runs"]] == [
        ("simultaneous", "simultaneous"),
        ("simultaneous", "alternating"),
    ]
    for run in results["runs"]:
        start = run["rows"][0]
        assert start["step"] == 0 and start["sound"] == 1.0
        assert start["exhaustive_specificity"] == 1.0 and start["exhaustive_recall"] == 1.0
        assert start["pointing_error_px"] < 1e-4 and start["on_plus"] == 1.0
        assert [row["step"] for row in run["rows"]] == [0, 1, 2]


def test_the_exact_pointer_points_at_the_plus_and_the_error_grows_with_the_setting():
    task = FindThePlus()
    x, _ = task.sample(2000, torch.Generator().manual_seed(4))
    truth = plus_centres(x)
    errors = []
    for error in (0.0, 0.5, 2.0):
        pointer = PointingProver(task, error).pointer(x)
        errors.append(float((pointer - truth).pow(2).sum(dim=1).mean().sqrt()))
    assert errors[0] == 0.0 and errors[1] < errors[2]
    assert 0.5 * 2.0 < errors[2] < 1.5 * 2.0  # about the rms asked for


def test_a_verifier_that_accepts_a_four_cell_plus_is_not_certified_sound():
    task = FindThePlus()
    lax = sound_verifier(task, bias=-14.0)  # four cells of five now pass
    x, y = task.sample(200, torch.Generator().manual_seed(2))
    row = certify(lax, PointingProver(task), x, y)
    assert row["sound"] == 0.0 and row["exhaustive_specificity"] < 1.0


def test_the_experiment_refuses_settings_it_cannot_run():
    for bad, name in [
        (StabilitySettings(formulations=("sideways",)), "formulations"),
        (StabilitySettings(updates=()), "updates"),
        (StabilitySettings(errors_px=(-1.0,)), "pointing error"),
        (StabilitySettings(steps=0), "steps"),
    ]:
        with pytest.raises(ValueError, match=name):
            run_stability(bad)


def test_pvg_stability_writes_its_results_and_figure(tmp_path):
    runner = CliRunner()
    out = tmp_path / "stability"
    args = ["stability", "--steps", "2", "--certify-every", "1", "--batch-size", "16",
            "--certify-size", "32", "--error", "0", "--formulation", "verifier-first",
            "--out", str(out), "--json"]  # fmt: skip
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.output)
    assert [run["update"] for run in summary["runs"]] == ["-"]  # sequential: played once
    saved = json.loads((out / "stability.json").read_text())
    assert saved["runs"][0]["rows"][0]["sound"] == 1.0
    assert (out / "stability.png").stat().st_size > 0
    assert "| 0 | verifier-first | - | kept |" in (out / "stability.md").read_text()
    bad = runner.invoke(app, [*args[:-3], "--update", "sideways", "--out", str(out)])
    assert bad.exit_code == 2 and "sideways" in bad.output


def test_progress_reports_each_certification_then_each_finished_run():
    seen = []
    results = run_stability(TINY, progress=lambda partial: seen.append(copy.deepcopy(partial)))
    assert results["complete"] is True
    assert all(p["complete"] is False for p in seen)
    shape = [(len(p["runs"]), p["runs"][-1]["finished"], len(p["runs"][-1]["rows"])) for p in seen]
    assert shape == [(1, False, 1), (1, False, 2), (1, False, 3), (1, True, 3),
                     (2, False, 1), (2, False, 2), (2, False, 3), (2, True, 3)]  # fmt: skip
    assert seen[3]["runs"][0]["rows"] == results["runs"][0]["rows"]


def test_a_resumed_experiment_reuses_finished_runs_and_matches_an_uninterrupted_one():
    whole = run_stability(TINY)
    stopped = {**whole, "complete": False, "runs": [whole["runs"][0], {**whole["runs"][1],
               "finished": False, "rows": whole["runs"][1]["rows"][:1]}]}  # fmt: skip
    done = finished_runs(json.loads(json.dumps(stopped)), TINY, FindThePlus())
    assert [run["update"] for run in done] == ["simultaneous"]  # the unfinished one is played
    played = []
    resumed = run_stability(TINY, done=done, progress=lambda p: played.append(p["runs"][-1]))
    assert {run["update"] for run in played if not run["finished"]} == {"alternating"}
    assert [run["rows"] for run in resumed["runs"]] == [run["rows"] for run in whole["runs"]]


def test_resuming_refuses_results_of_other_settings_naming_them():
    results = json.loads(json.dumps(run_stability(TINY)))
    with pytest.raises(ValueError, match=r"steps 2 there, 1 now \(more steps may be played on"):
        finished_runs(results, replace(TINY, steps=1), FindThePlus())
    with pytest.raises(ValueError, match=r"certify_size 64 there, 32 now"):
        finished_runs(results, replace(TINY, steps=3, certify_size=32), FindThePlus())
    with pytest.raises(ValueError, match=r"heads"):
        finished_runs(results, TINY, FindThePlus(heads=1))
    with pytest.raises(ValueError, match="not a stability results file"):
        finished_runs({"runs": "all of them"}, TINY, FindThePlus())


def test_a_stopped_pvg_stability_keeps_what_it_certified_and_resume_finishes_it(
    tmp_path, monkeypatch
):
    from proofgames.pvg.find_the_plus import stability

    out = tmp_path / "stability"
    args = ["stability", "--steps", "2", "--certify-every", "1", "--batch-size", "16",
            "--certify-size", "32", "--error", "0", "--formulation", "simultaneous",
            "--out", str(out)]  # fmt: skip
    calls = []

    def stops_in_the_second_run(*given, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # run 1 certifies at steps 0, 1, 2; run 2 at step 0, then stops
            raise stability.PVGError("stopped by the test")
        return certify(*given, **kwargs)

    monkeypatch.setattr(stability, "certify", stops_in_the_second_run)
    stopped = CliRunner().invoke(app, args)
    assert stopped.exit_code == 2 and "stopped by the test" in stopped.output
    saved = json.loads((out / "stability.json").read_text())
    assert saved["complete"] is False
    assert [(r["update"], r["finished"], len(r["rows"])) for r in saved["runs"]] == [
        ("simultaneous", True, 3),
        ("alternating", False, 1),
    ]
    assert "unfinished: played to step 0" in (out / "stability.md").read_text()
    monkeypatch.setattr(stability, "certify", certify)
    resumed = CliRunner().invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "1 finished run(s) reused" in resumed.output
    final = json.loads((out / "stability.json").read_text())
    assert final["complete"] is True and final["runs"][0] == saved["runs"][0]
    assert [len(r["rows"]) for r in final["runs"]] == [3, 3]
    other = CliRunner().invoke(app, [*args[:2], "1", *args[3:], "--resume"])
    assert other.exit_code == 2 and "steps 2 there, 1 now" in other.output


def _trained(folder, task_name="find-the-plus", **task_args):
    from proofgames.pvg import TrainConfig, make_task, train

    config = TrainConfig(steps=3, batch_size=16, eval_size=16, pretrain_steps=1,
                         out_dir=str(folder), progress=False)  # fmt: skip
    train(make_task(task_name, **task_args), config)
    return folder


def test_a_run_started_from_a_trained_pair_certifies_that_pair_at_step_0(tmp_path):
    from proofgames.pvg import load_checkpoint

    folder = _trained(tmp_path / "run", heads=2)
    settings = replace(TINY, start=str(folder), formulations=("verifier-first",))
    results = run_stability(settings)
    assert results["started_from"] == str(folder / "agents.pt")
    assert results["settings"]["task"]["heads"] == 2  # the run's own task
    (run,) = results["runs"]
    assert run["error_px"] is None and [r["step"] for r in run["rows"]] == [0, 1, 2]
    saved = load_checkpoint(folder)
    gen = torch.Generator().manual_seed(10_000 + TINY.seed)  # the certification batch
    x, y = saved.task.sample(TINY.certify_size, gen)
    assert run["rows"][0] == {"step": 0, **certify(saved.verifier, saved.prover, x, y, None)}
    table = stability_table(results)
    assert f"Started from {folder / 'agents.pt'} (2 heads)" in table
    assert "| — (trained) | verifier-first |" in table


def test_a_trained_start_must_be_a_find_the_plus_run_of_the_task_asked_for(tmp_path):
    bec = _trained(tmp_path / "bec", "bec")
    with pytest.raises(ValueError, match="a bec run, not a FindThePlus one"):
        run_stability(replace(TINY, start=str(bec)))
    plus = _trained(tmp_path / "plus", heads=2)
    with pytest.raises(ValueError, match="a started run plays its own task"):
        run_stability(replace(TINY, start=str(plus)), FindThePlus(heads=4))
    with pytest.raises(FileNotFoundError, match="no PVG checkpoint"):
        run_stability(replace(TINY, start=str(tmp_path / "nothing")))
    ran = CliRunner().invoke(app, ["stability", "--start", str(plus), "--heads", "2",
                                   "--out", str(tmp_path / "out")])  # fmt: skip
    assert ran.exit_code == 2 and "drop --heads and --error" in ran.output
    assert not (tmp_path / "out").exists()


def test_pvg_stability_from_a_trained_run_reports_each_certification(tmp_path):
    folder = _trained(tmp_path / "run")
    out = tmp_path / "out"
    ran = CliRunner().invoke(app, ["stability", "--start", str(folder), "--steps", "2",
                                   "--certify-every", "1", "--batch-size", "16",
                                   "--certify-size", "32", "--formulation", "verifier-first",
                                   "--out", str(out)])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "verifier-first - from the trained run, step 2: exhaustive specificity" in ran.output
    run = json.loads((out / "stability.json").read_text())["runs"][0]
    said = "not sound at the start" if run["lost_at"] == 0 else "sound"
    assert f"from the trained run: {said}" in ran.output
    saved = json.loads((out / "stability.json").read_text())
    assert saved["started_from"] == str(folder / "agents.pt") and saved["complete"] is True
    assert (out / "stability.png").stat().st_size > 0


def test_the_table_says_when_a_run_was_never_sound():
    row = {"step": 0, "sound": 0.0, "exhaustive_specificity": 0.5, "exhaustive_recall": 1.0,
           "pointing_error_px": 0.1, "on_plus": 1.0}  # fmt: skip
    run = {"formulation": "simultaneous", "update": "alternating", "error_px": None,
           "lost_at": 0, "rows": [row]}  # fmt: skip
    settings = {"steps": 1, "batch_size": 8, "seed": 0, "certify_size": 4, "certify_every": 1,
                "task": {"heads": 4}}  # fmt: skip
    table = stability_table({"settings": settings, "started_from": "x", "runs": [run]})
    assert "| — (trained) | simultaneous | alternating | 0 (not sound at the start) |" in table
