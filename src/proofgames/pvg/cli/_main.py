"""The ``proofgames pvg`` application: ``train``, ``stress``, ``reproduce``, ``report``.

Private to :mod:`proofgames.pvg.cli`, which exports :data:`app`; the main CLI mounts it
as ``pvg``. The other commands are defined in their own modules and added here.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ...cli.sweeps import ExecutorOption, SchedulerOption, sweep_bar
from ...errors import ProofgamesError
from .._files import check_folder
from .._memory import DEFAULT_MAX_MEMORY_GB
from ..checkpoint import load_run_agents
from ..registry import make_task, parse_task_args, task_defaults, task_names
from ..stress import ALL_ATTACKS, ATTACKS, StressConfig, stress_test, supported_attacks
from ..train import FORMULATIONS, TrainConfig, check_training, train
from ._curves import curves_command
from ._diagnose import diagnose_command
from ._stability import stability_command, start_gradient_command
from ._support import (
    Device,
    Json,
    MaxMemory,
    Threads,
    check_options,
    check_readme,
    config_settings,
    draw_report,
    echo_json,
    fail,
    prepare_out,
    resume_overrides,
    resumed_run,
    use_threads,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Prover-Verifier Games (Anil et al. 2021): train agents, stress-test verifiers. "
    "A bad input is refused with a one-line message on stderr and exit status 2.",
)
console = Console()


@app.command("train")
def train_command(
    task: Annotated[str, typer.Argument(help=f"Task: {', '.join(task_names())}.")],
    formulation: Annotated[
        str, typer.Option(help=f"Game formulation: {', '.join(FORMULATIONS)}.")
    ] = "simultaneous",
    update: Annotated[
        str | None,
        typer.Option(
            help="Update rule of simultaneous and collaborative play: simultaneous (both "
            "gradients at one point) or alternating (the prover steps, then the verifier on "
            "a fresh batch); task default if omitted (find-the-plus: alternating)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of weights, noise and data.")] = 0,
    steps: Annotated[
        int | None, typer.Option(min=1, help="Game steps (task default if omitted).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output folder (default runs/pvg-TASK-FORMULATION-sSEED); one that holds "
            "another run is refused (see --overwrite and --resume)."
        ),
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option(
            help="Replace the run already in OUT: remove its run files (agents.pt, "
            "config.json, metrics.jsonl, state.pt, run.json, tensorboard/) first; other "
            "files stay."
        ),
    ] = False,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Instances per update.")] = None,
    lr: Annotated[
        float | None, typer.Option(help="Adam learning rate (both players; > 0).")
    ] = None,
    verifier_lr: Annotated[
        float | None, typer.Option(help="The verifier's own learning rate (> 0).")
    ] = None,
    verifier_steps: Annotated[
        int | None, typer.Option(min=1, help="Verifier updates per step.")
    ] = None,
    prover_steps: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Prover updates per step (0 only in verifier-first play against the exact "
            "prover).",
        ),
    ] = None,
    label_smoothing: Annotated[
        float | None, typer.Option(help="Verifier label smoothing, in [0, 1).")
    ] = None,
    best_response: Annotated[
        str,
        typer.Option(
            help="Follower seen by the leader: auto, closed-form (prover-first on bec: the "
            "exact verifier; verifier-first on find-the-plus and find-the-needle: the exact "
            "prover) or trained."
        ),
    ] = "auto",
    stress_every: Annotated[
        int, typer.Option(min=0, help="Stress-test the verifier every N steps (0: never).")
    ] = 0,
    stress_attack: Annotated[
        list[str] | None,
        typer.Option(
            "--stress-attack",
            help=f"Attack run by those stress tests (repeatable: {', '.join(ALL_ATTACKS)}; "
            f"default the paper's {' and '.join(ATTACKS)}).",
        ),
    ] = None,
    keep_best: Annotated[
        str | None,
        typer.Option(
            help="Keep the agents of the stress test with the best verifier accuracy "
            "against this attack (the paper's FindThePlus model selection: messages)."
        ),
    ] = None,
    stop_when_sound: Annotated[
        bool, typer.Option(help="Stop once the stress tests find precision = recall = 1.")
    ] = False,
    task_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--task-arg",
            help="Task argument KEY=VALUE (repeatable), e.g. pool=0 or bounded_shifts=true.",
        ),
    ] = None,
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Another training setting KEY=VALUE (repeatable): adaptive_threshold (add a "
            "prover step while the verifier's accuracy stays above it; none: never), "
            "adaptive_window, max_prover_steps, pretrain_steps, aux_weight, eval_size, "
            "log_every; and the stress tests' stress.FIELD, e.g. stress.eval_size=500.",
        ),
    ] = None,
    checkpoint_every: Annotated[
        int,
        typer.Option(min=0, help="Write the resumable training state every N steps (0: never)."),
    ] = 100,
    tensorboard: Annotated[
        bool, typer.Option(help="Also log the metrics for TensorBoard (OUT/tensorboard).")
    ] = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Continue the run saved in this folder up to --steps game steps, with its "
            "settings (only --steps, --out, --overwrite, --device, --checkpoint-every, "
            "--tensorboard, --max-memory-gb, --threads and --json may be given); everything "
            "is checked before any work."
        ),
    ] = None,
    device: Device = "auto",
    max_memory_gb: MaxMemory = DEFAULT_MAX_MEMORY_GB,
    threads: Threads = None,
    json_output: Json = False,
) -> None:
    """Train a prover and a verifier; save ``agents.pt``, ``config.json``, ``metrics.jsonl``.

    With ``--checkpoint-every`` (on by default) the run also writes ``state.pt``, from
    which ``--resume`` continues it exactly, e.g. after an interruption or to train longer.
    Everything (settings, device, memory estimate, the output folder) is checked first.
    """
    used_threads = use_threads(threads)
    check_options(device, max_memory_gb)
    given: dict[str, Any] = {
        "update": update,
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "verifier_lr": verifier_lr,
        "verifier_steps": verifier_steps,
        "prover_steps": prover_steps,
        "label_smoothing": label_smoothing,
    }
    chosen: dict[str, Any] = {
        "formulation": formulation,
        "seed": seed,
        "best_response": best_response,
        "stress_every": stress_every,
        "stress_attacks": tuple(stress_attack or ATTACKS),
        "keep_best": keep_best,
        "stop_when_sound": stop_when_sound,
    }
    run: dict[str, Any] = {
        "device": device,
        "checkpoint_every": checkpoint_every,
        "tensorboard": tensorboard,
        "progress": not json_output,
        "max_memory_gb": max_memory_gb,
    }
    try:
        settings = config_settings(setting or [])
        if resume is not None:
            overrides = resume_overrides(given, chosen, bool(task_arg))
            overrides += ["--set"] if settings else []
            task_obj, config = resumed_run(resume, task, steps, overrides)
            folder = resume if resume.is_dir() else resume.parent
            config = replace(config, out_dir=str(out or folder), **run)
        else:
            task_obj = make_task(task, **parse_task_args(task, task_arg or []))
            out_dir = out or Path("runs") / f"pvg-{task}-{formulation}-s{seed}"
            config = _new_config(task, given, settings, {**chosen, **run, "out_dir": str(out_dir)})
        check_training(task_obj, config)
        prepare_out(Path(str(config.out_dir)), resume, overwrite)
        result = train(task_obj, config, resume=resume)
    except ProofgamesError as exc:
        fail(str(exc))
    summary = {
        "task": task,
        "task_args": task_obj.init_args(),
        "formulation": config.formulation,
        "update": config.update,
        "seed": config.seed,
        "resumed_from": None if resume is None else str(resume),
        "threads": used_threads,
        **result.summary(),
    }
    if json_output:
        echo_json(summary)
        return
    _print_training(summary, result.sound_at)


def _new_config(
    task: str, given: dict[str, Any], settings: dict[str, Any], fixed: dict[str, Any]
) -> TrainConfig:
    """A fresh run's settings: the task's defaults, then the options given, then ``--set``."""
    values: dict[str, Any] = task_defaults(task)
    values.update({k: v for k, v in given.items() if v is not None})
    # --set values were given, so kept even when None (adaptive_threshold=none)
    values.update({k: v for k, v in settings.items() if k != "stress"})
    if stress := settings.get("stress"):
        values["stress"] = replace(values.get("stress") or StressConfig(), **stress)
    return TrainConfig(**values, **fixed)


def _print_training(summary: dict[str, Any], sound_at: int | None) -> None:
    final = summary["final"]
    console.print(
        f"[bold]{summary['task']}[/] {summary['formulation']} seed {summary['seed']}: "
        f"{summary['steps']} steps in {summary['seconds']:.1f} s; verifier accuracy "
        f"{summary['verifier_accuracy']:.3f}, "
        f"precision {final.get('precision', float('nan')):.3f}, "
        f"recall {final.get('recall', float('nan')):.3f}"
    )
    if sound_at is not None:
        console.print(f"complete and sound (both attacks) at step {sound_at}")
    console.print(f"checkpoint: {summary['checkpoint']}")


@app.command("stress")
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
    json_output: Json = False,
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
    try:
        saved, source = load_run_agents(checkpoint, device)
        attacks = {"both": ATTACKS, "all": supported_attacks(saved.task)}.get(attack, (attack,))
        results = stress_test(
            saved.task, saved.verifier, saved.prover, attacks, config, max_memory_gb
        )
    except ProofgamesError as exc:
        fail(str(exc))
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
        echo_json(summary)
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


@app.command("reproduce")
def reproduce_command(
    seeds: Annotated[
        int, typer.Option(min=1, max=1000, help="Number of training seeds (0, 1, ...; <= 1,000).")
    ] = 4,
    profile: Annotated[
        str,
        typer.Option(
            help="Scale: cpu (default), paper (full settings), long (find-the-plus: 20,000 "
            "steps at batch 256, exhaustive search every 500) or smoke."
        ),
    ] = "cpu",
    task: Annotated[
        list[str] | None, typer.Option(help="Only this task (repeatable): bec, find-the-plus.")
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Report folder; its runs/ keep each run (see --resume).")
    ] = Path("reports/pvg"),
    readme: Annotated[
        Path | None,
        typer.Option(
            help="Also update the report:pvg block of this file (docs/pvg.md); a file "
            "without the block is refused before any work."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="FindThePlus seeds trained in parallel (one thread each).")
    ] = 1,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="Continue an interrupted reproduction in OUT/runs: reuse its finished runs "
            "and continue the unfinished ones from their training state; saved results of "
            "other settings are refused before any work."
        ),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            help="Start afresh over an earlier reproduction's results in OUT/runs "
            "(removing those this call would write); without it, or --resume, they are "
            "refused."
        ),
    ] = False,
    device: Device = "auto",
    max_memory_gb: MaxMemory = DEFAULT_MAX_MEMORY_GB,
    json_output: Json = False,
) -> None:
    """Reproduce Tables 2 and 3, Figures 2 and 4 and Theorems 4 vs 5; write a report."""
    from ...executors import InlineExecutor, check_executor, make_executor
    from ..reproduce.profiles import PROFILES
    from ..reproduce.report import summary_tables, write_report
    from ..reproduce.reproduce import reproduce

    check_options(device, max_memory_gb)
    if profile not in PROFILES:
        fail(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    tasks = tuple(task) if task else ("bec", "find-the-plus")
    try:
        check_executor(executor, workers, scheduler)
        check_folder(out / "runs", "--out")
        check_readme(readme)
        with (
            make_executor(executor, min(workers, seeds), scheduler, start_method="spawn") as pool,
            sweep_bar("FindThePlus seeds", seeds, pool) as bar,
        ):
            results = reproduce(
                range(seeds),
                profile,
                tasks,
                device,
                progress=not json_output,
                workers=workers,
                runs_dir=out / "runs",
                resume=resume,
                overwrite=overwrite,
                max_memory_gb=max_memory_gb,
                executor=None if isinstance(pool, InlineExecutor) else pool,
                seed_progress=bar.advance,
            )
        path = write_report(results, out, readme)
    except ProofgamesError as exc:
        fail(str(exc))
    if json_output:
        summary = {
            "report": str(path),
            "seconds": results["seconds"],
            **{t: results[t]["table"] for t in tasks},
        }
        echo_json(summary)
        return
    console.print(summary_tables(results))
    console.print(f"report: {path}")


@app.command("report")
def report_command(
    results: Annotated[Path, typer.Argument(help="results.json written by `pvg reproduce`.")],
    out: Annotated[
        Path | None, typer.Option(help="Report folder (default: the folder of RESULTS).")
    ] = None,
    readme: Annotated[
        Path | None,
        typer.Option(help="Also update the report:pvg block of this file (docs/pvg.md)."),
    ] = None,
) -> None:
    """Rewrite the report and figures from saved measurements, without training.

    Nothing is written unless the whole report could be drawn from RESULTS.
    """
    from ..reproduce.report import read_results, write_report

    target = out or results.parent
    try:
        check_folder(target, "--out")
        check_readme(readme)
        data = read_results(results)
        path = draw_report(data, results, target, readme, write_report)
    except ProofgamesError as exc:
        fail(str(exc))
    console.print(f"report: {path}")


app.command("curves")(curves_command)
app.command("diagnose")(diagnose_command)
app.command("stability")(stability_command)
app.command("start-gradient")(start_gradient_command)

__all__ = ["app", "report_command", "reproduce_command", "stress_command", "train_command"]
