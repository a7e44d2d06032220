"""No PVG run is lost or mixed with another: refusals before work, atomic writes."""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import asdict, replace

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import ProofgamesError  # noqa: E402
from proofgames.pvg import TrainConfig, load_checkpoint, make_task, train  # noqa: E402
from proofgames.pvg.reproduce import reproduce  # noqa: E402
from proofgames.pvg.reproduce.profiles import PROFILES  # noqa: E402
from proofgames.pvg.reproduce.report import update_readme, write_report  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

RUNNER = CliRunner()
REPRODUCE = importlib.import_module("proofgames.pvg.reproduce.reproduce")
TRAIN = ["train", "bec", "--steps", "2", "--batch-size", "16", "--json"]


def _said(res) -> str:
    return " ".join(res.output.split())


def _digest(folder) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_train_into_a_folder_holding_another_run_is_refused_without_overwrite(tmp_path):
    out = tmp_path / "run"
    first = RUNNER.invoke(app, [*TRAIN, "--out", str(out), "--tensorboard"])
    assert first.exit_code == 0, first.output
    before = _digest(out)
    again = RUNNER.invoke(app, [*TRAIN, "--seed", "1", "--out", str(out)])
    assert again.exit_code == 2, again.output
    said = _said(again)
    assert str(out) in said and "--overwrite" in said and "--resume" in said
    assert _digest(out) == before  # nothing touched
    mine = out / "notes.txt"
    mine.write_text("not a run file\n")
    replaced = RUNNER.invoke(
        app, [*TRAIN, "--seed", "1", "--checkpoint-every", "0", "--out", str(out), "--overwrite"]
    )
    assert replaced.exit_code == 0, replaced.output
    assert not (out / "state.pt").exists() and not (out / "tensorboard").exists()
    assert json.loads((out / "config.json").read_text())["seed"] == 1
    assert mine.read_text() == "not a run file\n"  # only the old run's files go


def test_resume_may_continue_in_place_but_not_into_another_run(tmp_path):
    run, other = tmp_path / "run", tmp_path / "other"
    for folder in (run, other):
        assert RUNNER.invoke(app, [*TRAIN, "--out", str(folder)]).exit_code == 0
    more = ["train", "bec", "--resume", str(run), "--steps", "3", "--json"]
    into_other = RUNNER.invoke(app, [*more, "--out", str(other)])
    assert into_other.exit_code == 2 and str(other) in _said(into_other)
    assert load_checkpoint(other, "cpu").config.steps == 2
    assert RUNNER.invoke(app, [*more, "--out", str(other), "--overwrite"]).exit_code == 0
    assert load_checkpoint(other, "cpu").config.steps == 3
    in_place = RUNNER.invoke(app, more)
    assert in_place.exit_code == 0, in_place.output
    clash = RUNNER.invoke(app, [*more, "--overwrite"])  # would remove what it continues
    assert clash.exit_code == 2 and "--overwrite" in _said(clash)


def _forbid_training(monkeypatch):
    def trained(*args, **kwargs):
        raise AssertionError("trained before refusing")

    monkeypatch.setattr(REPRODUCE, "reproduce_bec", trained)
    monkeypatch.setattr(REPRODUCE, "train", trained)


def test_reproduce_resume_checks_every_saved_result_before_any_work(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    other = PROFILES["cpu"]
    saved = {"profile": json.loads(json.dumps(asdict(other))), "seeds": [0]}
    (runs / "bec.json").write_text(json.dumps({**saved, "bec": {"runs": []}}))
    before = _digest(runs)
    _forbid_training(monkeypatch)
    with pytest.raises(ProofgamesError, match=r"bec\.json"):
        reproduce(seeds=[0], profile="smoke", device="cpu", runs_dir=runs, resume=True)
    assert _digest(runs) == before
    args = ["reproduce", "--profile", "smoke", "--seeds", "1", "--out", str(tmp_path), "--resume"]
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 2 and "bec.json" in _said(res), res.output
    assert _digest(runs) == before


@pytest.mark.slow
def test_reproduce_resume_refuses_find_the_plus_runs_of_another_profile_first(
    tmp_path, monkeypatch
):
    runs = tmp_path / "runs"
    smoke = PROFILES["smoke"]
    first = reproduce(seeds=[0], profile=smoke, tasks=("find-the-plus",), device="cpu",
                      runs_dir=runs)  # fmt: skip
    assert first["find-the-plus"]["runs"]
    before = _digest(runs)
    _forbid_training(monkeypatch)
    changed = replace(smoke, ftp=(*smoke.ftp, ("lr", 1e-3)))
    with pytest.raises(ProofgamesError, match="find-the-plus-pvg-s0"):
        reproduce(seeds=[0], profile=changed, device="cpu", runs_dir=runs, resume=True)
    assert _digest(runs) == before


def test_reproduce_into_saved_runs_needs_resume_or_overwrite(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    (runs / "find-the-plus-pvg-s0").mkdir(parents=True)
    (runs / "find-the-plus-pvg-s0" / "state.pt").write_bytes(b"an interrupted run")
    _forbid_training(monkeypatch)
    args = ["reproduce", "--profile", "smoke", "--seeds", "1", "--out", str(tmp_path)]
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "--resume" in _said(res) and "--overwrite" in _said(res)
    assert (runs / "find-the-plus-pvg-s0" / "state.pt").read_bytes() == b"an interrupted run"
    both = RUNNER.invoke(app, [*args, "--resume", "--overwrite"])
    assert both.exit_code == 2 and "--overwrite" in _said(both)


def test_a_checkpoint_write_that_fails_leaves_the_old_checkpoint_whole(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    config = TrainConfig(steps=2, batch_size=16, eval_size=16, progress=False,
                         out_dir=str(folder), checkpoint_every=1)  # fmt: skip
    train(make_task("bec"), config)
    before = _digest(folder)
    real_save = torch.save

    def torn_save(obj, f, *args, **kwargs):
        real_save(obj, f, *args, **kwargs)
        if hasattr(f, "truncate"):  # the disk filled up half-way
            f.flush()
            f.truncate(100)
        else:
            with open(f, "r+b") as file:
                file.truncate(100)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", torn_save)
    with pytest.raises(ProofgamesError, match=r"agents\.pt"):
        train(make_task("bec"), replace(config, steps=3, checkpoint_every=0), resume=folder)
    monkeypatch.undo()
    assert _digest(folder)["agents.pt"] == before["agents.pt"]
    assert _digest(folder)["state.pt"] == before["state.pt"]
    assert load_checkpoint(folder, "cpu").config.steps == 2
    assert sorted(p.name for p in folder.iterdir()) == sorted(before)  # no stray partials


@pytest.mark.slow
def test_a_report_that_cannot_be_drawn_leaves_the_old_report(tmp_path, monkeypatch):
    results = reproduce(seeds=[0], profile="smoke", tasks=("bec",), device="cpu")
    out = tmp_path / "report"
    write_report(results, out)
    before = _digest(out)

    def broken(*args, **kwargs):
        raise RuntimeError("the plot broke")

    report = importlib.import_module("proofgames.pvg.reproduce.report")
    monkeypatch.setattr(report, "plot_formulations", broken)
    with pytest.raises(RuntimeError):
        write_report({**results, "seconds": 123.0}, out)
    assert _digest(out) == before


def test_files_written_atomically_get_the_usual_permissions(tmp_path):
    out = tmp_path / "run"
    assert RUNNER.invoke(app, [*TRAIN, "--out", str(out)]).exit_code == 0
    plain = tmp_path / "plain"
    plain.write_text("")  # what open() gives under this umask
    for name in ("agents.pt", "config.json", "metrics.jsonl", "state.pt"):
        assert (out / name).stat().st_mode == plain.stat().st_mode, name
    readme = tmp_path / "README.md"
    readme.write_text("<!-- report:pvg:start -->\nold\n<!-- report:pvg:end -->\n")
    readme.chmod(0o640)
    assert update_readme(readme, "new\n")
    assert readme.read_text() == "<!-- report:pvg:start -->\nnew\n<!-- report:pvg:end -->\n"
    assert readme.stat().st_mode & 0o777 == 0o640
