"""``proofgames pvg train --seeds``: several seeds trained together as one batched model.

Private to :mod:`proofgames.cli.pvg` (``pvg train`` calls it); the trainer is
:func:`proofgames.pvg.batched.train_seeds`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import PVGError
from ...pvg.batched import check_batched, seed_folder, train_seeds
from ...pvg.config import TrainConfig
from ...pvg.task import PVGTask
from ._support import prepare_out


def parse_seeds(text: str) -> list[int]:
    """The seeds of ``--seeds``: comma-separated integers.

    Example:
        >>> parse_seeds("0, 1,2")
        [0, 1, 2]

    Raises:
        PVGError: a part that is not an integer.
    """
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise PVGError(
            f"--seeds must be comma-separated integers (e.g. 0,1,2,3), got {text!r}"
        ) from None


def seeds_out(task: str, formulation: str, out: Path | None, resume: Path | None) -> str:
    """The root folder of batched seeds: ``--out``, else ``--resume``'s, else a default."""
    return str(out or resume or Path("runs") / f"pvg-{task}-{formulation}-seeds")


def run_seeds(
    task: PVGTask,
    config: TrainConfig,
    seeds: list[int],
    resume: Path | None,
    overwrite: bool,
) -> list[dict[str, Any]]:
    """Check everything, then train ``seeds`` together; each seed's summary (with its seed).

    ``config.out_dir`` is the root; each seed's run folder under it is checked as
    ``pvg train`` checks ``--out`` (another run there is refused unless ``--overwrite``
    or ``--resume`` continues it).
    """
    check_batched(task, config, seeds)
    root = Path(str(config.out_dir))
    for seed in seeds:
        continued = None if resume is None else seed_folder(resume, seed)
        prepare_out(seed_folder(root, seed), continued, overwrite)
    results = train_seeds(task, replace(config, out_dir=str(root)), seeds, resume=resume)
    return [{"seed": seed, **r.summary()} for seed, r in zip(seeds, results, strict=True)]
