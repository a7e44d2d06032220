"""``proofgames pvg stability``: whether play keeps the hand-set sound FindThePlus protocol.

Private to :mod:`proofgames.cli.pvg`, which registers the command (and ``start-gradient``,
the gradient at that protocol's start).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ...errors import TrainingStopped
from ...pvg._files import check_folder, read_json
from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...pvg.config import FORMULATIONS, UPDATES
from ...reporting import write_atomic, write_json, writing_folder
from .._common import (
    JsonOption,
    OverwriteOption,
    console,
    echo_json,
    err_console,
    fail,
    one_line_errors,
)
from ._support import Device, Threads, check_options, use_threads

if TYPE_CHECKING:
    from ...pvg.find_the_plus.stability import StabilitySettings
    from ...pvg.tasks.find_the_plus import FindThePlus


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
    heads: Annotated[
        int | None,
        typer.Option(
            help="The verifier's heads, 1 to 16 (the paper's 4 by default); the hand-set "
            "protocol uses head 0 and leaves the others idle.",
            show_default=False,
        ),
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option(
            help="Start from a trained FindThePlus run (folder or agents.pt; a run still "
            "training: its state.pt) instead of the hand-set pair, on its own task "
            "(no --heads, no --error).",
        ),
    ] = None,
    verifier_weight_decay: Annotated[
        float,
        typer.Option(
            "--weight-decay",
            min=0.0,
            help="The verifier's weight decay: an L2 penalty on its weights (not its "
            "biases), added to its gradient before Adam's step; 0 (the paper's) adds none.",
        ),
    ] = 0.0,
    best_response: Annotated[
        str,
        typer.Option(
            help="What verifier-first play trains the verifier against: auto or "
            "closed-form, the prover's exact best response (the exhaustive search); "
            "trained, the trained prover (the paper's game).",
        ),
    ] = "auto",
    out: Annotated[
        Path,
        typer.Option(
            help="Folder for stability.json (rewritten after every certification), "
            "stability.md, stability.png and runs/ (each run's saved state)."
        ),
    ] = Path("reports/pvg-stability"),
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Reuse the finished runs of OUT/stability.json (same settings, or more "
            "--steps), continue an unfinished or shorter one from its state saved in "
            "OUT/runs, and play the rest.",
        ),
    ] = False,
    overwrite: OverwriteOption = False,
    device: Device = "cpu",
    threads: Threads = None,
    json_output: JsonOption = False,
) -> None:
    """Start FindThePlus at the hand-set sound protocol; certify it as play goes on.

    The verifier is a hand-set plus detector (head 0: weight 4 on the five plus cells,
    bias -18), the prover points head 0 at the plus with the given error plus a learned
    correction; each formulation and update rule plays from there, and the exhaustive
    search certifies the verifier every CERTIFY_EVERY steps.
    """
    from ...pvg.find_the_plus.stability import StabilitySettings, plot_stability
    from ...pvg.tasks.find_the_plus import FindThePlus

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
        verifier_weight_decay=verifier_weight_decay,
        start=None if start is None else str(start),
        best_response=best_response,
    )
    if start is not None and (heads is not None or error):
        fail("--start plays the trained run's own task and agents: drop --heads and --error")
    with one_line_errors():
        settings.validate()
        check_folder(out, "--out")
        task = None if start is not None else FindThePlus(heads=4 if heads is None else heads)
        played = task, out, used_threads
        with writing_folder(out, "proofgames pvg stability", overwrite=overwrite or resume):
            results = _played(settings, *played, resume=resume, chatty=not json_output)
            plot_stability(results, out / "stability.png")
    summary = [
        {k: run[k] for k in ("formulation", "update", "error_px", "lost_at", "seconds")}
        for run in results["runs"]
    ]
    if json_output:
        echo_json({"out": str(out), "runs": summary}, indent=2)
        return
    for run in summary:
        lost = run["lost_at"]
        kept = f"sound lost at step {lost}" if lost is not None else f"sound at step {steps}"
        kept = "not sound at the start" if lost == 0 else kept
        console.print(f"{run['formulation']:>14} {run['update']:>12}  {_played_from(run)}: {kept}")
    console.print(f"results: {out / 'stability.json'}")


def _played(
    settings: StabilitySettings,
    task: FindThePlus | None,
    out: Path,
    threads: int,
    *,
    resume: bool,
    chatty: bool,
) -> dict[str, Any]:
    """Run the experiment, saving the results in ``out`` (with ``threads``) as they grow.

    With ``chatty``, each certification of a run in play is also reported on stderr.
    """
    from ...pvg.find_the_plus.stability import (
        earlier_runs,
        played_out,
        run_stability,
        stability_table,
    )

    path = out / "stability.json"
    done = None
    if resume and path.exists():
        done = earlier_runs(read_json(path, "stability results"), settings, task)
        if chatty:
            finished = sum(played_out(run, settings.steps) for run in done)
            err_console.print(
                f"resuming from {path}: {finished} finished run(s) reused, "
                f"{len(done) - finished} unfinished or shorter continued from "
                f"{out / 'runs'} if saved there"
            )

    def save(partial: dict[str, Any]) -> None:
        out.mkdir(parents=True, exist_ok=True)
        write_json(path, {**partial, "threads": threads}, indent=2)
        write_atomic(out / "stability.md", stability_table(partial))
        run = partial["runs"][-1]
        if chatty and not run["finished"]:
            row = run["rows"][-1]
            err_console.print(
                f"{run['formulation']} {run['update']} {_played_from(run)}, step "
                f"{row['step']}: exhaustive specificity {row['exhaustive_specificity']:.3f}, "
                f"pointing error {row['pointing_error_px']:.2f} px"
            )

    try:
        results = run_stability(settings, task, done=done, progress=save, runs_dir=out / "runs")
    except TrainingStopped as exc:
        raise TrainingStopped(
            f"{exc}; the same command with --resume continues the experiment"
        ) from None
    save(results)
    return results


def _played_from(run: dict[str, Any]) -> str:
    error = run["error_px"]
    return "from the trained run" if error is None else f"error {error:g} px"


def start_gradient_command(
    error: Annotated[
        list[float] | None,
        typer.Option(
            "--error", help="The pointing prover's rms error in pixels (repeatable; default 0)."
        ),
    ] = None,
    idle_weight: Annotated[
        list[float] | None,
        typer.Option(
            "--idle-weight",
            help="Set every weight of the idle heads (1, 2, ...) to this first (repeatable; "
            "default 0, the hand-set start, and 0.03, where 100 Adam steps of one sign take "
            "them).",
        ),
    ] = None,
    size: Annotated[int, typer.Option(help="Images in the batch (2 to 100,000).")] = 4096,
    seed: Annotated[int, typer.Option(help="Seed of the images and the pointing error.")] = 0,
    threads: Threads = None,
    json_output: JsonOption = False,
) -> None:
    """The verifier's loss gradient at the hand-set sound FindThePlus protocol.

    For each pointing error and idle-head weight, on messages from the pointing prover
    (what simultaneous play trains on) and from the exhaustive search (what verifier-first
    play against the exact prover trains on). A negative gradient grows the weight.
    Nothing is written.
    """
    from ...pvg.find_the_plus.start_gradient import NEGATIVES, start_gradient
    from ...pvg.tasks.find_the_plus import FindThePlus

    use_threads(threads)
    task = FindThePlus()
    rows = []
    with one_line_errors():
        for e in error or [0.0]:
            for w in idle_weight if idle_weight is not None else [0.0, 0.03]:
                for negatives in NEGATIVES:
                    rows.append(start_gradient(task, e, negatives=negatives, size=size,
                                               seed=seed, idle_weight=w))  # fmt: skip
    if json_output:
        echo_json({"rows": rows}, indent=2)
        return
    table = Table(title="dL/dw at the hand-set sound verifier (negative: the weight grows)")
    for name in ("error px", "idle weight", "messages", "label-0 logit", "bias",
                 "plus cells", "idle heads (mean)", "idle heads (max)"):  # fmt: skip
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            f"{r['error_px']:g}", f"{r['idle_weight']:g}", r["negatives"],
            f"{r['label0_logit']:.2f}", f"{r['bias']:+.4f}", f"{r['plus_cells']:+.4f}",
            f"{r['idle_heads']:+.4f}", f"{r['idle_heads_max']:+.4f}",
        )  # fmt: skip
    console.print(table)
