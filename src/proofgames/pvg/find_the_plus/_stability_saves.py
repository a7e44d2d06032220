"""Where the stability experiment's runs save their training states, and what they keep.

Private: :mod:`proofgames.pvg.find_the_plus.stability` re-exports :func:`run_name` and
:func:`carried_rows`. A run of ``pvg stability`` with a results folder saves its training
state in ``OUT/runs/<run_name>/`` at every certification, so that ``--resume`` continues
an unfinished run from there instead of playing it again. :func:`trained_start` reads
the agents a run started from a trained FindThePlus run plays from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import nn

from ...errors import PVGError
from .._bookkeeping import METRICS_FILE
from ..checkpoint import STATE_FILE, load_run_agents, load_training_state
from ..tasks.find_the_plus import FindThePlus
from ..tasks.plus_verifier import PlusVerifier

#: A run's ``(formulation, update, pointing error)``; the error is ``None`` for a run
#: started from a trained pair.
Game = tuple[str, str, float | None]


def run_name(game: Game) -> str:
    """The folder name of a run's saved state: ``simultaneous-alternating-error-0.5px``."""
    formulation, update, error = game
    played = "trained-start" if error is None else f"error-{error:g}px"
    return "-".join(part for part in (formulation, update, played) if part != "-")


def carried_rows(
    folder: Path, earlier: dict[str, Any] | None, certify_every: int, steps: int
) -> list[dict[str, Any]]:
    """The certifications a run continued from ``folder``'s saved state keeps.

    They are ``earlier``'s rows up to the saved game step: step 0, every
    ``certify_every`` steps after it, and ``steps``, the last (a run stopped by a signal
    may have saved between two certifications). With no ``earlier`` record or no saved
    state the run plays again from step 0: ``[]`` is returned, and what ``folder`` held
    of it is removed.

    Raises:
        PVGError: the saved state and ``earlier`` disagree (rows missing or extra), naming
            both; deleting ``folder`` plays the run again.
    """
    if earlier is None or not (folder / STATE_FILE).is_file():
        for name in (STATE_FILE, METRICS_FILE):
            (folder / name).unlink(missing_ok=True)
        return []
    step = load_training_state(folder).step
    last = [step] if step == steps and step % certify_every else []
    wanted = [0, *range(certify_every, step + 1, certify_every), *last]
    rows = earlier.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise PVGError(f"the earlier record of {folder.name} has no list of certifications")
    kept = [r for r in rows if isinstance(r.get("step"), int) and r["step"] <= step]
    if [r["step"] for r in kept] != wanted:
        raise PVGError(
            f"{folder / STATE_FILE} is at game step {step}, but the earlier results certify "
            f"{folder.name} at steps {[r['step'] for r in kept]}, not {wanted}; delete "
            f"{folder} to play that run again"
        )
    return [dict(r) for r in kept]


#: The figures each certification row of a results file holds; the pointing figures
#: are null in a batch without a label-1 image (undefined, written as JSON null).
ROW_FIGURES = ("exhaustive_specificity", "exhaustive_recall", "sound")
POINTING_FIGURES = ("pointing_error_px", "on_plus")


def checked_run(run: Any, where: str) -> dict[str, Any]:
    """``run``, a run record read from a results file, once its shape is checked.

    Raises:
        PVGError: naming ``where`` and what is wrong: not a record, a game field,
            ``finished`` or ``lost_at`` of the wrong type, or no list of certification
            rows with a step and the figures of
            :data:`ROW_FIGURES` (and :data:`POINTING_FIGURES`) each.
    """
    if not isinstance(run, dict):
        raise PVGError(f"{where} is not a run record")
    for key in ("formulation", "update"):
        if not isinstance(run.get(key), str):
            raise PVGError(f"{where} has no {key} name")
    error = run.get("error_px")
    if not _is_number(error, null=True):
        raise PVGError(f"{where}: error_px must be a number of pixels or null, got {error!r}")
    if not isinstance(run.get("finished", True), bool):
        raise PVGError(f"{where}: finished must be true or false, got {run['finished']!r}")
    if run.get("lost_at") is not None and not _is_int(run["lost_at"]):
        raise PVGError(f"{where}: lost_at must be a game step or null, got {run['lost_at']!r}")
    rows = run.get("rows")
    if not isinstance(rows, list) or not rows:
        raise PVGError(f"{where} has no certification rows")
    for i, row in enumerate(rows):
        bad = not isinstance(row, dict) or not _is_int(row.get("step"))
        bad = bad or any(not _is_number(row.get(k)) for k in ROW_FIGURES)
        bad = bad or any(not _is_number(row.get(k), null=True) for k in POINTING_FIGURES)
        if bad:
            raise PVGError(
                f"{where}, row {i}: needs an integer step, the numbers {ROW_FIGURES} and "
                f"{POINTING_FIGURES} as numbers or null"
            )
    return run


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any, null: bool = False) -> bool:
    if value is None:
        return null
    return isinstance(value, int | float) and not isinstance(value, bool)


def trained_start(
    path: str, task: FindThePlus | None
) -> tuple[FindThePlus, tuple[nn.Module, PlusVerifier], str]:
    """The task and agents of a trained FindThePlus run, and where they were read."""
    saved, source = load_run_agents(path, "cpu")
    if not isinstance(saved.task, FindThePlus) or not isinstance(saved.verifier, PlusVerifier):
        raise PVGError(f"start {path}: a {saved.task.name} run, not a FindThePlus one")
    if task is not None and task.init_args() != saved.task.init_args():
        raise PVGError(
            f"start {path}: its task is {saved.task.init_args()}, not the {task.init_args()} "
            "asked for (a started run plays its own task)"
        )
    return saved.task, (saved.prover, saved.verifier), source
