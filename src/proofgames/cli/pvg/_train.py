"""``proofgames pvg train``: train a prover and a verifier, or continue a saved run.

Private to :mod:`proofgames.cli.pvg`, which registers the command.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ...errors import PVGError
from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...pvg.batched import seed_folder
from ...pvg.registry import make_task, parse_task_args, task_defaults, task_names
from ...pvg.stress import ALL_ATTACKS, ATTACKS, StressConfig
from ...pvg.task import PVGTask
from ...pvg.train import FORMULATIONS, TrainConfig, check_training, train
from .._common import JsonOption, console, echo_json, one_line_errors
from ._seeds import parse_seeds, run_seeds, seeds_out
from ._support import (
    Device,
    MaxMemory,
    Threads,
    check_options,
    config_settings,
    prepare_out,
    resume_overrides,
    resumed_run,
    use_threads,
)


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
    seeds: Annotated[
        str | None,
        typer.Option(
            help="Train several seeds together as one batched model instead of --seed "
            "(comma-separated, e.g. 0,1,2,3; meant for a GPU): each seed's run goes to "
            "OUT/sSEED in the single-seed format, and --resume OUT continues them together "
            "(simultaneous and collaborative play, provers without noise: find-the-plus)."
        ),
    ] = None,
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
            "log_every (steps between metric rows; default 10), data_bank (N: draw the "
            "batches from N instances generated once from the seed; 0, the default: "
            "generate every batch); and the stress tests' stress.FIELD, e.g. "
            "stress.eval_size=500.",
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
    json_output: JsonOption = False,
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
    with one_line_errors():
        options = {"given": given, "chosen": chosen, "run": run}
        if seeds is not None:
            _seeds_command(task, options, (setting or [], task_arg or []), seeds,
                           (resume, out, overwrite), (used_threads, json_output))  # fmt: skip
            return
        task_obj, config = _task_and_config(
            task, options, setting or [], task_arg or [], resume, out
        )
        check_training(task_obj, config)
        prepare_out(Path(str(config.out_dir)), resume, overwrite)
        result = train(task_obj, config, resume=resume)
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
        echo_json(summary, indent=2)
        return
    _print_training(summary, result.sound_at)


def _seeds_command(
    task: str,
    options: dict[str, dict[str, Any]],
    lists: tuple[list[str], list[str]],
    seeds: str,
    folders: tuple[Path | None, Path | None, bool],
    shown: tuple[int, bool],
) -> None:
    """``--seeds``: the batched seeds' settings (a resumed root's first seed's), trained."""
    (setting, task_arg), (resume, out, overwrite) = lists, folders
    if options["chosen"]["seed"] != 0:  # not dropped silently: say which option wins
        raise PVGError(
            f"--seed {options['chosen']['seed']} with --seeds: give every seed in --seeds"
        )
    chosen = parse_seeds(seeds)
    source = None if resume is None else seed_folder(resume, chosen[0])
    task_obj, config = _task_and_config(task, options, setting, task_arg, source, out)
    root = seeds_out(task, config.formulation, out, resume)
    runs = run_seeds(task_obj, replace(config, out_dir=root), chosen, resume, overwrite)
    summary = {
        "task": task,
        "task_args": task_obj.init_args(),
        "formulation": config.formulation,
        "update": config.update,
        "seeds": chosen,
        "out": root,
        "resumed_from": None if resume is None else str(resume),
        "threads": shown[0],
        "runs": runs,
    }
    if shown[1]:
        echo_json(summary, indent=2)
        return
    for one in runs:
        _print_training({"task": task, "formulation": config.formulation, **one}, one["sound_at"])


def _task_and_config(
    task: str,
    options: dict[str, dict[str, Any]],
    setting: list[str],
    task_arg: list[str],
    resume: Path | None,
    out: Path | None,
) -> tuple[PVGTask, TrainConfig]:
    """The run's task and settings: those saved in ``--resume``'s run, or a fresh run's.

    ``options`` holds the options given (``given``: ``None`` if not), those with a default
    (``chosen``) and those a resumed run may change (``run``).
    """
    given, chosen, run = options["given"], options["chosen"], options["run"]
    settings = config_settings(setting)
    if resume is not None:
        overrides = resume_overrides(given, chosen, bool(task_arg))
        overrides += ["--set"] if settings else []
        task_obj, config = resumed_run(resume, task, given["steps"], overrides)
        folder = resume if resume.is_dir() else resume.parent
        return task_obj, replace(config, out_dir=str(out or folder), **run)
    task_obj = make_task(task, **parse_task_args(task, task_arg))
    name = f"pvg-{task}-{chosen['formulation']}-s{chosen['seed']}"
    out_dir = str(out or Path("runs") / name)
    return task_obj, _new_config(task, given, settings, {**chosen, **run, "out_dir": out_dir})


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
    """The run in two lines: against its own trained prover, then against the attacks.

    Precision and recall against the prover the verifier was trained with say nothing of
    soundness; the second line gives the last stress test, or says that none ran.
    """
    final, stress = summary["final"], summary.get("last_stress")
    console.print(
        f"[bold]{summary['task']}[/] {summary['formulation']} seed {summary['seed']}: "
        f"{summary['steps']} steps in {summary['seconds']:.1f} s; against the trained "
        f"prover: verifier accuracy {summary['verifier_accuracy']:.3f}, "
        f"precision {final.get('precision', float('nan')):.3f}, "
        f"recall {final.get('recall', float('nan')):.3f}"
    )
    if stress:
        attacks = sorted({k.rsplit("_", 1)[0] for k in stress if k != "step"})
        shown = "; ".join(
            f"{a}: precision {_fig(stress, a, 'precision')}, recall {_fig(stress, a, 'recall')}, "
            f"specificity {_fig(stress, a, 'specificity')}"
            for a in attacks
        )
        console.print(f"stress tests (frozen verifier) at step {stress['step']}: {shown}")
    else:
        console.print(
            "not stress-tested: soundness against other provers is unmeasured "
            "(--stress-every N, or proofgames pvg stress on the run)"
        )
    if sound_at is not None:
        console.print(f"complete and sound (both attacks) at step {sound_at}")
    console.print(f"checkpoint: {summary['checkpoint']}")


def _fig(row: dict[str, Any], attack: str, name: str) -> str:
    value = row.get(f"{attack}_{name}")
    return "n/a" if value is None else f"{value:.3f}"
