"""``proofgames pvg stability``: whether play keeps the hand-set sound FindThePlus protocol.

Private to :mod:`proofgames.pvg.cli`, which registers the command (kept apart to keep
that module short).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .._errors import ProofgamesError
from ._cli_support import Device, Json, Threads, check_options, echo_json, fail, use_threads
from ._files import check_folder, write_json, write_text
from ._memory import DEFAULT_MAX_MEMORY_GB
from .config import FORMULATIONS, UPDATES

console = Console()


def stability_command(
    steps: Annotated[int, typer.Option(min=1, help="Game steps per run.")] = 300,
    certify_every: Annotated[
        int, typer.Option(min=1, help="Game steps between exhaustive certifications.")
    ] = 25,
    error: Annotated[
        list[float] | None,
        typer.Option(
            "--error",
            help="The pointing prover's rms error in pixels (repeatable; 0 is an exact "
            "pointer; default 0, 0.5, 1 and 1.8).",
        ),
    ] = None,
    formulation: Annotated[
        list[str] | None,
        typer.Option(
            "--formulation",
            help=f"Formulation played (repeatable: {', '.join(FORMULATIONS)}; default "
            "simultaneous and verifier-first).",
        ),
    ] = None,
    update: Annotated[
        list[str] | None,
        typer.Option(
            "--update",
            help=f"Update rule of simultaneous and collaborative play (repeatable: "
            f"{', '.join(UPDATES)}; default both).",
        ),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Instances per update.")] = 256,
    certify_size: Annotated[
        int, typer.Option(min=1, help="Held-out images of each certification.")
    ] = 500,
    seed: Annotated[int, typer.Option(help="Seed of the games, images and errors.")] = 0,
    out: Annotated[Path, typer.Option(help="Folder for stability.json and stability.png.")] = Path(
        "reports/pvg-stability"
    ),
    device: Device = "cpu",
    threads: Threads = None,
    json_output: Json = False,
) -> None:
    """Start FindThePlus at the hand-set sound protocol; certify it as play goes on.

    The verifier is a hand-set plus detector (head 0: weight 4 on the five plus cells,
    bias -18), the prover points head 0 at the plus with the given error plus a learned
    correction; each formulation and update rule plays from there, and the exhaustive
    search certifies the verifier every CERTIFY_EVERY steps.
    """
    from .stability import StabilitySettings, plot_stability, run_stability, stability_table

    used_threads = use_threads(threads)
    check_options(device, DEFAULT_MAX_MEMORY_GB)
    defaults = StabilitySettings()
    settings = StabilitySettings(
        steps=steps,
        certify_every=certify_every,
        batch_size=batch_size,
        certify_size=certify_size,
        errors_px=tuple(error) if error else defaults.errors_px,
        formulations=tuple(formulation) if formulation else defaults.formulations,
        updates=tuple(update) if update else defaults.updates,
        seed=seed,
        device=device,
    )
    try:
        settings.validate()
        check_folder(out, "--out")
        results = run_stability(settings)
        results["threads"] = used_threads
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "stability.json", results, indent=2)
        plot_stability(results, out / "stability.png")
        write_text(out / "stability.md", stability_table(results))
    except ProofgamesError as exc:
        fail(str(exc))
    summary = [
        {k: run[k] for k in ("formulation", "update", "error_px", "lost_at", "seconds")}
        for run in results["runs"]
    ]
    if json_output:
        echo_json({"out": str(out), "runs": summary})
        return
    for run in summary:
        lost = run["lost_at"]
        kept = f"sound lost at step {lost}" if lost is not None else f"sound at step {steps}"
        console.print(
            f"{run['formulation']:>14} {run['update']:>12}  error {run['error_px']:g} px: {kept}"
        )
    console.print(f"results: {out / 'stability.json'}")
