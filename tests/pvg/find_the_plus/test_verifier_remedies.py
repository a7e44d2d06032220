"""Two remedies on the verifier's side: an L2 penalty on its weights, and fewer heads."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.pvg import FindThePlus, TrainConfig, stress_test, task_defaults  # noqa: E402
from proofgames.pvg._game import Game, verifier_optimizer  # noqa: E402
from proofgames.pvg.find_the_plus.stability import StabilitySettings, run_stability, sound_verifier  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _config(**changes: object) -> TrainConfig:
    return TrainConfig(**{**task_defaults("find-the-plus"), "device": "cpu", **changes})


def _step_without_loss(verifier: torch.nn.Module, decay: float) -> dict[str, torch.Tensor]:
    """One Adam step whose loss gradient is zero: only the penalty moves anything."""
    optimizer = verifier_optimizer(verifier, _config(verifier_weight_decay=decay))
    before = {k: v.detach().clone() for k, v in verifier.named_parameters()}
    optimizer.zero_grad()
    (0.0 * sum(p.sum() for p in verifier.parameters())).backward()
    optimizer.step()
    return {k: v.detach() - before[k] for k, v in verifier.named_parameters()}


def test_weight_decay_shrinks_the_verifiers_weights_and_leaves_its_biases():
    verifier = sound_verifier(FindThePlus())
    moved = _step_without_loss(verifier, decay=0.5)
    weight = verifier.classifier.weight.detach()
    plus = weight > 0
    # Adam normalizes the penalty's gradient: each nonzero weight moves lr toward 0.
    assert torch.allclose(moved["classifier.weight"][plus], torch.tensor(-3e-4), atol=1e-6)
    assert torch.all(moved["classifier.weight"][weight == 0] == 0)
    assert torch.all(moved["classifier.bias"] == 0) and torch.all(moved["to_shift.bias"] == 0)
    assert moved["to_shift.weight"].abs().max() > 0  # a weight matrix too


def test_without_weight_decay_nothing_moves_without_a_loss_gradient():
    moved = _step_without_loss(sound_verifier(FindThePlus()), decay=0.0)
    assert all(torch.all(d == 0) for d in moved.values())


def test_the_default_verifier_optimizer_has_one_group_as_saved_runs_expect():
    task = FindThePlus()
    game = Game(task, _config(), torch.device("cpu"), torch.Generator().manual_seed(0))
    assert len(game.verifier_opt.param_groups) == 1
    decayed = Game(task, _config(verifier_weight_decay=0.1), torch.device("cpu"),
                   torch.Generator().manual_seed(0))  # fmt: skip
    assert [g["weight_decay"] for g in decayed.verifier_opt.param_groups] == [0.1, 0.0]
    assert all(p.dim() >= 2 for p in decayed.verifier_opt.param_groups[0]["params"])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_a_bad_weight_decay_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="verifier_weight_decay"):
        _config(verifier_weight_decay=bad).validate()
    with pytest.raises(ValueError, match="verifier_weight_decay"):
        run_stability(StabilitySettings(verifier_weight_decay=bad))


@pytest.mark.parametrize("heads", [1, 2, 16])
def test_the_hand_set_protocol_is_sound_with_any_number_of_heads(heads):
    task = FindThePlus(heads=heads)
    verifier = sound_verifier(task)
    assert verifier.heads == heads
    exact = stress_test(task, verifier, None, ("exhaustive",))["exhaustive"]
    assert exact.perfect and exact.tn > 0


@pytest.mark.parametrize(("heads", "named"), [(0, "at least 1"), (17, "at most 16")])
def test_a_head_count_the_message_cannot_steer_is_refused(heads, named):
    with pytest.raises(ValueError, match=named):
        FindThePlus(heads=heads)


def test_pvg_stability_plays_one_head_with_weight_decay_and_records_both(tmp_path):
    out = tmp_path / "one-head"
    args = ["stability", "--steps", "2", "--certify-every", "1", "--batch-size", "16",
            "--certify-size", "32", "--error", "0", "--formulation", "simultaneous",
            "--update", "alternating", "--heads", "1", "--weight-decay", "0.5",
            "--out", str(out)]  # fmt: skip
    ran = CliRunner().invoke(app, args)
    assert ran.exit_code == 0, ran.output
    saved = json.loads((out / "stability.json").read_text())
    assert saved["settings"]["task"]["heads"] == 1
    assert saved["settings"]["verifier_weight_decay"] == 0.5
    assert saved["runs"][0]["rows"][0]["sound"] == 1.0
    assert "(1 head, verifier weight decay 0.5)" in (out / "stability.md").read_text()


def test_pvg_train_takes_weight_decay_and_heads_and_saves_them(tmp_path):
    args = ["train", "find-the-plus", "--steps", "2", "--batch-size", "16", "--threads", "1",
            "--set", "eval_size=16", "--set", "pretrain_steps=0",
            "--set", "verifier_weight_decay=0.25", "--task-arg", "heads=2",
            "--out", str(tmp_path)]  # fmt: skip
    ran = CliRunner().invoke(app, args)
    assert ran.exit_code == 0, ran.output
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["verifier_weight_decay"] == 0.25
    assert saved["task_args"]["heads"] == 2


@pytest.mark.parametrize(("heads", "named"), [("0", "at least 1"), ("17", "at most 16")])
def test_pvg_stability_refuses_a_head_count_by_name_before_any_work(tmp_path, heads, named):
    out = tmp_path / "refused"
    ran = CliRunner().invoke(app, ["stability", "--heads", heads, "--out", str(out)])
    assert ran.exit_code == 2 and named in ran.output and "Traceback" not in ran.output
    assert not out.exists()
