"""``proofgames pvg``: train Prover-Verifier Games and stress-test the verifiers.

A :class:`typer.Typer` sub-application; the main CLI mounts it with
``app.add_typer(pvg_app, name="pvg")``.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .._errors import ProofgamesError
from .checkpoint import (
    STATE_FILE,
    checkpoint_file,
    load_checkpoint,
    load_training_agents,
    load_training_state,
)
from .registry import make_task, parse_task_args, task_defaults, task_names
from .stress import ALL_ATTACKS, ATTACKS, StressConfig, stress_test, supported_attacks
from .task import PVGTask
from .train import FORMULATIONS, TrainConfig, train

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Prover-Verifier Games (Anil et al. 2021): train agents, stress-test verifiers.",
)
console = Console()
err_console = Console(stderr=True)


#: ``--threads`` of the commands that run networks.
Threads = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="CPU threads for torch (default: torch's choice, one per core). The networks "
        "are small: 1 is often fastest, and far faster on a busy machine.",
    ),
]


def _use_threads(threads: int | None) -> int:
    """Apply ``--threads`` (if given); return the number of threads torch will use."""
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    return torch.get_num_threads()


def _fail(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)


@app.command("train")
def train_command(
    task: Annotated[str, typer.Argument(help=f"Task: {', '.join(task_names())}.")],
    formulation: Annotated[
        str, typer.Option(help=f"Game formulation: {', '.join(FORMULATIONS)}.")
    ] = "simultaneous",
    seed: Annotated[int, typer.Option(help="Seed of weights, noise and data.")] = 0,
    steps: Annotated[int | None, typer.Option(help="Game steps (task default if omitted).")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default runs/pvg-TASK-FORMULATION-sSEED).")
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="Instances per update.")] = None,
    lr: Annotated[float | None, typer.Option(help="Adam learning rate (both players).")] = None,
    verifier_lr: Annotated[
        float | None, typer.Option(help="The verifier's own learning rate.")
    ] = None,
    verifier_steps: Annotated[int | None, typer.Option(help="Verifier updates per step.")] = None,
    prover_steps: Annotated[int | None, typer.Option(help="Prover updates per step.")] = None,
    label_smoothing: Annotated[float | None, typer.Option(help="Verifier label smoothing.")] = None,
    best_response: Annotated[
        str,
        typer.Option(
            help="Follower seen by the leader: auto, closed-form (prover-first on bec: the "
            "exact verifier; verifier-first on find-the-plus and find-the-needle: the exact "
            "prover) or trained."
        ),
    ] = "auto",
    stress_every: Annotated[
        int, typer.Option(help="Stress-test the verifier every N steps (0: never).")
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
    checkpoint_every: Annotated[
        int,
        typer.Option(help="Write the resumable training state every N steps (0: never)."),
    ] = 100,
    tensorboard: Annotated[
        bool, typer.Option(help="Also log the metrics for TensorBoard (OUT/tensorboard).")
    ] = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Continue the run saved in this folder up to --steps game steps, with its "
            "settings (only --steps, --out, --device, --checkpoint-every and --tensorboard "
            "may be given)."
        ),
    ] = None,
    device: Annotated[str, typer.Option(help="auto (CUDA if available), cpu or cuda.")] = "auto",
    threads: Threads = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Train a prover and a verifier; save ``agents.pt``, ``config.json``, ``metrics.jsonl``.

    With ``--checkpoint-every`` (on by default) the run also writes ``state.pt``, from
    which ``--resume`` continues it exactly, e.g. after an interruption or to train longer.
    """
    used_threads = _use_threads(threads)
    given = {
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "verifier_lr": verifier_lr,
        "verifier_steps": verifier_steps,
        "prover_steps": prover_steps,
        "label_smoothing": label_smoothing,
    }
    try:
        if resume is not None:
            overrides = {
                f"--{key.replace('_', '-')}": value is not None
                for key, value in given.items()
                if key != "steps"
            }
            overrides.update(
                {
                    "--formulation": formulation != "simultaneous",
                    "--seed": seed != 0,
                    "--best-response": best_response != "auto",
                    "--stress-every": stress_every != 0,
                    "--stress-attack": bool(stress_attack),
                    "--keep-best": keep_best is not None,
                    "--stop-when-sound": stop_when_sound,
                    "--task-arg": bool(task_arg),
                }
            )
            task_obj, config = _resumed_run(
                resume, task, steps, [k for k, v in overrides.items() if v]
            )
            config = replace(
                config,
                out_dir=str(out or (resume if resume.is_dir() else resume.parent)),
                device=device,
                checkpoint_every=checkpoint_every,
                tensorboard=tensorboard,
                progress=not json_output,
            )
        else:
            task_obj = make_task(task, **parse_task_args(task, task_arg or []))
            values: dict[str, Any] = task_defaults(task)
            values.update({k: v for k, v in given.items() if v is not None})
            out_dir = out or Path("runs") / f"pvg-{task}-{formulation}-s{seed}"
            config = TrainConfig(
                **values,
                formulation=formulation,
                seed=seed,
                best_response=best_response,
                stress_every=stress_every,
                stress_attacks=tuple(stress_attack or ATTACKS),
                keep_best=keep_best,
                stop_when_sound=stop_when_sound,
                device=device,
                out_dir=str(out_dir),
                checkpoint_every=checkpoint_every,
                tensorboard=tensorboard,
                progress=not json_output,
            )
        result = train(task_obj, config, resume=resume)
    except (ProofgamesError, ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
        return
    formulation, seed = config.formulation, config.seed
    summary = {
        "task": task,
        "task_args": task_obj.init_args(),
        "formulation": formulation,
        "seed": seed,
        "resumed_from": None if resume is None else str(resume),
        "threads": used_threads,
        **result.summary(),
    }
    if json_output:
        typer.echo(json.dumps(summary, indent=2))
        return
    final = summary["final"]
    console.print(
        f"[bold]{task}[/] {formulation} seed {seed}: {result.steps} steps in "
        f"{result.seconds:.1f} s; verifier accuracy {result.verifier_accuracy:.3f}, "
        f"precision {final.get('precision', float('nan')):.3f}, "
        f"recall {final.get('recall', float('nan')):.3f}"
    )
    if result.sound_at is not None:
        console.print(f"complete and sound (both attacks) at step {result.sound_at}")
    console.print(f"checkpoint: {result.checkpoint}")


def _resumed_run(
    folder: Path, task: str, steps: int | None, overrides: list[str]
) -> tuple[PVGTask, TrainConfig]:
    """The task and settings of the run saved in ``folder`` (``--resume``)."""
    if overrides:
        raise ValueError(
            f"--resume continues the saved run with its own settings; drop {', '.join(overrides)}"
        )
    if steps is None:
        raise ValueError("--resume needs --steps: the run's new total of game steps")
    state = load_training_state(folder)
    if state.task != task:
        raise ValueError(f"{folder} holds a {state.task} run, not {task}")
    config = replace(TrainConfig.from_dict(state.config), steps=steps)
    return make_task(task, **state.task_args), config


@app.command("stress")
def stress_command(
    checkpoint: Annotated[Path, typer.Argument(help="agents.pt, or the folder holding it.")],
    attack: Annotated[
        str,
        typer.Option(
            help="prover, messages, both (the paper's two), exhaustive (exact search, "
            "find-the-plus, find-the-needle) or all (every attack the task supports)."
        ),
    ] = "both",
    seed: Annotated[int, typer.Option(help="Seed of the evaluation batch and attacks.")] = 0,
    prover_steps: Annotated[int, typer.Option(help="Adam steps of the fresh prover.")] = 500,
    batch_size: Annotated[
        int, typer.Option(help="Instances per step of the fresh prover's training.")
    ] = StressConfig.batch_size,
    lbfgs_max_iter: Annotated[int, typer.Option(help="L-BFGS iteration cap.")] = 300,
    eval_size: Annotated[int, typer.Option(help="Instances in the evaluation batch.")] = 2000,
    device: Annotated[str, typer.Option(help="auto (CUDA if available), cpu or cuda.")] = "auto",
    threads: Threads = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Freeze a trained verifier and attack it; report precision and recall per attack."""
    used_threads = _use_threads(threads)
    if attack not in (*ALL_ATTACKS, "both", "all"):
        _fail(f"unknown attack {attack!r}; choose {', '.join(ALL_ATTACKS)}, both or all")
    try:
        path = checkpoint_file(checkpoint)
    except FileNotFoundError as exc:
        _fail(str(exc))
        return
    start = time.perf_counter()
    try:
        saved = load_checkpoint(path, device)
        config = StressConfig(
            prover_steps=prover_steps,
            batch_size=batch_size,
            lbfgs_max_iter=lbfgs_max_iter,
            eval_size=eval_size,
            seed=seed,
        )
        attacks = {"both": ATTACKS, "all": supported_attacks(saved.task)}.get(attack, (attack,))
        results = stress_test(saved.task, saved.verifier, saved.prover, attacks, config)
    except (ProofgamesError, ValueError) as exc:
        _fail(str(exc))
        return
    summary = {
        "checkpoint": str(path),
        "task": saved.task.name,
        "formulation": saved.config.formulation,
        "seconds": round(time.perf_counter() - start, 3),
        "threads": used_threads,
        "attacks": {name: result.to_dict() for name, result in results.items()},
    }
    if json_output:
        typer.echo(json.dumps(summary, indent=2))
        return
    for name, result in results.items():
        console.print(
            f"[bold]{name:>8}[/] precision {result.precision:.4f}  recall {result.recall:.4f}  "
            f"specificity {result.specificity:.4f}  "
            f"(TP {result.tp}, FP {result.fp}, FN {result.fn}, TN {result.tn})"
        )


@app.command("diagnose")
def diagnose_command(
    checkpoint: Annotated[
        Path,
        typer.Argument(
            help="agents.pt, or a run folder (a run still training: its state.pt's agents)."
        ),
    ],
    n: Annotated[int, typer.Option(help="Fresh instances to evaluate on.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of those instances.")] = 0,
    device: Annotated[str, typer.Option(help="auto (CUDA if available), cpu or cuda.")] = "auto",
    threads: Threads = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What a trained pair does with its own prover; on FindThePlus, where each head looks.

    No attack is run (see ``pvg stress``): this is the verifier with the prover it was
    trained with, plus, on FindThePlus, the blind share, on-the-plus share and plus shape
    of each head, and what the count of 1-pixels alone would get.
    """
    from .diagnostics import diagnose

    used_threads = _use_threads(threads)
    if n < 1:
        _fail(f"--n must be positive, got {n}")
    unfinished = checkpoint.is_dir() and not (checkpoint / "agents.pt").is_file()
    try:
        if unfinished and (checkpoint / STATE_FILE).is_file():
            saved, step = load_training_agents(checkpoint, device)
            source = f"{checkpoint / STATE_FILE} (step {step})"
        else:
            saved, source = load_checkpoint(checkpoint, device), str(checkpoint_file(checkpoint))
        report = diagnose(saved.task, saved.prover, saved.verifier, n, seed)
    except (ProofgamesError, ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
        return
    summary = {"checkpoint": source, "task": saved.task.name, "threads": used_threads, **report}
    if json_output:
        typer.echo(json.dumps(summary, indent=2))
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


@app.command("reproduce")
def reproduce_command(
    seeds: Annotated[int, typer.Option(help="Number of training seeds (0, 1, ...).")] = 4,
    profile: Annotated[
        str, typer.Option(help="Scale: cpu (default), paper (full settings) or smoke.")
    ] = "cpu",
    task: Annotated[
        list[str] | None, typer.Option(help="Only this task (repeatable): bec, find-the-plus.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("reports/pvg"),
    readme: Annotated[
        Path | None,
        typer.Option(help="Also update the report:pvg block of this file (docs/pvg.md)."),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="FindThePlus seeds trained in parallel (one thread each).")
    ] = 1,
    resume: Annotated[
        bool,
        typer.Option(
            help="Continue an interrupted reproduction in OUT/runs: reuse its finished runs "
            "and continue the unfinished ones from their training state."
        ),
    ] = False,
    device: Annotated[str, typer.Option(help="auto (CUDA if available), cpu or cuda.")] = "auto",
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Reproduce Tables 2 and 3, Figures 2 and 4 and Theorems 4 vs 5; write a report."""
    from .profiles import PROFILES
    from .report import summary_tables, write_report
    from .reproduce import reproduce

    if profile not in PROFILES:
        _fail(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    if seeds < 1:
        _fail(f"--seeds must be at least 1, got {seeds}")
    tasks = tuple(task) if task else ("bec", "find-the-plus")
    try:
        results = reproduce(
            range(seeds),
            profile,
            tasks,
            device,
            progress=not json_output,
            workers=workers,
            runs_dir=out / "runs",
            resume=resume,
        )
    except (ProofgamesError, ValueError) as exc:
        _fail(str(exc))
        return
    path = write_report(results, out, readme)
    if json_output:
        summary = {
            "report": str(path),
            "seconds": results["seconds"],
            **{t: results[t]["table"] for t in tasks},
        }
        typer.echo(json.dumps(summary, indent=2))
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
    """Rewrite the report and figures from saved measurements, without training."""
    from .report import write_report

    try:
        data = json.loads(results.read_text())
    except (OSError, ValueError) as exc:
        _fail(f"cannot read {results}: {exc}")
        return
    if not isinstance(data, dict) or "seeds" not in data or "profile" not in data:
        _fail(f"{results} is not a results.json written by `proofgames pvg reproduce`")
    path = write_report(data, out or results.parent, readme)
    console.print(f"report: {path}")


__all__ = ["app", "report_command", "reproduce_command", "stress_command", "train_command"]
