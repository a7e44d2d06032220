"""``proofgames pvg reproduce`` and ``report``: the paper's tables and figures, and its report.

Private to :mod:`proofgames.cli.pvg`, which registers the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ...pvg._files import check_folder
from ...pvg._memory import DEFAULT_MAX_MEMORY_GB
from ...reporting import claim_folder, finish_folder, writing_folder
from .._common import JsonOption, OverwriteOption, console, echo_json, fail, one_line_errors
from ..sweeps import ExecutorOption, SchedulerOption, sweep_bar
from ._support import Device, MaxMemory, check_options, check_readme, draw_report

#: The owner of a reproduction's folder: ``pvg report`` rewrites the report there too.
REPORT_OWNER = "proofgames pvg reproduce"


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
    json_output: JsonOption = False,
) -> None:
    """Reproduce Tables 2 and 3, Figures 2 and 4 and Theorems 4 vs 5; write a report."""
    from ...pvg.reproduce.profiles import PROFILES
    from ...pvg.reproduce.report import summary_tables, write_report
    from ...pvg.reproduce.reproduce import reproduce
    from ...sweeps.executors import InlineExecutor, check_executor, make_executor

    check_options(device, max_memory_gb)
    if profile not in PROFILES:
        fail(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    tasks = tuple(task) if task else ("bec", "find-the-plus")
    with one_line_errors():
        check_executor(executor, workers, scheduler)
        check_folder(out / "runs", "--out")
        check_readme(readme)
        claim_folder(out, REPORT_OWNER, overwrite=overwrite or resume, own=("runs",))
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
        finish_folder(out, REPORT_OWNER)
    if json_output:
        summary = {
            "report": str(path),
            "seconds": results["seconds"],
            **{t: results[t]["table"] for t in tasks},
        }
        echo_json(summary, indent=2)
        return
    console.print(summary_tables(results))
    console.print(f"report: {path}")


def report_command(
    results: Annotated[Path, typer.Argument(help="results.json written by `pvg reproduce`.")],
    out: Annotated[
        Path | None, typer.Option(help="Report folder (default: the folder of RESULTS).")
    ] = None,
    readme: Annotated[
        Path | None,
        typer.Option(help="Also update the report:pvg block of this file (docs/pvg.md)."),
    ] = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Rewrite the report and figures from saved measurements, without training.

    Nothing is written unless the whole report could be drawn from RESULTS, and RESULTS
    itself is never rewritten.
    """
    from ...pvg.reproduce.report import read_results, write_report

    target = out or results.parent

    def write(data: dict[str, Any], out: Path, readme: Path | None) -> Path:
        return write_report(data, out, readme, source=results)

    with one_line_errors():
        check_folder(target, "--out")
        check_readme(readme)
        data = read_results(results)
        with writing_folder(target, REPORT_OWNER, overwrite=overwrite, mark=False):
            path = draw_report(data, results, target, readme, write)
    console.print(f"report: {path}")
