"""``proofgames pvg diagnose``: what a trained pair does, and where each head looks.

Private to :mod:`proofgames.cli.pvg`, which registers the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...pvg.checkpoint import load_run_agents
from .._common import JsonOption, console, echo_json, one_line_errors
from ._support import Device, MaxMemory, Threads, check_options, use_threads


def diagnose_command(
    checkpoint: Annotated[
        Path,
        typer.Argument(
            help="agents.pt, or a run folder (a run still training: its state.pt's agents)."
        ),
    ],
    n: Annotated[int, typer.Option(min=1, help="Fresh instances to evaluate on.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of those instances.")] = 0,
    device: Device = "auto",
    max_memory_gb: MaxMemory = DEFAULT_MAX_MEMORY_GB,
    threads: Threads = None,
    json_output: JsonOption = False,
) -> None:
    """What a trained pair does with its own prover; on FindThePlus, where each head looks.

    This is the verifier with the prover it was trained with (``pvg stress`` runs the
    attacks and scores them). On FindThePlus it adds each head's blind share, on-the-plus
    share and plus shape; what the count of 1-pixels alone would get; and how the exact
    attack gets label-0 images accepted: each head's logit term at the place the
    exhaustive search puts it, beside the bias, and how many plus cells the plus head
    then sees; which plus cell is missing where the prover's and the attack's placements
    show the plus head 4 of 5; and the bias shift that would make the verifier sound on
    these images, with what it leaves of recall on the next N (a diagnostic, not a fix).
    """
    from ...pvg.find_the_plus.diagnostics import diagnose

    used_threads = use_threads(threads)
    check_options(device, max_memory_gb)
    with one_line_errors():
        saved, source = load_run_agents(checkpoint, device)
        report = diagnose(saved.task, saved.prover, saved.verifier, n, seed, max_memory_gb)
    summary = {"checkpoint": source, "task": saved.task.name, "threads": used_threads, **report}
    if json_output:
        echo_json(summary, indent=2)
        return
    table = Table(title=f"{saved.task.name}: {summary['checkpoint']}")
    table.add_column("quantity")
    table.add_column("value")
    for key, value in report.items():
        if isinstance(value, dict):
            value = " / ".join(f"{k}: {_numbers(v)}" for k, v in value.items())
        table.add_row(key, _numbers(value))
    console.print(table)


def _numbers(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list):
        return ", ".join(_numbers(v) for v in value)
    return str(value)
