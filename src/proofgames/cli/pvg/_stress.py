"""``proofgames pvg stress``: freeze a trained verifier and attack it.

Private to :mod:`proofgames.cli.pvg`, which registers the command.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...pvg.checkpoint import load_run_agents
from ...pvg.stress import ALL_ATTACKS, ATTACKS, StressConfig, stress_test, supported_attacks
from .._common import JsonOption, console, echo_json, fail, one_line_errors
from ._support import Device, MaxMemory, Threads, check_options, use_threads


def stress_command(
    checkpoint: Annotated[
        Path,
        typer.Argument(
            help="agents.pt, or a run folder: its agents.pt, or the state.pt of a run "
            "still training or stopped (its agents at the step saved)."
        ),
    ],
    attack: Annotated[
        str,
        typer.Option(
            help="prover, messages, both (the paper's two), exhaustive (exact search, "
            "find-the-plus, find-the-needle) or all (every attack the task supports)."
        ),
    ] = "both",
    seed: Annotated[int, typer.Option(help="Seed of the evaluation batch and attacks.")] = 0,
    prover_attack: Annotated[
        str,
        typer.Option(
            help="Where the prover attack starts: continued (a copy of the trained prover, "
            "the paper's) or fresh (a new prover)."
        ),
    ] = "continued",
    prover_steps: Annotated[
        int, typer.Option(min=1, help="Adam steps of the prover attack (at least 1).")
    ] = 500,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Instances per step of the prover attack's training.")
    ] = StressConfig.batch_size,
    lbfgs_max_iter: Annotated[
        int, typer.Option(min=1, help="L-BFGS iteration cap (at least 1).")
    ] = 300,
    eval_size: Annotated[
        int, typer.Option(min=1, help="Instances in the evaluation batch.")
    ] = 2000,
    device: Device = "auto",
    max_memory_gb: MaxMemory = DEFAULT_MAX_MEMORY_GB,
    threads: Threads = None,
    json_output: JsonOption = False,
) -> None:
    """Freeze a trained verifier and attack it; report precision and recall per attack.

    Every figure comes from an attack that ran: settings under which one would not run
    (0 steps, 0 iterations, no instances) are refused.
    """
    used_threads = use_threads(threads)
    check_options(device, max_memory_gb)
    if attack not in (*ALL_ATTACKS, "both", "all"):
        fail(f"unknown attack {attack!r}; choose {', '.join(ALL_ATTACKS)}, both or all")
    start = time.perf_counter()
    config = StressConfig(
        prover_steps=prover_steps,
        batch_size=batch_size,
        lbfgs_max_iter=lbfgs_max_iter,
        eval_size=eval_size,
        seed=seed,
        prover_attack=prover_attack,
    )
    with one_line_errors():
        saved, source = load_run_agents(checkpoint, device)
        attacks = {"both": ATTACKS, "all": supported_attacks(saved.task)}.get(attack, (attack,))
        results = stress_test(
            saved.task, saved.verifier, saved.prover, attacks, config, max_memory_gb
        )
    summary = {
        "checkpoint": source,
        "task": saved.task.name,
        "formulation": saved.config.formulation,
        "prover_attack": prover_attack,
        "seconds": round(time.perf_counter() - start, 3),
        "threads": used_threads,
        "attacks": {name: result.to_dict() for name, result in results.items()},
    }
    if json_output:
        echo_json(summary, indent=2)
        return
    for name, result in results.items():
        bounds = result.intervals()
        console.print(
            f"[bold]{name:>8}[/] precision {result.precision:.4f} {_shown(bounds['precision'])}"
            f"  recall {result.recall:.4f} {_shown(bounds['recall'])}  "
            f"specificity {result.specificity:.4f} {_shown(bounds['specificity'])}  "
            f"(TP {result.tp}, FP {result.fp}, FN {result.fn}, TN {result.tn})"
        )
    console.print("[dim]In brackets: 95% Clopper-Pearson intervals for the attack's rates.[/]")


def _shown(bounds: tuple[float, float] | None) -> str:
    return "[-]" if bounds is None else f"[{bounds[0]:.4f}, {bounds[1]:.4f}]"
