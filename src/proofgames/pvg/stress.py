"""Stress tests of a frozen verifier (Anil et al. 2021, Section 5.2 and Appendix E.1).

Training accuracy says little about a verifier: it may have learned to read the training
prover's *tell* instead of checking the proof.  A stress test freezes the verifier and
hands a far stronger adversary the prover's job -- argue for label 1 on every instance:

* ``"prover"``: a prover trained against the frozen verifier (Adam, lr 3e-4, 500 steps,
  loss ``-log p_v(1 | message)`` on instances of both labels), then asked for its most
  likely message on a held-out evaluation batch. By default (``prover_attack=
  "continued"``, the paper's: "freeze the verifier and continue to train the prover") it
  starts from a copy of the trained prover; ``"fresh"`` starts from a new prover;
* ``"messages"``: the messages themselves optimized per instance with L-BFGS (lr 1,
  history 300, strong-Wolfe line search, at most 300 iterations, stopping when the change
  of the iterates falls below 1e-9 or the gradient below 1e-5) over the unconstrained
  parameters of :meth:`~proofgames.pvg.task.PVGTask.message_from_free`, started from the
  trained prover's messages (if one is given) and from seeded random points; per instance
  the most convincing message over all starts is kept;
* ``"exhaustive"`` (beyond the paper; tasks with :class:`ExhaustiveMessages`, such as
  FindThePlus and FindTheNeedle): the most convincing message the prover can send, for
  each instance, found exactly by searching every place the verifier can be made to look
  (for FindThePlus, :mod:`proofgames.pvg.find_the_plus.message_search`). No prover can beat it, so a
  verifier that rejects every label-0 instance against it is sound on those instances,
  certifiably.

Either way the adversary tries to get every instance accepted.  On a label-0 instance its
message is an attempted fooling (the soundness side); on a label-1 instance it is the best
proof it can find (the completeness side).  With *accepted* meaning a verifier logit above
0 (P[label 1] > 1/2), the counts are ``TP`` = label 1 accepted, ``FN`` = label 1 rejected,
``FP`` = label 0 accepted and ``TN`` = label 0 rejected, and

* recall = TP / (TP + FN): the share of true instances the verifier can be convinced of;
* precision = TP / (TP + FP): the share of accepted instances that are truly positive
  (1.0 by convention when nothing is accepted; recall then shows the failure).

* specificity = TN / (TN + FP): the share of false instances the verifier rejects.

A complete and sound verifier has precision = recall = 1 against both attacks.  Note on
the paper's tables: they define precision as above but label the same column
"specificity" in their captions, and report 0.0 for the collaborative baseline, which has
recall 1.0.  With recall 1 and balanced labels precision cannot fall below about 1/2 (a
verifier that accepts everything scores the share of positives), so the paper's 0.0 is a
specificity; a fully fooled verifier here shows precision ~0.5 and specificity 0.

:func:`evaluate` computes the same counts for the *trained* prover (no attack), as logged
during training.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import PVGError
from ._memory import DEFAULT_MAX_MEMORY_GB, check_memory, lbfgs_bytes
from ._stress_settings import PROVER_ATTACKS as PROVER_ATTACKS
from ._stress_settings import AttackResult as AttackResult
from ._stress_settings import StressConfig as StressConfig
from ._stress_settings import at_least_zero as at_least_zero
from ._stress_settings import positive as positive
from .task import ExhaustiveMessages as ExhaustiveMessages
from .task import MessageMetrics as MessageMetrics
from .task import ProverOutput, PVGTask

#: The paper's two attacks (the default everywhere).
ATTACKS = ("prover", "messages")
#: Every attack: the paper's two and the exact search (for tasks that support it).
ALL_ATTACKS = (*ATTACKS, "exhaustive")
STRESS_FIGURES = tuple(
    f"{attack}_{figure}"
    for attack in ALL_ATTACKS
    for figure in ("precision", "recall", "accuracy", "specificity")
)
"""The figures a stress test logs in a metrics row, per attack (``messages_precision``)."""


def last_stress(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last stress test logged in ``rows``: its step and each attack's figures.

    Example:
        >>> last_stress([{"step": 5, "messages_recall": 1.0}, {"step": 6, "precision": 1.0}])
        {'step': 5, 'messages_recall': 1.0}
        >>> last_stress([{"step": 6, "precision": 1.0}]) is None
        True
    """
    for row in reversed(rows):
        tested = {k: v for k, v in row.items() if k in STRESS_FIGURES}
        if tested:
            return {"step": row["step"], **tested}
    return None


Metrics = dict[str, float]


def stress_test(
    task: PVGTask,
    verifier: nn.Module,
    prover: nn.Module | None = None,
    attacks: Sequence[str] = ATTACKS,
    config: StressConfig | None = None,
    max_memory_gb: float = DEFAULT_MAX_MEMORY_GB,
) -> dict[str, AttackResult]:
    """Run the named attacks on a frozen copy of ``verifier``.

    Args:
        task: the task the verifier was trained on.
        verifier: the verifier to test (not modified).
        prover: the trained prover, whose messages start the message attack (optional).
        attacks: any of :data:`ALL_ATTACKS` (``"exhaustive"`` needs a task with
            :class:`ExhaustiveMessages`).
        config: attack settings; paper defaults if omitted.
        max_memory_gb: refuse attacks whose batches are estimated to need more memory
            (GB; see :func:`check_stress_memory`).

    Returns:
        One :class:`AttackResult` per attack, by name.

    Raises:
        PVGError: invalid settings, an attack ``task`` does not support, the continued
            prover attack without ``prover``, or batches over the memory limit; nothing
            has run then.

    The global torch RNG is seeded inside and restored afterwards, so a stress test run
    in the middle of training does not change the rest of that training run.
    """
    config = config or StressConfig()
    config.validate()
    check_attacks(task, attacks)
    if "prover" in attacks and config.prover_attack == "continued" and prover is None:
        raise PVGError(
            "the continued prover attack trains a copy of the trained prover, and none was "
            "given; pass the prover, or use prover_attack='fresh'"
        )
    check_stress_memory(task, attacks, config, max_memory_gb)
    device = next(verifier.parameters()).device
    frozen = copy.deepcopy(verifier).eval().requires_grad_(False)
    results: dict[str, AttackResult] = {}
    with seeded(config.seed, device):
        eval_gen = torch.Generator().manual_seed(config.seed)
        x, y = (t.to(device) for t in task.sample(config.eval_size, eval_gen))
        if "prover" in attacks:
            results["prover"] = attack_with_prover(task, frozen, x, y, config, prover)
        if "messages" in attacks:
            results["messages"] = attack_messages(task, frozen, x, y, config, prover)
        if "exhaustive" in attacks:
            assert isinstance(task, ExhaustiveMessages)
            messages = task.best_messages(frozen, x)
            results["exhaustive"] = _score("exhaustive", frozen, x, y, messages, config.keep)
    return results


def supported_attacks(task: PVGTask) -> tuple[str, ...]:
    """The attacks of :data:`ALL_ATTACKS` that ``task`` supports."""
    return ALL_ATTACKS if isinstance(task, ExhaustiveMessages) else ATTACKS


def check_stress_memory(
    task: PVGTask,
    attacks: Sequence[str],
    config: StressConfig,
    max_memory_gb: float,
    prefix: str = "",
) -> None:
    """Refuse attacks whose largest batch is estimated to exceed ``max_memory_gb``.

    The prover attack trains on ``batch_size`` instances at a time; every attack scores
    ``eval_size`` instances at once, and L-BFGS optimizes all their messages together,
    keeping ``lbfgs_history`` past steps of each. ``prefix`` names the settings in the
    message (``"stress."`` in training; none: ``pvg stress``'s options).
    """
    history = lbfgs_bytes(task.message_dim, config.lbfgs_history) if "messages" in attacks else 0
    option = {"eval_size": " (--eval-size)", "batch_size": " (--batch-size)"}
    if prefix:
        option = {"eval_size": "", "batch_size": ""}
    needs = [(f"{prefix}eval_size{option['eval_size']}", config.eval_size, history)]
    if "prover" in attacks:
        needs.append((f"{prefix}batch_size{option['batch_size']}", config.batch_size, 0.0))
    check_memory(task, needs, max_memory_gb)


def check_attacks(task: PVGTask, attacks: Sequence[str]) -> None:
    """Refuse ``attacks`` that are unknown or that ``task`` does not support.

    Raises:
        PVGError: naming the attack.
    """
    unknown = [a for a in attacks if a not in ALL_ATTACKS]
    if unknown:
        raise PVGError(f"unknown attack(s) {unknown}; choose from {list(ALL_ATTACKS)}")
    if "exhaustive" in attacks and not isinstance(task, ExhaustiveMessages):
        raise PVGError(
            f"the exhaustive attack needs a task that can search every message "
            f"(find-the-plus, find-the-needle); {task.name!r} cannot"
        )
    if "exhaustive" in attacks:
        task.check_exhaustive()  # e.g. FindThePlus: a glimpse geometry the search covers


def attack_with_prover(
    task: PVGTask,
    frozen: nn.Module,
    x: Tensor,
    y: Tensor,
    config: StressConfig,
    trained: nn.Module | None = None,
) -> AttackResult:
    """Train a prover against ``frozen`` and score its most likely messages on ``x``.

    The prover is a copy of ``trained`` (``config.prover_attack="continued"``; ``trained``
    itself is not changed) or a fresh one (``"fresh"``).
    """
    device = x.device
    prover = attacking_prover(task, config.prover_attack, trained).to(device).train()
    optimizer = torch.optim.Adam(prover.parameters(), lr=config.prover_lr)
    train_gen = torch.Generator().manual_seed(config.seed + 1)
    for _ in range(config.prover_steps):
        bx, _ = task.sample(config.batch_size, train_gen)
        bx = bx.to(device)
        out: ProverOutput = prover(bx, None)
        loss = F.softplus(-frozen(bx, out.message)).mean()  # -log p_v(1 | message)
        optimizer.zero_grad()
        torch.autograd.backward(loss)
        optimizer.step()
    prover.eval()
    with torch.no_grad():
        messages = prover(x, None).message
    return _score("prover", frozen, x, y, messages, config.keep)


def attacking_prover(task: PVGTask, start: str, trained: nn.Module | None) -> nn.Module:
    """The prover attack's starting point: a copy of ``trained`` or a fresh prover.

    Raises:
        PVGError: ``start`` is not one of :data:`PROVER_ATTACKS`, or is ``"continued"``
            without ``trained``.
    """
    if start not in PROVER_ATTACKS:
        raise PVGError(f"prover_attack {start!r} not in {PROVER_ATTACKS}")
    if start == "fresh":
        return task.make_prover()
    if trained is None:
        raise PVGError("the continued prover attack needs the trained prover")
    return copy.deepcopy(trained).requires_grad_(True)


def attack_messages(
    task: PVGTask,
    frozen: nn.Module,
    x: Tensor,
    y: Tensor,
    config: StressConfig,
    prover: nn.Module | None = None,
) -> AttackResult:
    """Optimize each instance's message with L-BFGS to maximize acceptance by ``frozen``."""
    starts: list[Tensor] = []
    if prover is not None:
        was_training = prover.training
        prover.eval()
        with torch.no_grad():
            starts.append(prover(x, None).message.detach().clone())
        prover.train(was_training)
    start_gen = torch.Generator().manual_seed(config.seed + 2)
    for _ in range(config.random_starts):
        starts.append(torch.randn(len(x), task.message_dim, generator=start_gen).to(x.device))
    if not starts:
        starts.append(torch.zeros(len(x), task.message_dim, device=x.device))

    best_logits = torch.full((len(x),), -math.inf, device=x.device)
    best_messages = torch.zeros(len(x), task.message_dim, device=x.device)
    for start in starts:
        free = start.clone().requires_grad_(True)
        optimizer = torch.optim.LBFGS(
            [free],
            lr=config.lbfgs_lr,
            max_iter=config.lbfgs_max_iter,
            history_size=config.lbfgs_history,
            tolerance_change=config.tolerance_change,
            tolerance_grad=config.tolerance_grad,
            line_search_fn="strong_wolfe",
        )

        def closure(free: Tensor = free, optimizer: torch.optim.LBFGS = optimizer) -> Tensor:
            optimizer.zero_grad()
            logits = frozen(x, task.message_from_free(free, x))
            loss = F.softplus(-logits).sum()
            torch.autograd.backward(loss)
            return loss

        optimizer.step(closure)  # type: ignore[no-untyped-call]
        with torch.no_grad():
            messages = task.message_from_free(free, x)
            logits = frozen(x, messages)
            better = logits > best_logits
            best_logits = torch.where(better, logits, best_logits)
            best_messages[better] = messages[better]
    return _score("messages", frozen, x, y, best_messages, config.keep)


def evaluate(
    task: PVGTask,
    prover: nn.Module,
    verifier: nn.Module,
    x: Tensor,
    y: Tensor,
    seed: int = 0,
    message: Tensor | None = None,
) -> Metrics:
    """Verifier accuracy, precision, recall and counts on ``(x, y)``.

    The prover sends its most likely messages (evaluation mode); ``sampled_*`` entries use
    its sampled messages (training mode, Gumbel noise from ``seed``; the global RNG is
    restored afterwards).  The task's
    :meth:`~proofgames.pvg.task.PVGTask.message_metrics` add their statistics.

    Args:
        task: the task.
        prover: the prover (its training mode is restored afterwards).
        verifier: the verifier (likewise).
        x: the instances.
        y: their labels.
        seed: seeds the sampled messages' noise.
        message: the prover's most likely messages on ``x``, if the caller has them
            (:func:`greedy_messages` with the same ``seed``); they are not computed again.

    Where the task says its prover's sampled messages are its most likely ones
    (:meth:`~proofgames.pvg.task.PVGTask.deterministic_prover`, FindThePlus), the
    ``sampled_*`` figures reuse the first pass instead of running the prover again: the
    same figures, one prover pass.
    """
    was_training = prover.training, verifier.training
    verifier.eval()
    row: Metrics = {}
    if message is None:
        message = greedy_messages(prover, x, seed)
    reuse = task.deterministic_prover(prover)
    with torch.no_grad(), seeded(seed, x.device):
        logits = verifier(x, message)
        for prefix, mode in (("", False), ("sampled_", True)):
            if mode and not reuse:
                prover.train(mode)
                message = prover(x, None).message
                logits = verifier(x, message)
            tp, fp, fn, tn = confusion(logits, y)
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


def greedy_messages(prover: nn.Module, x: Tensor, seed: int = 0) -> Tensor:
    """The prover's most likely messages on ``x`` (evaluation mode, no gradient).

    Computed as :func:`evaluate` computes them: under the global RNG seeded with ``seed``
    and restored afterwards; the prover's training mode is restored too.
    """
    was_training = prover.training
    prover.eval()
    with torch.no_grad(), seeded(seed, x.device):
        message: Tensor = prover(x, None).message
    prover.train(was_training)
    return message


def confusion(logits: Tensor, labels: Tensor) -> tuple[int, int, int, int]:
    """``(tp, fp, fn, tn)`` of the decisions ``logit > 0`` against 0/1 ``labels``."""
    accepted = logits > 0
    positive = labels > 0.5
    return (
        int((accepted & positive).sum()),
        int((accepted & ~positive).sum()),
        int((~accepted & positive).sum()),
        int((~accepted & ~positive).sum()),
    )


def _score(
    attack: str, frozen: nn.Module, x: Tensor, y: Tensor, messages: Tensor, keep: int
) -> AttackResult:
    with torch.no_grad():
        logits = frozen(x, messages)
    tp, fp, fn, tn = confusion(logits, y)
    negatives = torch.nonzero(y < 0.5).flatten()
    order = torch.argsort(logits[negatives], descending=True)[:keep]
    chosen = negatives[order]
    return AttackResult(
        attack=attack,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        strongest_messages=messages[chosen].detach().cpu(),
        strongest_logits=logits[chosen].detach().cpu(),
        strongest_inputs=x[chosen].detach().cpu(),
    )


@contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """Seed the global torch RNG (used by Gumbel noise and weight init), then restore it."""
    devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
