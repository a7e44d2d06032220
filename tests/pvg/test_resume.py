"""Resumable PVG training: ``state.pt`` lets a run continue exactly where it stopped."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import TrainingStopped  # noqa: E402
from proofgames.pvg import (  # noqa: E402
    StressConfig,
    TrainConfig,
    load_training_state,
    make_task,
    train,
)
from proofgames.pvg.reproduce import reproduce  # noqa: E402
from proofgames.pvg.reproduce.profiles import PROFILES  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# the module (the package attribute of that name is the function)
REPRODUCE = importlib.import_module("proofgames.pvg.reproduce.reproduce")

TINY_STRESS = StressConfig(prover_steps=3, batch_size=32, eval_size=32, lbfgs_max_iter=3)

# Each game exercises what a resumed run must carry over: Gumbel noise and several
# verifier steps (BEC), prover pretraining, adaptive prover steps and the kept best
# agents of the model-selection stress tests (FindThePlus).
GAMES = {
    "bec": (
        {},
        TrainConfig(steps=12, batch_size=64, eval_size=64, log_every=1, stress_every=4,
                    stress=TINY_STRESS, progress=False, seed=3),
    ),
    "find-the-plus": (
        {"size": 6},
        TrainConfig(steps=12, batch_size=8, eval_size=16, log_every=1, stress_every=4,
                    stress=TINY_STRESS, stress_attacks=("messages",), keep_best="messages",
                    pretrain_steps=2, verifier_steps=1, prover_steps=1,
                    adaptive_threshold=-1.0, adaptive_window=3, max_prover_steps=3,
                    progress=False, seed=1),
    ),
}  # fmt: skip


def _rows(metrics):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in metrics]


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


class Crash(RuntimeError):
    pass


@pytest.mark.parametrize("name", list(GAMES))
def test_a_run_resumed_after_a_crash_plays_the_same_game_as_an_uninterrupted_one(name, tmp_path):
    task_args, config = GAMES[name]
    task = make_task(name, **task_args)
    whole = train(task, replace(config, out_dir=str(tmp_path / "whole")))

    def crash_at_step_7(step, prover, verifier):
        if step == 7:
            raise Crash

    crashed = replace(config, out_dir=str(tmp_path / "crashed"), checkpoint_every=5)
    with pytest.raises(Crash):
        train(task, crashed, observe=crash_at_step_7)
    state = load_training_state(tmp_path / "crashed")
    assert state.step == 5  # the last periodic save; the log went on to step 6
    logged = (tmp_path / "crashed" / "metrics.jsonl").read_text().splitlines()
    assert json.loads(logged[-1])["step"] == 6

    resumed = train(task, crashed, resume=tmp_path / "crashed")
    assert resumed.steps == whole.steps == 12
    assert _rows(resumed.metrics) == _rows(whole.metrics)  # steps 6, 7 logged once
    assert _same_weights(resumed.prover, whole.prover)
    assert _same_weights(resumed.verifier, whole.verifier)
    assert (resumed.best_step, resumed.sound_at) == (whole.best_step, whole.sound_at)
    lines = (tmp_path / "crashed" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == list(range(1, 13))
    assert resumed.train_seconds >= state.train_seconds  # the whole run's time


KILLED_AFTER_RESUMING = """
import os, sys
from dataclasses import replace
import torch
from proofgames.pvg import TrainConfig, load_training_state, make_task, train
torch.set_num_threads(1)
state = load_training_state(sys.argv[1])
config = replace(TrainConfig.from_dict(state.config), steps=12)

def killed_at_step_6(step, prover, verifier):
    if step == 6:
        os._exit(3)  # like a SIGKILL: no cleanup, unflushed buffers are lost

train(make_task("bec"), config, resume=sys.argv[1], observe=killed_at_step_6)
"""


@pytest.mark.slow
def test_a_process_killed_right_after_resuming_keeps_the_logged_rows(tmp_path):
    task_args, config = GAMES["bec"]
    folder = tmp_path / "run"
    short = replace(config, steps=5, out_dir=str(folder), checkpoint_every=5)
    train(make_task("bec", **task_args), short)
    before = (folder / "metrics.jsonl").read_text()
    assert len(before.splitlines()) == 5
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_RESUMING, str(folder)], capture_output=True
    )
    assert killed.returncode == 3, killed.stderr.decode()
    assert (folder / "metrics.jsonl").read_text() == before


def test_a_finished_run_extends_into_a_new_folder_as_if_trained_longer_at_once(tmp_path):
    task_args, config = GAMES["bec"]
    task = make_task("bec", **task_args)
    longer = train(task, replace(config, steps=16))
    # it ends on a stress-test step (the last step is always stress-tested)
    short = replace(config, steps=8, out_dir=str(tmp_path / "short"), checkpoint_every=100)
    finished = train(task, short)  # saved only at its end
    shutil.copytree(tmp_path / "short", tmp_path / "copy")
    # resuming a finished run to the steps it has played plays nothing and returns it
    again = train(task, replace(short, out_dir=str(tmp_path / "again")), resume=tmp_path / "copy")
    assert again.steps == 8 and _rows(again.metrics) == _rows(finished.metrics)
    assert _same_weights(again.verifier, finished.verifier)
    extended = train(
        task, replace(short, steps=16, out_dir=str(tmp_path / "long")), resume=tmp_path / "short"
    )
    assert _rows(extended.metrics) == _rows(longer.metrics)
    assert _same_weights(extended.verifier, longer.verifier)
    assert load_training_state(tmp_path / "long").step == 16
    # the source folder is left as it was
    for path in (tmp_path / "copy").iterdir():
        assert path.read_bytes() == (tmp_path / "short" / path.name).read_bytes(), path.name


def test_resuming_refuses_a_different_game_or_nothing_to_do(tmp_path):
    task_args, config = GAMES["bec"]
    task = make_task("bec", **task_args)
    saved = replace(config, steps=4, stress_every=0, out_dir=str(tmp_path), checkpoint_every=2)
    train(task, saved)
    cases = {
        "seed": replace(saved, steps=8, seed=4),
        "lr": replace(saved, steps=8, verifier_lr=1e-3),
        "saved run has played 4": replace(saved, steps=3),
    }
    for expected, config in cases.items():
        with pytest.raises(ValueError, match=expected):
            train(task, config, resume=tmp_path)
    ftp_config = GAMES["find-the-plus"][1]
    with pytest.raises(ValueError, match="the saved run played bec"):
        train(make_task("find-the-plus", size=7), replace(ftp_config, steps=8), resume=tmp_path)
    with pytest.raises(FileNotFoundError, match="no PVG training state"):
        train(task, replace(saved, steps=8), resume=tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="out_dir"):
        train(task, TrainConfig(steps=2, checkpoint_every=1))


def test_cli_resume_continues_a_run_and_refuses_new_settings(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "run")
    common = ["--batch-size", "64", "--json"]
    first = runner.invoke(app, ["train", "bec", "--steps", "6", "--out", out, *common])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["train", "bec", "--resume", out, "--steps", "10", "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.output)
    assert summary["steps"] == 10 and summary["resumed_from"] == out
    assert summary["final"]["step"] == 10
    assert load_training_state(out).config["batch_size"] == 64  # the saved run's setting
    for extra in (["--seed", "3"], ["--batch-size", "32"], []):
        args = ["train", "bec", "--resume", out, *extra, "--json"]
        if extra:
            args += ["--steps", "12"]
        bad = runner.invoke(app, args)
        assert bad.exit_code == 2
        said = " ".join(bad.output.split())  # the console wraps long lines
        assert ("drop --" in said) if extra else ("needs --steps" in said)
    # a run still training has no agents.pt yet: diagnose reads its state's agents
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    shutil.copy(tmp_path / "run" / "state.pt", unfinished / "state.pt")
    seen = runner.invoke(app, ["diagnose", str(unfinished), "--n", "32", "--json"])
    assert seen.exit_code == 0, seen.output
    assert json.loads(seen.output)["checkpoint"].endswith("state.pt (step 10)")
    wrong_task = runner.invoke(app, ["train", "find-the-plus", "--resume", out, "--steps", "12"])
    assert wrong_task.exit_code == 2
    assert "holds a bec run" in " ".join(wrong_task.output.split())


def _measured(runs):
    timing = {"seconds", "train_seconds", "stress_seconds", "sound_seconds", "carried_over"}
    return [{k: v for k, v in run.items() if k not in timing} for run in runs]


@pytest.mark.slow
def test_an_interrupted_reproduction_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    smoke = PROFILES["smoke"]  # FindThePlus: 6 PVG steps, stress tests every 3
    cut_short = replace(smoke, ftp=tuple({**dict(smoke.ftp), "steps": 3}.items()))
    args = {"seeds": (0,), "tasks": ("find-the-plus",), "device": "cpu"}
    whole = reproduce(profile=smoke, runs_dir=tmp_path / "whole", **args)["find-the-plus"]
    # the interrupted call: its PVG run stopped after 3 of the 6 steps
    reproduce(profile=cut_short, runs_dir=tmp_path / "cut", **args)
    resumed = reproduce(profile=smoke, runs_dir=tmp_path / "cut", resume=True, **args)
    resumed = resumed["find-the-plus"]
    assert _measured(resumed["runs"]) == _measured(whole["runs"])
    for a, b in zip(resumed["curves"], whole["curves"], strict=True):
        assert {k: v for k, v in a.items() if k != "seconds"} == {
            k: v for k, v in b.items() if k != "seconds"
        }
    assert resumed["gaze"] == whole["gaze"]
    assert all(run["carried_over"] for run in resumed["runs"])
    assert "resumed: 2 of 2 runs" in resumed["seconds_note"]

    # everything is finished now: resuming again trains nothing
    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(REPRODUCE, "train", no_training)
    again = reproduce(profile=smoke, runs_dir=tmp_path / "cut", resume=True, **args)
    assert _measured(again["find-the-plus"]["runs"]) == _measured(whole["runs"])
    # other settings in the same folder are refused, not silently mixed in
    other = replace(smoke, ftp=tuple({**dict(smoke.ftp), "label_smoothing": 0.1}.items()))
    with pytest.raises(ValueError, match="other settings"):
        reproduce(profile=other, runs_dir=tmp_path / "cut", resume=True, **args)
    with pytest.raises(ValueError, match="runs_dir"):
        reproduce(profile=smoke, resume=True, **args)


@pytest.mark.slow
def test_a_reused_run_saved_before_the_exhaustive_attack_gets_it_its_anatomy_and_the_aim(
    tmp_path, monkeypatch
):
    args = {"seeds": (0,), "tasks": ("find-the-plus",), "device": "cpu", "runs_dir": tmp_path}
    first = reproduce(profile="smoke", **args)["find-the-plus"]
    saved = tmp_path / "find-the-plus-pvg-s0" / "run.json"
    older = json.loads(saved.read_text())
    del older["run"]["attacks"]["exhaustive"]  # as written before the attack existed
    del older["run"]["attack"]  # and before its anatomy was recorded
    del older["run"]["pointing"]  # and the prover's aim with the detector
    saved.write_text(json.dumps(older))

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(REPRODUCE, "train", no_training)
    again = reproduce(profile="smoke", resume=True, **args)["find-the-plus"]
    assert _measured(again["runs"]) == _measured(first["runs"])  # the same held-out attack
    rewritten = json.loads(saved.read_text())["run"]
    assert rewritten["attacks"] == first["runs"][0]["attacks"]
    assert rewritten["attack"] == first["runs"][0]["attack"] == again["runs"][0]["attack"]
    assert rewritten["pointing"] == first["runs"][0]["pointing"] == again["runs"][0]["pointing"]


@pytest.mark.slow
def test_a_resumed_reproduction_reuses_the_saved_bec_results(tmp_path, monkeypatch):
    args = {"seeds": (0,), "tasks": ("bec",), "device": "cpu", "runs_dir": tmp_path}
    first = reproduce(profile="smoke", **args)["bec"]

    def no_bec(*args, **kwargs):
        raise AssertionError("BEC was run again")

    monkeypatch.setattr(REPRODUCE, "reproduce_bec", no_bec)
    assert reproduce(profile="smoke", resume=True, **args)["bec"] == first
    with pytest.raises(AssertionError, match="BEC was run again"):  # other seeds: rerun
        reproduce(profile="smoke", resume=True, **{**args, "seeds": (0, 1)})


def test_a_state_saved_before_new_settings_existed_still_resumes(tmp_path):
    # settings added to the task or the configuration after a save take their defaults
    task_args, config = GAMES["find-the-plus"]
    task = make_task("find-the-plus", **task_args)
    saved = replace(config, steps=4, out_dir=str(tmp_path), checkpoint_every=4)
    train(task, saved)
    payload = torch.load(tmp_path / "state.pt", weights_only=True)
    del payload["task_args"]["balanced_ones"], payload["config"]["verifier_lr"]
    torch.save(payload, tmp_path / "state.pt")
    assert train(task, replace(saved, steps=5), resume=tmp_path).steps == 5
    with pytest.raises(ValueError, match="cannot resume"):  # a changed setting still counts
        train(make_task("find-the-plus", size=6, balanced_ones=True), saved, resume=tmp_path)


def _board_scalars(folder, tag):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    board = event_accumulator.EventAccumulator(str(folder / "tensorboard"))
    board.Reload()
    return [(event.step, event.value) for event in board.Scalars(tag)]


def test_tensorboard_gets_every_logged_row_once_even_across_a_resume(tmp_path):
    task = make_task("bec")
    config = TrainConfig(steps=9, batch_size=32, eval_size=32, log_every=1, progress=False,
                         seed=2, out_dir=str(tmp_path / "whole"), tensorboard=True)  # fmt: skip
    whole = train(task, config)
    expected = [(row["step"], row["verifier_accuracy"]) for row in whole.metrics]
    got = _board_scalars(tmp_path / "whole", "bec/verifier_accuracy")
    assert [step for step, _ in got] == list(range(1, 10))
    assert [v for _, v in got] == pytest.approx([v for _, v in expected], abs=1e-6)

    def crash_at_step_7(step, prover, verifier):
        if step == 7:
            raise Crash

    cut = replace(config, out_dir=str(tmp_path / "cut"), checkpoint_every=4)
    with pytest.raises(Crash):
        train(task, cut, observe=crash_at_step_7)  # logged steps 1-6, saved at 4
    train(task, cut, resume=tmp_path / "cut")
    assert _board_scalars(tmp_path / "cut", "bec/verifier_accuracy") == got
    with pytest.raises(ValueError, match="out_dir"):
        train(task, TrainConfig(steps=2, tensorboard=True))


@pytest.mark.slow
def test_cli_reproduce_resume_reuses_the_saved_runs(tmp_path):
    runner = CliRunner()
    args = ["reproduce", "--profile", "smoke", "--task", "find-the-plus", "--seeds", "1"]
    args += ["--out", str(tmp_path), "--json", "--device", "cpu"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, [*args, "--resume"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["find-the-plus"] == json.loads(first.output)["find-the-plus"]
    assert "resumed: 2 of 2 runs" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("name", list(GAMES))
def test_a_run_stopped_by_sigterm_saves_the_step_it_played_and_resumes_exactly(name, tmp_path):
    task_args, config = GAMES[name]
    task = make_task(name, **task_args)
    whole = train(task, replace(config, out_dir=str(tmp_path / "whole")))

    def sigterm_at_step_7(step, prover, verifier):
        if step == 7:
            signal.raise_signal(signal.SIGTERM)  # as `kill` would: the handler only notes it

    before = signal.getsignal(signal.SIGTERM)
    stopped = replace(config, out_dir=str(tmp_path / "stopped"), checkpoint_every=5)
    with pytest.raises(TrainingStopped, match=r"SIGTERM after game step 7.*resumed"):
        train(task, stopped, observe=sigterm_at_step_7)
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    assert load_training_state(tmp_path / "stopped").step == 7  # not the periodic save, 5
    resumed = train(task, stopped, resume=tmp_path / "stopped")
    assert _rows(resumed.metrics) == _rows(whole.metrics)
    assert _same_weights(resumed.prover, whole.prover)
    assert _same_weights(resumed.verifier, whole.verifier)


def test_a_run_that_cannot_resume_leaves_sigterm_alone(tmp_path):
    task_args, config = GAMES["bec"]
    seen = []

    def look(step, prover, verifier):
        seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    train(make_task("bec", **task_args), replace(config, steps=2), observe=look)
    assert len(seen) == 3 and all(handler is before for handler in seen)  # steps 0, 1, 2


@pytest.mark.slow
def test_pvg_train_stopped_by_sigterm_says_how_to_resume_and_keeps_its_rows(tmp_path):
    folder = tmp_path / "run"
    command = [sys.executable, "-m", "proofgames", "pvg", "train", "bec", "--steps", "100000",
               "--set", "log_every=1", "--checkpoint-every", "100000", "--threads", "1",
               "--out", str(folder)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = folder / "metrics.jsonl"
    for _ in range(1200):  # until it has logged a few rows (at most two minutes)
        if process.poll() is not None or (log.exists() and len(log.read_text().splitlines()) >= 3):
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2, err.decode()
    said = " ".join(err.decode().split())
    assert f"saved in {folder}," in said and "resumed from there" in said
    state = load_training_state(folder)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows[-1]["step"] == state.step >= 3  # saved after the last step it played


ORPHANED_TRAINING = """
import os, sys
import torch
from proofgames.sweeps.executors import make_executor
from proofgames.pvg import TrainConfig, make_task, train

def long_training(folder):
    torch.set_num_threads(1)
    with open(folder + ".pid", "w") as f:
        f.write(str(os.getpid()))
    config = TrainConfig(steps=100000, batch_size=64, eval_size=64, log_every=1,
                         checkpoint_every=100000, out_dir=folder, progress=False)
    train(make_task("bec"), config)

if __name__ == "__main__":
    with make_executor("local", 2, start_method="spawn") as pool:
        pool.submit(long_training, sys.argv[1]).result()
"""


@pytest.mark.slow
def test_a_pool_worker_whose_parent_is_killed_saves_its_training_and_exits(tmp_path):
    folder = tmp_path / "run"
    script = tmp_path / "orphaned.py"
    script.write_text(ORPHANED_TRAINING)
    parent = subprocess.Popen([sys.executable, str(script), str(folder)])
    log, pid_file = folder / "metrics.jsonl", tmp_path / "run.pid"
    try:
        for _ in range(1200):  # until the worker has logged a few rows (at most two minutes)
            if parent.poll() is not None or (
                log.exists() and len(log.read_text().splitlines()) >= 3
            ):
                break
            time.sleep(0.1)
        worker = int(pid_file.read_text())
        parent.kill()  # SIGKILL: the parent can neither save nor stop its workers
        parent.wait()
        for _ in range(600):  # the worker notices within a second, saves and exits
            if not Path(f"/proc/{worker}").exists() or "\tZ" in _state(worker):
                break
            time.sleep(0.1)
        assert not Path(f"/proc/{worker}").exists() or "\tZ" in _state(worker)
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        assert load_training_state(folder).step == rows[-1]["step"] >= 3
    finally:
        parent.kill()
        if pid_file.exists() and Path(f"/proc/{pid_file.read_text()}").exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0]
    except (FileNotFoundError, IndexError):
        return "\tX"


def test_a_run_may_resume_in_another_precision_and_records_it(tmp_path):
    """``precision`` may change on resuming (as ``device`` may): the rules stay the same."""
    task_args, config = GAMES["find-the-plus"]
    task = make_task("find-the-plus", **task_args)
    saved = replace(config, steps=2, stress_every=0, keep_best=None, out_dir=str(tmp_path),
                    checkpoint_every=1)  # fmt: skip
    train(task, saved)
    resumed = train(task, replace(saved, steps=3, precision="bf16"), resume=tmp_path)
    assert resumed.steps == 3
    assert load_training_state(tmp_path).config["precision"] == "bf16"
    fp32 = train(task, replace(saved, steps=3, out_dir=str(tmp_path / "fp32")))
    assert _rows(resumed.metrics)[:2] == _rows(fp32.metrics)[:2]  # the same up to the switch
