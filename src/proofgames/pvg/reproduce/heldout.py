"""Held-out figures of a long run's checkpoints at Table 3's standard, as a report.

A long FindThePlus run (``reports/pvg-long-40k``) is measured every 2,000 game steps
on fresh images, at the standard of the paper's Table 3: ``proofgames pvg stress
SNAPSHOT --attack all --seed 10003 --batch-size 256 --json`` (2,000 images, 1,000 of
each label; the continued prover, L-BFGS on the messages and the exhaustive search).
Those outputs are kept, with the step of the agents they measured, in the folder's
``heldout.json``::

    {"evaluation": {"command": "...", "seed": 10003},
     "runs": {"find-the-plus-pvg-s3": [
         {"step": 37000, "agents": "kept", "stress": {...pvg stress --json...}}, ...]}}

``agents`` is ``current`` (the run's agents at that step, from a ``state.pt``) or
``kept`` (the run's ``agents.pt``: the checkpoint the paper's selection rule keeps,
best by accuracy against the messages attack in training). :func:`write_report`
turns the file into ``report.md``: one table a run, every rate with its 95 %
Clopper--Pearson interval computed here from the saved counts (measured figures; the
exhaustive search's specificity is exact on its batch of label-0 images).

Example:
    >>> entry = {"step": 2000, "agents": "current", "stress": {"attacks": {
    ...     name: {"tp": 1000, "fp": 0, "fn": 0, "tn": 1000}
    ...     for name in ("prover", "messages", "exhaustive")}}}
    >>> heldout_row(entry)
    '| 2,000 | 1.000 [0.996, 1.000] / 1.000 | 1.000 [0.996, 1.000] / 1.000 | 1.000 [0.996, 1.000] |'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...analysis.intervals import confusion_intervals
from ...errors import PVGError
from ...reporting import write_atomic

HELDOUT_FILE = "heldout.json"
REPORT_FILE = "report.md"
FIGURE_FILE = "curves.png"
ATTACKS = ("prover", "messages", "exhaustive")
"""The attacks of a row, in the table's order: the paper's two, then the exact search."""


def _count(cell: dict[str, Any], key: str, where: str) -> int:
    value = cell.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PVGError(f"{where}: {key} must be a non-negative integer count, got {value!r}")
    return value


def _cell(entry: dict[str, Any], attack: str) -> str:
    where = f"{HELDOUT_FILE}, step {entry.get('step')!r}, attack {attack!r}"
    attacks = entry.get("stress", {}).get("attacks", {})
    cell = attacks.get(attack) if isinstance(attacks, dict) else None
    if not isinstance(cell, dict):
        raise PVGError(f"{where}: no counts for this attack")
    tp, fp, fn, tn = (_count(cell, key, where) for key in ("tp", "fp", "fn", "tn"))
    bounds = confusion_intervals(tp, fp, fn, tn)
    rate = "specificity" if attack == "exhaustive" else "precision"
    pair = bounds[rate]
    if pair is None:
        raise PVGError(f"{where}: no instances to estimate its {rate} from")
    value = tn / (tn + fp) if rate == "specificity" else tp / (tp + fp)
    shown = f"{value:.3f} [{pair[0]:.3f}, {pair[1]:.3f}]"
    if rate == "precision":
        shown += f" / {tp / (tp + fn):.3f}" if tp + fn else " / -"
    return shown


def heldout_row(entry: dict[str, Any]) -> str:
    """One checkpoint's markdown row: the step, then each attack's rate with its interval.

    Precision [95 % CI] / recall against the continued prover and the messages attack;
    specificity [95 % CI] under exhaustive search.

    Raises:
        PVGError: the entry has no step, or an attack's counts are missing or not counts.
    """
    step = entry.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise PVGError(f"{HELDOUT_FILE}: an entry's step must be a non-negative integer")
    label = f"{step:,}"
    if entry.get("agents") == "kept":
        label += " (kept: best by messages in training)"
    return f"| {label} | " + " | ".join(_cell(entry, a) for a in ATTACKS) + " |"


def read_heldout(folder: Path) -> dict[str, Any]:
    """The folder's ``heldout.json``, checked for shape.

    Raises:
        PVGError: missing, unreadable, or not ``{"runs": {name: [entry, ...]}}``.
    """
    path = folder / HELDOUT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PVGError(f"{path} does not exist: nothing to report") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PVGError(f"{path} is not readable JSON: {exc}") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict) or not all(isinstance(v, list) for v in runs.values()):
        raise PVGError(f'{path} must hold {{"runs": {{run name: [entries]}}}}')
    checked: dict[str, Any] = data
    return checked


def _table(name: str, entries: list[dict[str, Any]]) -> list[str]:
    ordered = sorted(entries, key=lambda e: (e.get("step", 0), e.get("agents") == "kept"))
    return [
        f"### {name}",
        "",
        "| agents at step | continued prover: precision [95% CI] / recall "
        "| messages: precision [95% CI] / recall | exhaustive search: specificity [95% CI] |",
        "|---|---|---|---|",
        *(heldout_row(entry) for entry in ordered),
        "",
    ]


def report_text(data: dict[str, Any], last_rows: dict[str, dict[str, Any]]) -> str:
    """``report.md``'s text from ``heldout.json``'s data and each run's last training row."""
    evaluation = data.get("evaluation", {})
    lines = [
        "# FindThePlus past 20,000 steps: held-out checks",
        "",
        "Generated by `proofgames pvg heldout` from `heldout.json` (the saved outputs of "
        f"`{evaluation.get('command', 'proofgames pvg stress')}` on each checkpoint) and "
        "the runs' `metrics.jsonl`. Every figure is measured on 2,000 fresh images (1,000 "
        "of each label), not the images training used; 95 % Clopper-Pearson intervals "
        "from the saved counts. The exhaustive search tries every message the verifier can "
        "be shown, so its specificity is exact on that batch of label-0 images.",
        "",
        f"![learning curves]({FIGURE_FILE})",
        "",
        "## Held-out figures every 2,000 steps",
        "",
    ]
    for name in sorted(data["runs"]):
        lines += _table(name, data["runs"][name])
    lines += ["## The last training check of each run", ""]
    lines += ["| run | step | messages precision | exhaustive specificity | seconds |"]
    lines += ["|---|---|---|---|---|"]
    for name, row in sorted(last_rows.items()):
        cells = [row.get("messages_precision"), row.get("exhaustive_specificity")]
        shown = ["-" if c is None else f"{c:.3f}" for c in cells]
        lines.append(
            f"| {name} | {row.get('step', 0):,} | {shown[0]} | {shown[1]} "
            f"| {row.get('seconds', 0):,.0f} |"
        )
    lines += [
        "",
        "The training checks (every 500 steps, 1,000 images of the run's own stream) are "
        "what the run logs; the held-out tables above are the figures to quote.",
        "",
    ]
    return "\n".join(lines)


def write_report(folder: Path, last_rows: dict[str, dict[str, Any]]) -> Path:
    """Write ``folder/report.md`` from its ``heldout.json`` (atomically); its path.

    Raises:
        PVGError: ``heldout.json`` is missing or malformed (nothing is written then).
    """
    text = report_text(read_heldout(folder), last_rows)
    return write_atomic(folder / REPORT_FILE, text)
