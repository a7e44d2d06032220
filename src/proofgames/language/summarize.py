"""The comparison table from any set of Inspect logs (``proofgames language summarize``).

Every ``.eval`` log under a folder that ran :func:`~.inspect_tasks.gsm8k_debate` or
:func:`~.inspect_tasks.generated_debate` gives one row per sample: its protocol and judge
(from the task's arguments; the ``model`` judge is named by the model in its role), the
truth and V's verdict (from the verdict scorer's metadata), and the debate's costs. A
sample that errored (its debate could not finish) is a stopped row, counted and in no
rate. The rows then go through :func:`~.compare.cells` and :func:`~.compare.table`:
the same table, intervals and costs as ``proofgames language compare``.

Example:
    >>> rows_from_logs("no/such/folder")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.errors.ProtocolError: no Inspect log (.eval or .json) under 'no/such/folder'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ProtocolError
from ..judges import default_judge
from .experiments import Row

__all__ = ["rows_from_logs"]

TASKS = ("gsm8k_debate", "generated_debate")
"""The proofgames tasks whose logs are read (a log of another task is refused)."""


def _judge(log: Any) -> str:
    """The judge spec of a log's task, with the ``model`` judge named by its model."""
    args = log.eval.task_args or {}
    judge = args.get("judge") or default_judge(args.get("protocol", "cross-examination"))
    if judge == "model":
        roles = log.eval.model_roles or {}
        role = roles.get("judge")
        judge = f"model:{getattr(role, 'model', role) or '?'}"
    return str(judge)


def _row(protocol: str, judge: str, sample: Any) -> Row:
    """One sample's row (the shape of :func:`~.experiments.generated_games`' rows)."""
    outcome = (sample.metadata or {}).get("outcome") or {}
    score = (sample.scores or {}).get("verdict_scorer")
    meta = (score.metadata if score is not None else None) or {}
    costs = outcome.get("costs") or {}
    accepted = None if sample.error else outcome.get("accepted")
    truth = bool(meta.get("truth", sample.target == "accept"))
    return {
        "protocol": protocol, "judge": judge, "sample": sample.id, "truth": truth,
        "accepted": accepted, "correct": accepted is truth,
        "judge_calls": int(costs.get("judge_calls", 0)),
        "judge_input_tokens": int(costs.get("judge_input_tokens", 0)),
        "prover_tokens": int(costs.get("prover_input_tokens", 0))
        + int(costs.get("prover_output_tokens", 0)),
        "cost_usd": costs.get("cost_usd"),
        "reason": str(sample.error.message if sample.error else outcome.get("reason", "")),
        "stopped": "error" if sample.error else outcome.get("stopped"),
    }  # fmt: skip


def rows_from_logs(folder: str | Path) -> list[Row]:
    """Every sample of every proofgames log under ``folder``, as comparison rows.

    Raises:
        ProtocolError: no log under ``folder``, a log that cannot be read, or a log of
            a task that is not a proofgames debate.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ProtocolError(f"no Inspect log (.eval or .json) under {str(folder)!r}")
    from inspect_ai.log import list_eval_logs, read_eval_log  # the 'language' extra

    infos = list_eval_logs(str(root), recursive=True)
    if not infos:
        raise ProtocolError(f"no Inspect log (.eval or .json) under {str(folder)!r}")
    rows: list[Row] = []
    for info in infos:
        try:
            log = read_eval_log(info)
        except Exception as exc:  # a damaged file: name it, never a traceback
            raise ProtocolError(f"cannot read the Inspect log {info.name}: {exc}") from None
        task = log.eval.task.rsplit("/", 1)[-1]
        if task not in TASKS:
            raise ProtocolError(f"{info.name} is a log of {task!r}, not of {' or '.join(TASKS)}")
        protocol = str((log.eval.task_args or {}).get("protocol", "cross-examination"))
        judge = _judge(log)
        rows += [_row(protocol, judge, s) for s in log.samples or []]
    return rows
