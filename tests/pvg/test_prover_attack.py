"""The prover attack: continue training a copy of the trained prover, or train a fresh one."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.pvg import (  # noqa: E402
    StressConfig,
    TrainConfig,
    evaluate,
    make_task,
    stress_test,
    train,
)
from proofgames.pvg.stress import attacking_prover  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ATTACK = StressConfig(prover_steps=5, batch_size=64, eval_size=256, seed=7)


def _trained_bec_prover():
    task = make_task("bec")
    config = TrainConfig(steps=20, batch_size=256, eval_size=64, progress=False, seed=2)
    result = train(task, config)
    return task, result.prover, result.verifier


def _weights(module):
    return {k: v.clone() for k, v in module.state_dict().items()}


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_continued_attack_starts_from_a_copy_of_the_trained_prover():
    task, prover, _ = _trained_bec_prover()
    start = attacking_prover(task, "continued", prover)
    assert start is not prover and _same(_weights(start), _weights(prover))
    fresh = attacking_prover(task, "fresh", prover)
    assert not _same(_weights(fresh), _weights(prover))


def test_a_continued_attack_that_barely_moves_sends_the_trained_provers_messages():
    # With a vanishing learning rate the attacking prover keeps its starting weights, so
    # its messages -- hence the counts -- are the trained prover's own on that batch.
    task, prover, verifier = _trained_bec_prover()
    still = StressConfig(prover_steps=1, prover_lr=1e-30, eval_size=256, batch_size=64, seed=3)
    result = stress_test(task, verifier, prover, ("prover",), still)["prover"]
    x, y = task.sample(256, torch.Generator().manual_seed(3))
    own = evaluate(task, prover, verifier, x, y)
    assert (result.tp, result.fp, result.fn, result.tn) == (
        own["tp"], own["fp"], own["fn"], own["tn"]
    )  # fmt: skip


def test_the_prover_attack_leaves_the_trained_prover_and_verifier_unchanged():
    task, prover, verifier = _trained_bec_prover()
    before = _weights(prover), _weights(verifier)
    stress_test(task, verifier, prover, ("prover",), ATTACK)
    assert _same(_weights(prover), before[0]) and _same(_weights(verifier), before[1])


def test_the_continued_attack_without_a_prover_or_an_unknown_start_is_refused():
    task = make_task("bec")
    verifier = task.make_verifier()
    with pytest.raises(ValueError, match="continued prover attack"):
        stress_test(task, verifier, None, ("prover",), ATTACK)
    with pytest.raises(ValueError, match="prover_attack 'warm'"):
        stress_test(task, verifier, None, ("prover",), StressConfig(prover_attack="warm"))
    fresh = StressConfig(prover_steps=2, batch_size=32, eval_size=32, prover_attack="fresh")
    assert stress_test(task, verifier, None, ("prover",), fresh)["prover"].tp >= 0


def test_settings_saved_before_the_option_existed_ran_the_fresh_attack():
    assert TrainConfig.from_dict({"stress": {"seed": 1}}).stress.prover_attack == "fresh"
    assert TrainConfig.from_dict({}).stress.prover_attack == "continued"
    assert TrainConfig().stress.prover_attack == "continued"


def _train_tiny_bec(runner: CliRunner, out: str, *options: str) -> None:
    """``pvg train bec`` for 4 steps at batch 64 into ``out`` (for the stress tests)."""
    trained = runner.invoke(app, ["train", "bec", "--steps", "4", "--batch-size", "64",
                                  *options, "--out", out, "--json"])  # fmt: skip
    assert trained.exit_code == 0, trained.output


def test_pvg_stress_runs_the_chosen_prover_attack(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "run")
    _train_tiny_bec(runner, out)
    common = ["stress", out, "--attack", "prover", "--prover-steps", "2", "--batch-size",
              "32", "--eval-size", "64", "--json"]  # fmt: skip
    for start in ("continued", "fresh"):
        ran = runner.invoke(app, [*common, "--prover-attack", start])
        assert ran.exit_code == 0, ran.output
        assert json.loads(ran.output)["prover_attack"] == start
    bad = runner.invoke(app, [*common, "--prover-attack", "warm"])
    assert bad.exit_code == 2 and "warm" in bad.output


def test_pvg_stress_attacks_a_run_still_training_from_its_saved_state(tmp_path):
    runner = CliRunner()
    out = tmp_path / "run"
    _train_tiny_bec(runner, str(out), "--checkpoint-every", "2")
    args = ["stress", str(out), "--attack", "both", "--prover-steps", "2", "--batch-size",
            "32", "--eval-size", "64", "--lbfgs-max-iter", "5", "--json"]  # fmt: skip
    finished = json.loads(runner.invoke(app, args).output)
    (out / "agents.pt").unlink()  # as while the run trains: only its state is saved
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    training = json.loads(ran.output)
    assert training["checkpoint"] == f"{out / 'state.pt'} (step 4)"
    assert training["attacks"] == finished["attacks"]  # the state holds the same agents
    (out / "state.pt").unlink()
    gone = runner.invoke(app, args)
    assert gone.exit_code == 2 and "agents.pt" in gone.output


def test_pvg_stress_prints_each_rate_with_its_interval_from_the_same_counts(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "run")
    _train_tiny_bec(runner, out)
    args = ["stress", out, "--attack", "prover", "--prover-steps", "2", "--batch-size",
            "32", "--eval-size", "64"]  # fmt: skip
    saved = json.loads(runner.invoke(app, [*args, "--json"]).output)["attacks"]["prover"]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    line = " ".join(shown.output.split())  # one line, whatever the terminal's width
    for rate in ("precision", "recall", "specificity"):
        bounds = saved["intervals"][rate]
        text = "[-]" if bounds is None else f"[{bounds[0]:.4f}, {bounds[1]:.4f}]"
        assert f"{rate} {saved[rate]:.4f} {text}" in line
    assert "95% Clopper-Pearson" in line
