"""What the long FindThePlus runs log: where the heads look and the exact specificity."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg import StressConfig, TrainConfig, make_task, train  # noqa: E402
from proofgames.pvg.find_the_plus.diagnostics import pointing  # noqa: E402
from proofgames.pvg.find_the_plus.stability import PointingProver, sound_verifier  # noqa: E402
from proofgames.pvg.reproduce._reproduction_plan import SAVE_EVERY, ftp_config  # noqa: E402
from proofgames.pvg.reproduce.profiles import PROFILES  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_find_the_plus_rows_log_the_pointing_error_and_the_exact_specificity():
    task = make_task("find-the-plus")
    stress = StressConfig(prover_steps=2, batch_size=16, eval_size=16, lbfgs_max_iter=2)
    config = TrainConfig(steps=4, batch_size=8, eval_size=16, log_every=2, stress_every=4,
                         stress=stress, stress_attacks=("messages", "exhaustive"),
                         progress=False)  # fmt: skip
    rows = train(task, config).metrics
    assert all("pointing_error_px" in row and 0 <= row["on_plus"] <= 1 for row in rows)
    last = rows[-1]
    assert 0 <= last["exhaustive_specificity"] <= 1 and "messages_accuracy" in last
    # the prover's centre-missing share is logged only where it shows a 4-of-5 plus
    detector = ("detector_centre", "detector_arms", "readout_bias", "attack_centre_missing")
    assert all(key in last for key in detector)  # logged where the exhaustive search runs
    assert not any(key in rows[0] for key in detector)  # step 2: no stress test there
    assert last["readout_bias"] == float(train(task, config).verifier.classifier.bias.detach())
    plain = replace(config, stress_attacks=("messages",))
    assert not any(key in train(task, plain).metrics[-1] for key in detector)


def test_pointing_measures_the_plus_shaped_head_against_the_plus():
    task = make_task("find-the-plus")
    x, y = task.sample(200, torch.Generator().manual_seed(1))
    verifier = sound_verifier(task)
    exact = pointing(verifier, PointingProver(task, 0.0), x, y)
    assert exact["pointing_error_px"] < 1e-4 and exact["on_plus"] == 1.0
    off = pointing(verifier, PointingProver(task, 1.5), x, y)
    assert off["pointing_error_px"] > 0.5 and off["on_plus"] < 1.0


def test_the_long_profile_runs_20000_resumable_steps_with_the_exhaustive_search():
    long = PROFILES["long"]
    config = ftp_config(long, 0, "simultaneous", long.ftp_settings()["steps"], "cpu", False,
                        Path("runs"))  # fmt: skip
    assert (config.steps, config.batch_size, config.update) == (20000, 256, "alternating")
    assert config.stress_every == 500 and config.checkpoint_every == SAVE_EVERY == 50
    assert set(config.stress_attacks) == {"messages", "exhaustive"}
    assert config.keep_best == "messages"
    config.validate()


@pytest.mark.slow
def test_a_long_profile_reproduction_keeps_pointing_and_exact_specificity_curves(tmp_path):
    from dataclasses import replace

    from proofgames.pvg import reproduce, write_report

    tiny = StressConfig(prover_steps=2, batch_size=16, eval_size=16, lbfgs_max_iter=2)
    settings = (("batch_size", 16), ("steps", 4), ("pretrain_steps", 1))
    scaled = replace(PROFILES["long"], ftp=settings, ftp_stress_every=2, ftp_baseline_steps=2,
                     ftp_stress=tiny, ftp_selection_stress=tiny, eval_size=32)  # fmt: skip
    results = reproduce((0,), scaled, ("find-the-plus",), "cpu", runs_dir=tmp_path / "runs")
    pvg = next(c for c in results["find-the-plus"]["curves"] if c["training"] == "pvg")
    assert any(v is not None for v in pvg["exhaustive_specificity"])
    assert all(v is not None for v in pvg["pointing_error_px"])
    assert (tmp_path / "runs" / "find-the-plus-pvg-s0" / "state.pt").is_file()
    write_report(results, tmp_path / "report")
    assert (tmp_path / "report" / "ftp_learning.png").is_file()


ROOT = Path(__file__).resolve().parents[3]
LONG_RUNS = ROOT / "reports" / "pvg-long" / "runs"


def test_the_committed_long_runs_can_be_resumed_by_this_code():
    """The long runs take many sessions; a change that orphans their saved states fails here.

    ``pvg reproduce --profile long --resume`` checks every saved run against the settings
    it would use before any work; this runs that check on the folders in the repository.
    """
    from proofgames.pvg.reproduce._reproduction_plan import prepare_runs_dir

    seeds = sorted({int(p.name.rsplit("-s", 1)[1]) for p in LONG_RUNS.glob("find-the-plus-*-s*")})
    if not seeds:
        pytest.skip("no long runs in this checkout")
    prepare_runs_dir(LONG_RUNS, seeds, PROFILES["long"], ["find-the-plus"],
                     resume=True, overwrite=False)  # fmt: skip


def test_the_documented_held_out_figures_are_the_saved_counts_of_each_long_run():
    """docs/pvg.md's held-out table: each row recomputed from its run's ``run.json``."""
    import json

    from proofgames.analysis.intervals import confusion_intervals

    runs = sorted(LONG_RUNS.glob("find-the-plus-pvg-s*/run.json"))
    if not runs:
        pytest.skip("no finished long runs in this checkout")
    doc = (ROOT / "docs" / "pvg.md").read_text()
    for path in runs:
        run = json.loads(path.read_text())["run"]
        cells = []
        for name, rate in (("prover", "precision"), ("messages", "precision"),
                           ("exhaustive", "specificity")):  # fmt: skip
            c = run["attacks"][name]
            lo, hi = confusion_intervals(c["tp"], c["fp"], c["fn"], c["tn"])[rate]
            recall = f" / {c['recall']:.3f}" if rate == "precision" else ""
            cells.append(f"{c[rate]:.3f} [{lo:.3f}, {hi:.3f}]{recall}")
        seed = run["seed"]
        row = f"| {seed} | step {run['best_step']:,} of {run['steps']:,} | " + " | ".join(cells)
        assert row in doc, f"seed {seed}: docs/pvg.md lacks {row!r}"


def test_the_committed_extension_runs_can_be_resumed_by_this_code():
    """``reports/pvg-long-40k`` continues long-run seeds past 20,000 steps across sessions."""
    from proofgames.cli.pvg._support import resumed_run
    from proofgames.pvg.checkpoint import load_training_state

    folders = sorted((LONG_RUNS.parent.parent / "pvg-long-40k").glob("find-the-plus-pvg-s*"))
    if not folders:
        pytest.skip("no extension runs in this checkout")
    for folder in folders:
        assert load_training_state(folder).step >= 20000
        _, config = resumed_run(folder, "find-the-plus", 40000, [])
        assert (config.steps, config.batch_size, config.update) == (40000, 256, "alternating")
        config.validate()


@pytest.mark.slow
def test_the_committed_extension_runs_play_on_from_their_saved_state(tmp_path, monkeypatch):
    """Not only accepted: each saved state plays a game step with this code (bank off).

    The stress test a run's last step gets is skipped here (its attacks take minutes).
    """
    import importlib
    import shutil

    trainer = importlib.import_module("proofgames.pvg.train")
    monkeypatch.setattr(trainer, "_stress", lambda *args: 0.0)
    monkeypatch.setattr(trainer, "_task_stress_metrics", lambda *args: 0.0)

    from proofgames.cli.pvg._support import resumed_run
    from proofgames.pvg.checkpoint import STATE_FILE, load_training_state

    folders = sorted((LONG_RUNS.parent.parent / "pvg-long-40k").glob("find-the-plus-pvg-s*"))
    if not folders:
        pytest.skip("no extension runs in this checkout")
    for folder in folders:
        copy = tmp_path / folder.name
        copy.mkdir()
        shutil.copy(folder / STATE_FILE, copy / STATE_FILE)
        step = load_training_state(copy).step
        task, config = resumed_run(copy, "find-the-plus", step + 1, [])
        assert config.data_bank == 0  # saved before the bank: fresh batches, as before
        config = replace(config, out_dir=str(copy), progress=False, device="cpu")
        result = train(task, config, resume=copy)
        assert result.steps == step + 1 and load_training_state(copy).step == step + 1
        assert result.metrics[-1]["step"] == step + 1 and "pointing_error_px" in result.metrics[-1]
