"""Where the stability experiment's runs save their training states, and what they keep.

Private: :mod:`proofgames.pvg.stability` re-exports :func:`run_name` and
:func:`carried_rows`. A run of ``pvg stability`` with a results folder saves its training
state in ``OUT/runs/<run_name>/`` at every certification, so that ``--resume`` continues
an unfinished run from there instead of playing it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._errors import PVGError
from ._bookkeeping import METRICS_FILE
from .checkpoint import STATE_FILE, load_training_state

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
    every, last = certify_every, steps
    wanted = [0, *range(every, step + 1, every)] + ([step] if step == last and step % every else [])
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
