"""Prover-Verifier Game tasks by name, with the training settings the paper used for each.

``"bec"`` is the Binary Erasure Channel (:mod:`proofgames.pvg.tasks.bec`),
``"find-the-plus"`` the visual search (:mod:`proofgames.pvg.tasks.find_the_plus`);
``"find-the-needle"`` (:mod:`proofgames.pvg.tasks.needle`, not in the paper) is the
smallest witness task and the template for new ones.  Tasks are built from specs such as
``"find-the-plus:size=8"``, whose values are converted by the annotations of the task's
constructor (:class:`~proofgames._registry.SpecRegistry`).

Example:
    >>> make_task("bec").message_dim
    16
    >>> make_task("bec:tokens=5").message_dim
    5
    >>> task_names()
    ['bec', 'find-the-plus', 'find-the-needle']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._registry import SpecRegistry, parse_pairs
from .task import PVGTask
from .tasks.bec import BinaryErasureChannel
from .tasks.find_the_plus import FindThePlus
from .tasks.needle import FindTheNeedle

#: The task factories; a factory's parameters are what a spec or ``--task-arg`` can set.
TASKS: SpecRegistry[PVGTask] = SpecRegistry("PVG task")
_DEFAULTS: dict[str, dict[str, Any]] = {}


def register_task(
    name: str, factory: Callable[..., PVGTask], defaults: dict[str, Any] | None = None
) -> None:
    """Register a task factory under ``name`` with its default training settings.

    Args:
        name: the registry name.
        factory: builds the task from keyword arguments, each annotated ``int``,
            ``float``, ``bool``, ``str`` or ``X | None`` (a dataclass task's class will do).
        defaults: :class:`~proofgames.pvg.config.TrainConfig` fields the paper set for
            the task (applied by the CLI unless overridden).
    """
    TASKS.add(name, factory)
    _DEFAULTS[name] = dict(defaults or {})


def make_task(name: str, **kwargs: Any) -> PVGTask:
    """Build the task registered as ``name``, which may carry arguments: ``name:key=value,...``.

    Keyword arguments (typed, given in code) win over the values in ``name``.

    Raises:
        RegistryError: an unknown task.
        SpecError: a malformed spec, or an argument the task does not take or whose value
            does not convert exactly.
    """
    task, _ = TASKS.make(name, **kwargs)
    return task


def parse_task_args(name: str, pairs: Sequence[str]) -> dict[str, Any]:
    """Task arguments from ``KEY=VALUE`` strings (the CLI's ``--task-arg``).

    Each value is converted to the annotated type of that argument (``bool`` accepts
    ``true``/``false``/``yes``/``no``/``1``/``0``).

    Example:
        >>> parse_task_args("find-the-plus", ["pool=0", "bounded_shifts=true"])
        {'pool': 0, 'bounded_shifts': True}

    Raises:
        SpecError: (a ``ValueError``) a pair without ``=``, an unknown argument, or a
            value that is not exactly of the argument's type.
    """
    return TASKS.convert(name, parse_pairs(pairs, f"(a {name} task argument)"))


def task_defaults(name: str) -> dict[str, Any]:
    """The paper's training settings for ``name`` (a fresh copy)."""
    TASKS.get(name)
    return dict(_DEFAULTS[name])


def task_names() -> list[str]:
    """Registered task names, in registration order."""
    return [name for name, _ in TASKS.items()]


# Appendix E.1: 5 verifier steps per prover step, entropy regularization (label smoothing).
register_task(
    "bec", BinaryErasureChannel, {"steps": 1000, "verifier_steps": 5, "label_smoothing": 0.05}
)
# Appendix E.2: 1 verifier step, adaptive prover steps (> 75% for 20 game steps, up to
# 15), 100 steps of prover pretraining, label smoothing 0.05; Section 5.1: alternating
# updates.
register_task(
    "find-the-plus",
    FindThePlus,
    {
        "steps": 2000,
        "update": "alternating",
        "verifier_steps": 1,
        "prover_steps": 1,
        "adaptive_threshold": 0.75,
        "adaptive_window": 20,
        "max_prover_steps": 15,
        "pretrain_steps": 100,
        "label_smoothing": 0.05,
    },
)
# Not in the paper (see proofgames.pvg.tasks.needle): BEC's settings, whose agents it shares.
register_task(
    "find-the-needle",
    FindTheNeedle,
    {"steps": 1000, "verifier_steps": 5, "label_smoothing": 0.05},
)
