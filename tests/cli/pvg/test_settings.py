"""``pvg train --set KEY=VALUE``: the training settings without an option of their own."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner

from proofgames.cli.pvg import app

BASE = ["train", "find-the-plus", "--steps", "3", "--batch-size", "8", "--json", "--threads", "1"]


def test_set_reaches_the_run_and_its_saved_configuration(tmp_path):
    """FindThePlus defaults to the adaptive rule (threshold 0.75) and 100 pretraining
    steps; --set turns both off and sizes the evaluation batch and the log."""
    sets = ["adaptive_threshold=none", "pretrain_steps=0", "eval_size=16", "log_every=1"]
    args = [*BASE, "--out", str(tmp_path)] + [x for s in sets for x in ("--set", s)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["adaptive_threshold"] is None and saved["pretrain_steps"] == 0
    assert saved["eval_size"] == 16 and saved["log_every"] == 1
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if r["step"] > 0] == [1, 2, 3]  # a row every step
    assert {r["tp"] + r["fp"] + r["fn"] + r["tn"] for r in rows if "tp" in r} == {16}


@pytest.mark.slow
def test_set_sizes_the_stress_tests_of_a_run(tmp_path):
    """stress.FIELD reaches the stress tests: a small, quick messages attack every step."""
    sets = ["stress.eval_size=24", "stress.lbfgs_max_iter=3", "stress.batch_size=16"]
    args = [*BASE, "--out", str(tmp_path), "--stress-every", "1", "--stress-attack", "messages"]
    res = CliRunner().invoke(app, args + [x for s in sets for x in ("--set", s)])
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "config.json").read_text())["stress"]
    assert (saved["eval_size"], saved["lbfgs_max_iter"], saved["batch_size"]) == (24, 3, 16)
    assert saved["prover_steps"] == 500  # the others keep their defaults
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "messages_precision" in r] == [1, 2, 3]


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("stress.nosuch=1", "stress.FIELD for"),
        ("stress.eval_size=many", "eval_size must be int"),
        ("stress.eval_size=0", "eval_size"),
        ("other.eval_size=5", "not a setting --set takes"),
        ("lr=0.1", "its own option --lr"),
        ("nosuch=1", "--set nosuch: not a setting --set takes"),
        ("eval_size=2.5", "eval_size must be int"),
        ("eval_size=0", "eval_size"),
        ("aux_weight=nan", "aux_weight must be a finite float"),
        ("verifier_weight_decay=-1", "verifier_weight_decay must be a finite number >= 0"),
        ("adaptive_window", "is not KEY=VALUE"),
    ],
)
def test_a_bad_setting_is_refused_before_any_work(tmp_path, setting, named):
    out = tmp_path / "run"
    res = CliRunner().invoke(app, [*BASE, "--out", str(out), "--set", setting])
    assert res.exit_code == 2, res.output
    assert named in res.output and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.slow
def test_a_resumed_run_keeps_its_settings(tmp_path):
    first = CliRunner().invoke(app, [*BASE, "--out", str(tmp_path), "--checkpoint-every", "1"])
    assert first.exit_code == 0, first.output
    args = ["train", "find-the-plus", "--steps", "4", "--resume", str(tmp_path)]
    res = CliRunner().invoke(app, [*args, "--set", "log_every=2"])
    assert res.exit_code == 2 and "drop --set" in res.output, res.output
