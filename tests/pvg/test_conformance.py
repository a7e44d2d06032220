"""Every registered PVG task honours the task interface, trains and is stress-tested.

Run over :func:`~proofgames.pvg.task_names`, so a task registered later is checked by the
same tests: seeded sampling with binary, roughly balanced labels; messages of the declared
size that do not depend on the labels; one logit per instance; gradients from the
verifier's logit into every prover parameter; legal relaxed messages; every formulation
trains and is seed-deterministic; every supported attack accounts for the whole batch;
checkpoints round-trip.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg import (  # noqa: E402
    FORMULATIONS,
    StressConfig,
    TrainConfig,
    load_checkpoint,
    make_task,
    stress_test,
    supported_attacks,
    task_defaults,
    task_names,
    train,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASKS = task_names()
TINY_STRESS = StressConfig(prover_steps=3, batch_size=16, eval_size=24, lbfgs_max_iter=3)


def tiny_config(name: str, **overrides: Any) -> TrainConfig:
    """The task's paper settings shrunk to a few steps on a small batch."""
    settings: dict[str, Any] = {
        **task_defaults(name),
        "steps": 3,
        "batch_size": 16,
        "eval_size": 24,
        "log_every": 1,
        "progress": False,
        "stress": TINY_STRESS,
    }
    if "pretrain_steps" in settings:
        settings.update(pretrain_steps=1, max_prover_steps=2)
    return TrainConfig(**{**settings, **overrides})


def untimed(metrics: list[dict[str, float]]) -> list[dict[str, float]]:
    """The logged rows without their wall-clock column."""
    return [{k: v for k, v in row.items() if k != "seconds"} for row in metrics]


@pytest.fixture(params=TASKS)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_sampling_is_seeded_with_binary_balanced_labels(name):
    task = make_task(name)
    x, y = task.sample(2000, torch.Generator().manual_seed(7))
    x2, y2 = task.sample(2000, torch.Generator().manual_seed(7))
    x3, _ = task.sample(2000, torch.Generator().manual_seed(8))
    assert torch.equal(x, x2) and torch.equal(y, y2) and not torch.equal(x, x3)
    assert y.shape == (2000,) and x.shape[0] == 2000
    assert set(y.unique().tolist()) == {0.0, 1.0}
    assert abs(float(y.mean()) - 0.5) < 0.05


def test_messages_have_the_declared_size_and_ignore_the_labels(name):
    task = make_task(name)
    torch.manual_seed(0)
    prover = task.make_prover().eval()
    x, y = task.sample(64, torch.Generator().manual_seed(1))
    with torch.no_grad():
        told_truth, told_lie = prover(x, y), prover(x, 1 - y)
    assert told_truth.message.shape == (64, task.message_dim)
    assert torch.isfinite(told_truth.message).all()
    assert torch.equal(told_truth.message, told_lie.message)
    assert told_truth.aux_loss.shape == ()


def test_the_verifier_gives_one_finite_logit_per_instance(name):
    task = make_task(name)
    torch.manual_seed(0)
    prover, verifier = task.make_prover().eval(), task.make_verifier()
    x, y = task.sample(40, torch.Generator().manual_seed(2))
    with torch.no_grad():
        logits = verifier(x, prover(x, y).message)
    assert logits.shape == (40,) and torch.isfinite(logits).all()


def test_the_verifier_logit_reaches_the_prover_through_its_message(name):
    task = make_task(name)
    torch.manual_seed(0)
    prover, verifier = task.make_prover().train(), task.make_verifier()
    x, y = task.sample(128, torch.Generator().manual_seed(3))
    verifier(x, prover(x, y).message).sum().backward()
    # the message path alone (no auxiliary loss here) reaches the prover's first layer
    first = next(prover.parameters())
    assert first.grad is not None and bool(first.grad.abs().sum() > 0)


def test_relaxed_messages_are_differentiable_messages_of_the_right_size(name):
    task = make_task(name)
    x, _ = task.sample(32, torch.Generator().manual_seed(4))
    free = torch.randn(32, task.message_dim, generator=torch.Generator().manual_seed(5))
    free.requires_grad_(True)
    message = task.message_from_free(free, x)
    assert message.shape == (32, task.message_dim) and torch.isfinite(message).all()
    torch.manual_seed(0)
    task.make_verifier()(x, message).sum().backward()
    assert free.grad is not None and bool(free.grad.abs().sum() > 0)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_every_formulation_trains_and_the_same_seed_gives_the_same_run(name, formulation):
    task = make_task(name)
    config = tiny_config(name, formulation=formulation, seed=3)
    first, again = train(task, config), train(task, config)
    other = train(task, replace(config, seed=4))
    assert first.steps == 3 and len(first.metrics) == 3
    assert untimed(first.metrics) == untimed(again.metrics)
    for a, b in zip(
        first.verifier.state_dict().values(), again.verifier.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert untimed(first.metrics) != untimed(other.metrics)


def test_every_supported_attack_accounts_for_the_whole_batch(name):
    task = make_task(name)
    torch.manual_seed(0)
    prover, verifier = task.make_prover(), task.make_verifier()
    before = [p.clone() for p in verifier.parameters()]
    results = stress_test(task, verifier, prover, supported_attacks(task), TINY_STRESS)
    assert set(results) == set(supported_attacks(task))
    _, y = task.sample(TINY_STRESS.eval_size, torch.Generator().manual_seed(TINY_STRESS.seed))
    for result in results.values():
        assert result.tp + result.fn == int(y.sum())
        assert result.fp + result.tn == TINY_STRESS.eval_size - int(y.sum())
        assert len(result.strongest_logits) <= TINY_STRESS.keep
    assert all(torch.equal(a, b) for a, b in zip(before, verifier.parameters(), strict=True))


def test_a_checkpoint_restores_the_task_and_both_agents(name, tmp_path):
    task = make_task(name)
    result = train(task, tiny_config(name, out_dir=str(tmp_path / "run"), seed=1))
    restored = load_checkpoint(tmp_path / "run", device="cpu")
    assert restored.task.name == name and restored.task.init_args() == task.init_args()
    x, y = task.sample(32, torch.Generator().manual_seed(6))
    prover, verifier = result.prover.eval(), result.verifier.eval()
    with torch.no_grad():
        message = prover(x, y).message
        assert torch.equal(restored.prover(x, y).message, message)
        assert torch.equal(restored.verifier(x, message), verifier(x, message))
