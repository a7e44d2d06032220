"""The update rule of simultaneous play: which point and which batch each gradient sees."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.pvg import TrainConfig, make_task, task_defaults, train  # noqa: E402
from proofgames.pvg._game import Game  # noqa: E402
from proofgames.pvg.task import ProverOutput, PVGTask  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMOOTHING = 0.1


class _LinearProver(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(3, 2)

    def forward(self, x, labels=None):
        return ProverOutput(message=self.net(x), aux_loss=x.new_zeros(()))


class _LinearVerifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(5, 1)

    def forward(self, x, message):
        return self.net(torch.cat([x, message], dim=1))[:, 0]


class _TinyTask(PVGTask):
    """Gaussian instances, a linear prover and a linear verifier: gradients by hand."""

    name = "tiny"
    message_dim = 2

    def sample(self, n, generator):
        x = torch.randn(n, 3, generator=generator)
        return x, (x[:, 0] > 0).float()

    def make_prover(self):
        return _LinearProver()

    def make_verifier(self):
        return _LinearVerifier()

    def message_from_free(self, free, x):
        return free


def _by_hand(prover, verifier, x, y):
    """Both players' gradients at ``(prover, verifier)`` on ``(x, y)``, in closed form.

    The logit is ``z = w . [x, A x + c] + b``; the prover's loss is BCE(z, 1), the
    verifier's BCE(z, y (1 - s) + s / 2), both averaged over the batch.
    """
    a, c = prover.net.weight.detach(), prover.net.bias.detach()
    w, b = verifier.net.weight.detach()[0], verifier.net.bias.detach()
    message = x @ a.T + c
    features = torch.cat([x, message], dim=1)
    z = features @ w + b
    n = len(y)
    prover_error = (torch.sigmoid(z) - 1.0) / n  # dBCE(z, 1)/dz per instance, averaged
    w_message = w[3:]
    prover_grads = [
        w_message[:, None] * (prover_error @ x)[None, :],
        w_message * prover_error.sum(),
    ]
    verifier_error = (torch.sigmoid(z) - (y * (1 - SMOOTHING) + SMOOTHING / 2)) / n
    verifier_grads = [(verifier_error @ features)[None, :], verifier_error.sum()[None]]
    return prover_grads, verifier_grads


def _record_steps(game):
    """Each optimizer step's gradients and the weights of both players when it was taken."""
    steps = []

    def hook(player):
        def record(optimizer, args, kwargs):
            steps.append(
                {
                    "player": player,
                    "grads": [p.grad.clone() for p in optimizer.param_groups[0]["params"]],
                    "prover": [p.detach().clone() for p in game.prover.parameters()],
                    "verifier": [p.detach().clone() for p in game.verifier.parameters()],
                }
            )

        return record

    game.prover_opt.register_step_pre_hook(hook("prover"))
    game.verifier_opt.register_step_pre_hook(hook("verifier"))
    return steps


def _play_one_step(update):
    torch.manual_seed(0)
    config = TrainConfig(update=update, batch_size=16, label_smoothing=SMOOTHING,
                         verifier_steps=1, prover_steps=1, progress=False)  # fmt: skip
    game = Game(_TinyTask(), config, torch.device("cpu"), torch.Generator().manual_seed(5))
    start = (_copy(game.prover), _copy(game.verifier))
    steps = _record_steps(game)
    game.play(verifier_steps=1, prover_steps=1)
    batches = torch.Generator().manual_seed(5)
    first, second = _TinyTask().sample(16, batches), _TinyTask().sample(16, batches)
    return steps, start, first, second, (game.prover, game.verifier)


def _copy(module):
    clone = type(module)()
    clone.load_state_dict(module.state_dict())
    return clone


def _with(module, weights):
    clone = type(module)()
    with torch.no_grad():
        for param, value in zip(clone.parameters(), weights, strict=True):
            param.copy_(value)
    return clone


def _close(grads, expected):
    return all(torch.allclose(g, e, atol=1e-6) for g, e in zip(grads, expected, strict=True))


def test_simultaneous_updates_take_both_gradients_at_the_same_point_on_one_batch():
    steps, (prover0, verifier0), (x1, y1), _, _ = _play_one_step("simultaneous")
    assert [s["player"] for s in steps] == ["prover", "verifier"]
    prover_grads, verifier_grads = _by_hand(prover0, verifier0, x1, y1)
    assert _close(steps[0]["grads"], prover_grads)
    assert _close(steps[1]["grads"], verifier_grads)
    updated = _with(prover0, steps[1]["prover"])  # the prover had stepped by then
    assert not _close(steps[1]["grads"], _by_hand(updated, verifier0, x1, y1)[1])


def test_alternating_updates_give_the_verifier_the_updated_prover_and_a_fresh_batch():
    steps, (prover0, verifier0), (x1, y1), (x2, y2), _ = _play_one_step("alternating")
    assert [s["player"] for s in steps] == ["prover", "verifier"]
    prover_grads, _ = _by_hand(prover0, verifier0, x1, y1)
    assert _close(steps[0]["grads"], prover_grads)
    # the verifier steps after the prover: against the prover's new weights, on batch 2
    updated = _with(prover0, steps[1]["prover"])
    lr = TrainConfig.lr  # Adam's first step: lr * g / (|g| + eps), bias corrections cancel
    pairs = zip(prover0.parameters(), prover_grads, strict=True)
    by_hand = [p - lr * g / (g.abs() + 1e-8) for p, g in pairs]
    assert _close(steps[1]["prover"], [p.detach() for p in by_hand])
    assert not _close(steps[1]["prover"], list(prover0.parameters()))
    _, verifier_grads = _by_hand(updated, verifier0, x2, y2)
    assert _close(steps[1]["grads"], verifier_grads)
    # ... which neither the old prover on batch 2 nor the new one on batch 1 would give
    assert not _close(steps[1]["grads"], _by_hand(prover0, verifier0, x2, y2)[1])
    assert not _close(steps[1]["grads"], _by_hand(updated, verifier0, x1, y1)[1])


def test_alternating_play_takes_every_prover_step_before_the_verifier_steps():
    torch.manual_seed(0)
    config = TrainConfig(update="alternating", batch_size=8, progress=False)
    game = Game(_TinyTask(), config, torch.device("cpu"), torch.Generator().manual_seed(1))
    steps = _record_steps(game)
    game.play(verifier_steps=2, prover_steps=3)
    assert [s["player"] for s in steps] == ["prover"] * 3 + ["verifier"] * 2


def test_find_the_plus_defaults_to_alternating_updates_and_bec_to_simultaneous():
    assert task_defaults("find-the-plus")["update"] == "alternating"
    assert task_defaults("bec").get("update", TrainConfig.update) == "simultaneous"
    assert TrainConfig.from_dict({}).update == "simultaneous"  # settings saved before it


def test_an_unknown_update_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="update 'sideways'"):
        TrainConfig(update="sideways").validate()
    result = CliRunner().invoke(app, ["train", "bec", "--update", "sideways", "--steps", "1"])
    assert result.exit_code == 2 and "sideways" in result.output


def test_the_update_rule_is_saved_and_a_run_saved_before_it_resumes_as_simultaneous(tmp_path):
    task = make_task("bec")
    config = TrainConfig(steps=4, batch_size=32, eval_size=32, progress=False,
                         out_dir=str(tmp_path), checkpoint_every=2)  # fmt: skip
    train(task, replace(config, update="alternating"))
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["update"] == "alternating"
    with pytest.raises(ValueError, match="update: saved 'alternating'"):
        train(task, replace(config, steps=6), resume=tmp_path)
    train(task, config, resume=None)  # now a simultaneous run in the same folder
    payload = torch.load(tmp_path / "state.pt", weights_only=True)
    del payload["config"]["update"]  # as written before the setting existed
    torch.save(payload, tmp_path / "state.pt")
    assert train(task, replace(config, steps=6), resume=tmp_path).steps == 6
    with pytest.raises(ValueError, match="update: saved 'simultaneous'"):
        train(task, replace(config, steps=6, update="alternating"), resume=tmp_path)


def test_alternating_play_trains_every_formulation_with_the_same_seed_alike():
    task = make_task("bec")
    for formulation in ("simultaneous", "collaborative", "prover-first", "verifier-first"):
        config = TrainConfig(formulation=formulation, update="alternating", steps=3,
                             batch_size=32, eval_size=32, progress=False)  # fmt: skip
        first, again = train(task, config), train(task, config)
        assert _without_time(first.metrics) == _without_time(again.metrics)


def _without_time(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_cli_records_the_update_rule_and_a_resume_keeps_the_saved_one(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "run")
    args = ["train", "bec", "--steps", "2", "--batch-size", "32", "--update", "alternating",
            "--out", out, "--json"]  # fmt: skip
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["update"] == "alternating"
    changed = runner.invoke(app, ["train", "bec", "--resume", out, "--steps", "3",
                                  "--update", "simultaneous"])  # fmt: skip
    assert changed.exit_code == 2 and "drop --update" in " ".join(changed.output.split())
    kept = runner.invoke(app, ["train", "bec", "--resume", out, "--steps", "3", "--json"])
    assert kept.exit_code == 0 and json.loads(kept.output)["update"] == "alternating"
