"""What the ``proofgames pvg`` commands share beyond :mod:`proofgames.cli._common`.

Private to :mod:`proofgames.cli.pvg`: the options of the commands that run networks
(``--device``, ``--threads``, ``--max-memory-gb``) and the checks of ``train``,
``reproduce`` and ``report``. The consoles, ``--json`` and the one error path are
:mod:`proofgames.cli._common`'s: every user error reaches the commands as a
:class:`~proofgames.errors.ProofgamesError`, which
:func:`~proofgames.cli._common.one_line_errors` turns into one ``error:`` line on stderr
and exit status 2.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ..._spec import Parameter, parse_pairs, spec_parameters
from ...errors import ProofgamesError, PVGError
from ...pvg._bookkeeping import logged_rows
from ...pvg._files import check_file_to_write, check_folder, remove_run, run_files
from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...pvg.checkpoint import STATE_FILE, first_line, load_training_state
from ...pvg.config import TrainConfig, resolve_device
from ...pvg.registry import make_task
from ...pvg.reproduce.report import has_report_block
from ...pvg.stress import ATTACKS, StressConfig
from ...pvg.task import PVGTask
from ...reporting.outputs import owner
from .._common import fail, one_line_errors

#: ``--threads`` of the commands that run networks.
Threads = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="CPU threads for torch (default: torch's choice, one per core). The networks "
        "are small: 1 is often fastest, and far faster on a busy machine.",
    ),
]
#: ``--device`` of the commands that run networks.
Device = Annotated[
    str,
    typer.Option(
        help="auto (CUDA if available, else CPU), cpu, cuda or cuda:N; a device this "
        "machine lacks is refused."
    ),
]
#: ``--max-memory-gb`` of the commands that allocate batches.
MaxMemory = Annotated[
    float,
    typer.Option(
        "--max-memory-gb",
        help="Refuse, before allocating anything, a batch whose memory is estimated "
        f"(from a 4-instance probe) above this many GB (default {DEFAULT_MAX_MEMORY_GB:g}); "
        "raise it on a machine with more memory.",
    ),
]


def use_threads(threads: int | None) -> int:
    """Apply ``--threads`` (if given); return the number of threads torch will use."""
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def check_options(device: str, max_memory_gb: float) -> None:
    """Refuse an unusable ``--device`` or ``--max-memory-gb`` (exits with status 2)."""
    if not (math.isfinite(max_memory_gb) and max_memory_gb > 0):
        fail(f"--max-memory-gb must be a positive number of GB, got {max_memory_gb}")
    with one_line_errors():
        resolve_device(device)


def check_readme(readme: Path | None) -> None:
    """Refuse a ``--readme`` that has no ``report:pvg`` block to update."""
    if readme is None:
        return
    check_file_to_write(readme, "--readme")
    if not has_report_block(readme):
        what = "has no" if readme.is_file() else "does not exist, so it has no"
        raise PVGError(
            f"--readme {readme} {what} report:pvg block to update "
            "(<!-- report:pvg:start --> ... <!-- report:pvg:end -->)"
        )


def prepare_out(out: Path, resume: Path | None, overwrite: bool) -> None:
    """Make sure ``pvg train`` writes into ``out`` without mixing two runs' files.

    A folder holding another run is refused unless ``--overwrite`` (its run files are
    removed) or ``--resume`` continues that very run there.
    """
    check_folder(out, "--out")
    made_by = owner(out)
    if made_by is not None:
        raise PVGError(f"--out {out} holds the output of {made_by!r}; choose another --out")
    continued = None if resume is None else (resume if resume.is_dir() else resume.parent)
    if continued is not None and out.resolve() == continued.resolve():
        if overwrite:
            raise PVGError(
                f"--overwrite would remove the run that --resume continues in {out}; "
                "drop --overwrite, or give another --out"
            )
        return
    found = run_files(out)
    if not found:
        return
    if not overwrite:
        raise PVGError(
            f"--out {out} holds another run ({', '.join(found)}): pass --overwrite to "
            f"replace it, --resume {out} to continue it, or choose another --out"
        )
    remove_run(out)


def resumed_run(
    folder: Path, task: str, steps: int | None, overrides: list[str]
) -> tuple[PVGTask, TrainConfig]:
    """The task and settings of the run saved in ``folder`` (``--resume``), all checked."""
    if overrides:
        raise PVGError(
            f"--resume continues the saved run with its own settings; drop {', '.join(overrides)}"
        )
    if steps is None:
        raise PVGError("--resume needs --steps: the run's new total of game steps")
    state = load_training_state(folder)
    if state.task != task:
        raise PVGError(f"{folder} holds a {state.task} run, not {task}")
    source = folder / STATE_FILE if folder.is_dir() else folder
    try:
        config = replace(TrainConfig.from_dict(state.config), steps=steps)
        task_obj = make_task(task, **state.task_args)
    except (TypeError, AttributeError) as exc:
        raise PVGError(f"{source}: unusable saved settings ({exc})") from None
    logged_rows(folder, state.step)  # a damaged log is refused now, not after any work
    return task_obj, config


SETTABLE = (
    "adaptive_threshold",
    "adaptive_window",
    "max_prover_steps",
    "pretrain_steps",
    "aux_weight",
    "verifier_weight_decay",
    "eval_size",
    "log_every",
    "data_bank",
)
"""The :class:`TrainConfig` fields ``pvg train --set`` sets: those without an option.

``precision`` is not among them: bf16 autocast failed its side-by-side check (its
learning left the seed-to-seed spread; ``docs/find-the-plus.md``), so it is offered only
to the Python API, for experiments such as that check.
"""


NOT_OFFERED = {
    "precision": "; bf16 autocast failed its side-by-side check (docs/find-the-plus.md): "
    "it is for experiments through the Python API (TrainConfig.precision)",
}
"""The :class:`TrainConfig` fields ``pvg train`` does not take, with the reason it says."""


def config_settings(pairs: list[str]) -> dict[str, Any]:
    """:class:`TrainConfig` fields from ``KEY=VALUE`` strings (``pvg train --set``).

    Each value is converted to the field's type exactly (``eval_size=2.5`` is refused, not
    truncated); the ranges are checked with the rest of the configuration. The stress
    tests' settings (:class:`StressConfig`) are ``stress.FIELD``; they come back as one
    ``"stress"`` dict.

    Example:
        >>> config_settings(["adaptive_threshold=0.8", "pretrain-steps=0"])
        {'adaptive_threshold': 0.8, 'pretrain_steps': 0}
        >>> config_settings(["stress.eval_size=500", "stress.prover_attack=fresh"])
        {'stress': {'eval_size': 500, 'prover_attack': 'fresh'}}

    Raises:
        PVGError: a pair without ``=``, a field ``--set`` does not take (one with its own
            option is named), or a value not of the field's type.
    """
    try:
        raw = parse_pairs(pairs, "(a --set setting)")
    except ProofgamesError as exc:
        raise PVGError(str(exc)) from None
    fields, stress = spec_parameters(TrainConfig), spec_parameters(StressConfig)
    out: dict[str, Any] = {}
    for key, text in raw.items():
        group, _, name = key.rpartition(".")
        if group == "stress" and name in stress:
            out.setdefault("stress", {})[name] = _converted(stress[name], text)
        elif not group and key in SETTABLE:
            out[key] = _converted(fields[key], text)
        else:
            own = f"; it has its own option --{key.replace('_', '-')}" if key in fields else ""
            own = NOT_OFFERED.get(key, own)
            raise PVGError(
                f"--set {key}: not a setting --set takes{own} (--set takes "
                f"{', '.join(SETTABLE)} and stress.FIELD for {', '.join(stress)})"
            )
    return out


def _converted(parameter: Parameter, text: str) -> Any:
    try:
        return parameter.convert(text)
    except ValueError as exc:
        raise PVGError(f"--set {exc}") from None


def resume_overrides(given: dict[str, Any], chosen: dict[str, Any], task_args: bool) -> list[str]:
    """The options given with ``--resume`` that would change the saved run's settings."""
    defaults = {
        "formulation": "simultaneous",
        "seed": 0,
        "best_response": "auto",
        "stress_every": 0,
        "stress_attacks": ATTACKS,
        "keep_best": None,
        "stop_when_sound": False,
    }
    changed = [k for k, v in given.items() if k != "steps" and v is not None]
    changed += [k for k, v in chosen.items() if v != defaults[k]]
    names = {"stress_attacks": "stress_attack"}
    options = [f"--{names.get(k, k).replace('_', '-')}" for k in changed]
    return options + (["--task-arg"] if task_args else [])


def draw_report(
    data: dict[str, Any], source: Path, out: Path, readme: Path | None, write: Any
) -> Path:
    """``write(data, out, readme)``; results too damaged to draw are a ``PVGError``."""
    try:
        path: Path = write(data, out, readme)
    except ProofgamesError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else first_line(exc)
        raise PVGError(
            f"{source} is not a results.json written by `pvg reproduce` ({what})"
        ) from None
    return path
