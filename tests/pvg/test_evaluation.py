"""Each logged row runs the prover once on the evaluation batch, with the same figures.

Before, a FindThePlus row ran its prover three times on the same images: the evaluation's
most likely and sampled messages, then the pointing figures of the task's hook. The
evaluation as it was is kept here (``_evaluate_before``, the old ``stress.evaluate``
verbatim; the hook without ``message`` still runs its own prover pass), and a training run
that logs with it is compared, row by row and bit for bit, with one that logs with the
shared pass.
"""

from __future__ import annotations

import importlib
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from torch import Tensor, nn  # noqa: E402

from proofgames.pvg import TrainConfig, make_task, train  # noqa: E402
from proofgames.pvg.registry import task_defaults  # noqa: E402
from proofgames.pvg.stress import Metrics, confusion, evaluate, seeded  # noqa: E402
from proofgames.pvg.task import PVGTask  # noqa: E402
from proofgames.pvg.tasks.find_the_plus import PlusProver  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# the module (the package attribute of that name is the function)
TRAIN = importlib.import_module("proofgames.pvg.train")

TRAIN_BATCH, EVAL_BATCH = 16, 48  # distinct, to tell the evaluation's prover passes apart


class _SubclassedProver(PlusProver):
    """A prover class FindThePlus does not know (as hand-set agents may be)."""


def _evaluate_before(
    task: PVGTask, prover: nn.Module, verifier: nn.Module, x: Tensor, y: Tensor, seed: int = 0
) -> Metrics:
    """``stress.evaluate`` before the prover's pass was shared (two prover passes)."""
    was_training = prover.training, verifier.training
    verifier.eval()
    row: Metrics = {}
    with torch.no_grad(), seeded(seed, x.device):
        for prefix, mode in (("", False), ("sampled_", True)):
            prover.train(mode)
            message = prover(x, None).message
            tp, fp, fn, tn = confusion(verifier(x, message), y)
            row[f"{prefix}verifier_accuracy"] = (tp + tn) / len(y)
            if not mode:
                row.update(tp=tp, fp=fp, fn=fn, tn=tn)
                row["precision"] = tp / (tp + fp) if tp + fp else 1.0
                row["recall"] = tp / (tp + fn) if tp + fn else 0.0
            stats = task.message_metrics(x, message)
            row.update({f"{prefix}{k}": v for k, v in stats.items()})
    prover.train(was_training[0])
    verifier.train(was_training[1])
    return row


def _evaluation_before(task: PVGTask, game, eval_x: Tensor, eval_y: Tensor, seed: int) -> Metrics:
    """The logged row's figures as computed before: the hook ran the prover itself."""
    row = _evaluate_before(task, game.prover, game.verifier, eval_x, eval_y, seed)
    row.update(task.logged_metrics(game.prover, game.verifier, eval_x, eval_y))
    return row


def _run(task: PVGTask, config: TrainConfig) -> tuple[list[Metrics], list[int]]:
    """The run's rows (without their clock) and the batch sizes of every prover pass."""
    passes: list[int] = []

    def count(step: int, prover: nn.Module, verifier: nn.Module) -> None:
        if step == 0:
            prover.register_forward_hook(lambda module, args, out: passes.append(len(args[0])))

    rows = train(task, config, observe=count).metrics
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows], passes


@pytest.mark.parametrize("name", [pytest.param("find-the-plus", marks=pytest.mark.slow), "bec"])
def test_a_run_logs_the_same_figures_with_one_prover_pass_per_row(name, monkeypatch):
    task = make_task(name)
    defaults = task_defaults(name)
    config = TrainConfig(**{**defaults, "steps": 40, "pretrain_steps": 2}, batch_size=TRAIN_BATCH,
                         eval_size=EVAL_BATCH, log_every=4, progress=False, seed=5)  # fmt: skip
    rows, passes = _run(task, config)
    with monkeypatch.context() as patch:
        patch.setattr(TRAIN, "_evaluation", _evaluation_before)
        rows_before, passes_before = _run(task, config)
    assert len(rows) == 10
    assert rows == rows_before  # every figure, bit for bit
    evaluation = [n for n in passes if n != TRAIN_BATCH]
    evaluation_before = [n for n in passes_before if n != TRAIN_BATCH]
    if name == "find-the-plus":  # the pointing figures now come from the shared pass
        assert {"pointing_error_px", "on_plus", "sampled_verifier_accuracy"} <= set(rows[-1])
        assert evaluation == [EVAL_BATCH] * 10
        assert evaluation_before == [EVAL_BATCH, EVAL_BATCH, EVAL_BATCH // 2] * 10
    else:  # BEC's sampled messages are noisy: that pass stays
        assert {"erasure_fraction", "sampled_erasure_fraction"} <= set(rows[-1])
        assert evaluation == evaluation_before == [EVAL_BATCH] * 20
    assert [n for n in passes if n == TRAIN_BATCH] == [n for n in passes_before if n == TRAIN_BATCH]


def test_evaluate_takes_the_messages_it_is_given_and_restores_the_modes():
    task = make_task("find-the-plus")
    x, y = task.sample(32, torch.Generator().manual_seed(2))
    prover, verifier = task.make_prover().train(), task.make_verifier().train()
    assert task.deterministic_prover(prover)
    alone = evaluate(task, prover, verifier, x, y, seed=1)
    assert alone == _evaluate_before(task, prover, verifier, x, y, seed=1)
    given = evaluate(task, prover, verifier, x, y, seed=1, message=torch.zeros(32, 32))
    assert given != alone  # the messages given were scored, not the prover's
    assert prover.training and verifier.training
    # a prover of another class handed to training (it might draw noise): two passes
    assert not task.deterministic_prover(make_task("bec").make_prover())
    assert not task.deterministic_prover(_SubclassedProver())


@pytest.mark.slow
def test_log_every_sets_the_rows_and_leaves_the_training_alone():
    task = make_task("find-the-plus")
    config = TrainConfig(**{**task_defaults("find-the-plus"), "steps": 12, "pretrain_steps": 1},
                         batch_size=TRAIN_BATCH, eval_size=EVAL_BATCH, log_every=3,
                         progress=False)  # fmt: skip
    every_3 = train(task, config)
    every_5 = train(task, replace(config, log_every=5))
    assert [row["step"] for row in every_3.metrics] == [3, 6, 9, 12]
    assert [row["step"] for row in every_5.metrics] == [5, 10, 12]  # the last step always
    for a, b in zip(
        every_3.prover.state_dict().values(), every_5.prover.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    assert every_3.metrics[-1] == {**every_5.metrics[-1], "seconds": every_3.metrics[-1]["seconds"]}
