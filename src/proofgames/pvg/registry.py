"""Prover-Verifier Game tasks by name, with the training settings the paper used for each.

``"bec"`` is the Binary Erasure Channel; ``"find-the-plus"`` is imported on first use from
:mod:`proofgames.pvg.find_the_plus`; ``"find-the-needle"`` (:mod:`proofgames.pvg.needle`,
not in the paper) is the smallest witness task and the template for new ones.

Example:
    >>> make_task("bec").message_dim
    16
    >>> task_names()
    ['bec', 'find-the-plus', 'find-the-needle']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import RegistryError
from .._registry import NameRegistry
from .task import PVGTask


@dataclass(frozen=True)
class TaskEntry:
    """How to build a task, and its paper training settings.

    Attributes:
        factory: builds the task from keyword arguments.
        defaults: :class:`~proofgames.pvg.train.TrainConfig` fields the paper set for the
            task (applied by the CLI unless overridden).
    """

    factory: Callable[..., PVGTask]
    defaults: dict[str, Any] = field(default_factory=dict)


TASKS: NameRegistry[TaskEntry] = NameRegistry("PVG task")


def _bec(**kwargs: Any) -> PVGTask:
    from .bec import BinaryErasureChannel

    return BinaryErasureChannel(**kwargs)


def _find_the_plus(**kwargs: Any) -> PVGTask:
    try:
        module = importlib.import_module(".find_the_plus", __package__)
    except ImportError as exc:
        raise RegistryError(f"PVG task 'find-the-plus' is not available: {exc}") from None
    task: PVGTask = module.FindThePlus(**kwargs)
    return task


def register_task(
    name: str, factory: Callable[..., PVGTask], defaults: dict[str, Any] | None = None
) -> None:
    """Register a task factory under ``name`` with its default training settings."""
    TASKS.add(name, TaskEntry(factory, dict(defaults or {})))


def make_task(name: str, **kwargs: Any) -> PVGTask:
    """Build the task registered as ``name``."""
    return TASKS.get(name).factory(**kwargs)


def parse_task_args(name: str, pairs: Sequence[str]) -> dict[str, Any]:
    """Task arguments from ``KEY=VALUE`` strings (the CLI's ``--task-arg``).

    Each value is converted to the type of that argument's default (``bool`` accepts
    ``true``/``false``/``1``/``0``).

    Example:
        >>> parse_task_args("find-the-plus", ["pool=0", "bounded_shifts=true"])
        {'pool': 0, 'bounded_shifts': True}

    Raises:
        ValueError: a pair without ``=``, an unknown argument, or a value of the wrong type.
    """
    defaults = make_task(name).init_args()
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ValueError(f"task argument {pair!r} is not KEY=VALUE")
        if key not in defaults:
            known = ", ".join(sorted(defaults)) or "none"
            raise ValueError(f"{name} has no argument {key!r} (it has: {known})")
        out[key] = _convert(key, text.strip(), defaults[key])
    return out


def _convert(key: str, text: str, default: Any) -> Any:
    if isinstance(default, bool):
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"task argument {key} must be true or false, got {text!r}")
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise ValueError(
                    f"task argument {key} must be {kind.__name__}, got {text!r}"
                ) from None
    return text


def task_defaults(name: str) -> dict[str, Any]:
    """The paper's training settings for ``name`` (a fresh copy)."""
    return dict(TASKS.get(name).defaults)


def task_names() -> list[str]:
    """Registered task names, in registration order."""
    return [name for name, _ in TASKS.items()]


# Appendix E.1: 5 verifier steps per prover step, entropy regularization (label smoothing).
register_task("bec", _bec, {"steps": 1000, "verifier_steps": 5, "label_smoothing": 0.05})
# Appendix E.2: 1 verifier step, adaptive prover steps (> 75% for 20 game steps, up to
# 15), 100 steps of prover pretraining, label smoothing 0.05.
register_task(
    "find-the-plus",
    _find_the_plus,
    {
        "steps": 2000,
        "verifier_steps": 1,
        "prover_steps": 1,
        "adaptive_threshold": 0.75,
        "adaptive_window": 20,
        "max_prover_steps": 15,
        "pretrain_steps": 100,
        "label_smoothing": 0.05,
    },
)


def _find_the_needle(**kwargs: Any) -> PVGTask:
    from .needle import FindTheNeedle

    return FindTheNeedle(**kwargs)


# Not in the paper (see proofgames.pvg.needle): BEC's settings, whose agents it shares.
register_task(
    "find-the-needle",
    _find_the_needle,
    {"steps": 1000, "verifier_steps": 5, "label_smoothing": 0.05},
)
