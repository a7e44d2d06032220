"""Step judges: the oracle that stands for human judgement, and every judge that plays it.

Every judge implements :class:`StepJudge` (:mod:`.interface`): an ``async`` method that
takes a :class:`StepQuestion` -- exactly what a judge may see of one step: the task part
it uses, the earlier steps it relies on, the step -- and returns a :class:`Judgement`
(P[yes] and what the answer cost). A judge that cannot answer raises
:class:`JudgeFailed`: no verdict, no party forfeits, and the debate stops.

==========================  ==============================================================
module                      judges
==========================  ==============================================================
:mod:`.calculator`          :class:`CalculatorJudge` (exact on annotations; grounded)
:mod:`.scripted`            :class:`ScriptedJudge` (error rate e, seeded),
                            :class:`CallbackJudge` (an ``async`` function)
:mod:`.model`               ``ModelJudge``: any Inspect model (the ``language`` extra)
:mod:`.human`               ``HumanJudge``: people, through the judge server's API
:mod:`.specs`               :func:`make_judge` by name, :func:`default_judge`
:mod:`.text`                tokens and numbers as judges read them
==========================  ==============================================================

``ModelJudge`` and ``HumanJudge`` load on first use (they need extras).

Example:
    >>> import asyncio
    >>> from proofgames.judges import StepQuestion, make_judge
    >>> q = StepQuestion(task="", premises=(), step="So 7 * 5 = <<7*5=36>>36.")
    >>> asyncio.run(make_judge("calculator", seed=0).judge(q)).verdict
    False
"""

from __future__ import annotations

import importlib
from typing import Any

from .calculator import CalculatorJudge, annotation_holds, annotation_problem, evaluate
from .interface import (
    DEFAULT_PROMPT,
    MAX_TEXT_CHARS,
    JudgeFailed,
    JudgeKind,
    Judgement,
    StepJudge,
    StepQuestion,
)
from .scripted import CallbackJudge, ScriptedJudge
from .specs import DEFAULT_JUDGES, default_judge, make_judge

_LAZY = {"ModelJudge": ".model", "ModelJudgeConfig": ".model", "HumanJudge": ".human"}

__all__ = [
    "DEFAULT_JUDGES", "DEFAULT_PROMPT", "MAX_TEXT_CHARS", "CalculatorJudge", "CallbackJudge",
    "HumanJudge", "JudgeFailed", "JudgeKind", "Judgement", "ModelJudge", "ModelJudgeConfig",
    "ScriptedJudge", "StepJudge", "StepQuestion", "annotation_holds", "annotation_problem",
    "default_judge", "evaluate", "make_judge",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    """``ModelJudge`` and ``HumanJudge``, imported on first use (they need extras)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
