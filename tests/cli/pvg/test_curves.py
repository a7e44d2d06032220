"""``pvg curves``: the learning figure and last rows of runs, finished or still training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner

from proofgames.cli.pvg import app

TRAIN = ["train", "find-the-plus", "--batch-size", "8", "--json", "--checkpoint-every", "2",
         "--threads", "1", "--set", "eval_size=16", "--set", "pretrain_steps=0",
         "--set", "log_every=1"]  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    """A finished run (seed 0, 4 steps), and one still training (seed 1, 2 steps saved)."""
    root = tmp_path_factory.mktemp("runs")
    done, going = root / "done", root / "going"
    for folder, seed, steps in ((done, 0, 4), (going, 1, 4)):
        args = [*TRAIN, "--steps", str(steps), "--seed", str(seed), "--out", str(folder)]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
    for name in ("agents.pt", "config.json"):  # as a run still training has them: not yet
        (going / name).unlink()
    with (going / "metrics.jsonl").open("a") as log:
        log.write('{"step": 5, "verifier_acc')  # a line torn by a kill
    return done, going


def test_curves_draw_the_report_figure_and_give_each_runs_last_row(runs, tmp_path):
    done, going = runs
    out = tmp_path / "figures" / "curves.png"
    res = CliRunner().invoke(app, ["curves", str(done), str(going), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and out.stat().st_size > 10_000
    shown = json.loads(res.stdout)
    assert [r["run"] for r in shown["runs"]] == ["done", "going"]
    assert [r["seed"] for r in shown["runs"]] == [0, 1]  # the second from its state.pt
    assert [r["step"] for r in shown["runs"]] == [4, 4]  # the torn line dropped
    logged = [json.loads(x) for x in (done / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in logged] == [1, 2, 3, 4]
    assert shown["runs"][0]["pointing_error_px"] == logged[-1]["pointing_error_px"]
    assert shown["runs"][0]["verifier_accuracy"] == logged[-1]["verifier_accuracy"]


def test_curves_refuse_what_is_not_a_run(runs, tmp_path):
    done, _ = runs
    empty = tmp_path / "empty"
    empty.mkdir()
    started = tmp_path / "started"  # a run saved before its first metric row was logged
    started.mkdir()
    for name in ("config.json", "metrics.jsonl"):
        (started / name).write_text((done / name).read_text() if name == "config.json" else "")
    cases = [
        ([str(tmp_path / "nowhere")], "is not a run folder"),
        ([str(empty)], "holds neither config.json nor state.pt"),
        ([str(done), "--out", str(tmp_path)], "is a folder, not a file"),
        ([str(started)], "has logged no metric row yet"),
    ]
    for args, named in cases:
        res = CliRunner().invoke(app, ["curves", *args])
        assert res.exit_code == 2 and named in res.output, (args, res.output)
        assert "Traceback" not in res.output


def test_curves_until_a_step_show_the_rows_logged_up_to_it(runs, tmp_path):
    done, going = runs
    out = tmp_path / "until.png"
    args = ["curves", str(done), str(going), "--out", str(out), "--until", "2", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    assert [r["step"] for r in shown["runs"]] == [2, 2]
    logged = [json.loads(x) for x in (done / "metrics.jsonl").read_text().splitlines()]
    assert shown["runs"][0]["verifier_accuracy"] == logged[1]["verifier_accuracy"]
    res = CliRunner().invoke(app, ["curves", str(done), "--until", "0", "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_two_runs_of_one_seed_are_told_apart_by_their_folders():
    from proofgames.pvg.reproduce._figures import _identities

    ablation = {"run": "stn-s0", "seed": 0, "training": "pvg"}
    base = {"run": "pvg-s0", "seed": 0, "training": "pvg"}
    other = {"run": "pvg-s1", "seed": 1, "training": "pvg"}
    assert _identities([base, other]) == (["pvg seed 0", "pvg seed 1"], ["C0", "C1"])
    labels, colours = _identities([base, ablation, other])
    assert labels == ["pvg-s0", "stn-s0", "pvg-s1"]
    assert len(set(colours)) == 3


def test_the_pace_is_measured_over_the_last_logged_steps_against_the_planned_ones():
    from proofgames.cli.pvg._curves import PACE_WINDOW, pace

    steps = list(range(10, 1010, 10))  # 6 s a step up to step 500, then 3 s a step
    seconds = [6.0 * s if s <= 500 else 3000.0 + 3.0 * (s - 500) for s in steps]
    curve = {"step": steps, "seconds": seconds, "planned_steps": 2000}
    measured = pace(curve)
    assert PACE_WINDOW == 500 and measured is not None
    assert measured["steps_per_minute"] == pytest.approx(20.0)  # the last 500 steps only
    assert measured["over_steps"] == 500
    assert measured["hours_left"] == pytest.approx(1000 / 20 / 60)
    assert pace({**curve, "step": steps[:1], "seconds": seconds[:1]}) is None
    assert pace({**curve, "seconds": [7.0] * len(steps)}) is None  # time did not advance
    assert "hours_left" not in pace({**curve, "planned_steps": None})


def test_curves_say_where_each_run_stands_against_its_planned_steps(runs, tmp_path):
    done, _ = runs
    res = CliRunner().invoke(app, ["curves", str(done), "--out", str(tmp_path / "c.png"), "--json"])
    shown = json.loads(res.stdout)["runs"][0]
    assert shown["planned_steps"] == 4 and shown["step"] == 4
    assert shown["pace"]["steps_per_minute"] > 0 and shown["pace"]["hours_left"] == 0
    again = ["curves", str(done), "--out", str(tmp_path / "c.png")]
    refused = CliRunner().invoke(app, again)  # the figure is there: replaced on request only
    assert refused.exit_code == 2 and "give --overwrite" in refused.output
    text = CliRunner().invoke(app, [*again, "--overwrite"])
    assert text.exit_code == 0 and "done: step 4 of 4; " in text.output
    assert "steps a minute of training" in text.output and "to go" not in text.output
