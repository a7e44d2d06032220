"""``proofgames estimate`` (Monte Carlo acceptance) and ``proofgames report`` (the report).

Both fan out over ``--workers`` processes or a Dask cluster (``--executor dask``), show
one bar on a terminal's stderr, and continue from a ``--store`` when run again.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["estimate", "--debates", "0"])
    >>> res.exit_code, "--debates must be positive" in res.output
    (2, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOption, OverwriteOption, console, echo_json, fail, one_line_errors
from .sweeps import ExecutorOption, SchedulerOption, WorkersOption, sweep_bar

if TYPE_CHECKING:
    from rich.table import Table

    from ..experiments.montecarlo import Estimate

Seed = Annotated[int, typer.Option(min=0, help="root seed of every random choice (non-negative)")]
Machine = Annotated[
    str,
    typer.Option("--machine", "-m", help="stochastic machine spec, e.g. majority:n=5,p=0.7"),
]
Params = Annotated[
    str,
    typer.Option(
        help="paper | lean | optimized | optimized-exact | FILE.json; add ':strict' "
        "(e.g. lean:strict) to check "
        "steps whose probability is known exactly"
    ),
]
Claim = Annotated[int, typer.Option(help="1: P[M=1] >= 2/3; 0: P[M=1] <= 1/3")]
ProverA = Annotated[str, typer.Option("--prover-a", help="A's stochastic strategy[:k=v,...]")]
ProverB = Annotated[str, typer.Option("--prover-b", help="B's stochastic strategy[:k=v,...]")]
Chunk = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="debates per work item (default: sized to the machine); the numbers "
        "depend on it, not on the executor or its workers",
    ),
]
EstimateStore = Annotated[
    str | None,
    typer.Option(
        help="JSON-lines file keeping every finished chunk; the same estimate run "
        "again continues from it"
    ),
]
MaxSteps = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="refuse a machine of more steps than this, before building it (default 100,000)",
    ),
]
ReportStore = Annotated[
    str | None,
    typer.Option(
        help="folder keeping every measured chunk; the report run again with the "
        "same arguments continues from it"
    ),
]


def report(
    out: Annotated[
        str, typer.Option(help="directory for report.md and figures")
    ] = "reports/stochastic",
    debates: Annotated[int, typer.Option(help="debates per table cell")] = 20_000,
    seed: Seed = 0,
    readme: Annotated[
        str | None,
        typer.Option(help="also put the summary table in this README's report:stochastic block"),
    ] = None,
    executor: ExecutorOption = "local",
    workers: WorkersOption = 1,
    scheduler: SchedulerOption = None,
    store: ReportStore = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Regenerate the stochastic-debate report (tables and figures) from measurements."""
    from ..experiments.stochastic_report import check_report_args, measurer, write_report
    from ..reporting import writing_folder
    from ..sweeps.executors import check_executor, make_executor

    if debates <= 0:
        fail(f"--debates must be positive, got {debates}")
    with one_line_errors():
        check_executor(executor, workers, scheduler)
        check_report_args(Path(out), debates, seed, Path(readme) if readme else None)
        with (
            writing_folder(out, "proofgames report", overwrite=overwrite),
            make_executor(executor, workers, scheduler) as pool,
            sweep_bar("debates", 0, pool) as bar,
        ):
            measure = measurer(pool, Path(store) if store else None, bar.advance, bar.grow)
            path = write_report(
                Path(out), debates=debates, seed=seed,
                readme=Path(readme) if readme else None, measure=measure,
            )  # fmt: skip
    console.print(f"wrote {path}")


def estimate(
    machine: Machine = "single-query:p=0.8",
    params: Params = "lean",
    claim: Claim = 1,
    prover_a: ProverA = "honest",
    prover_b: ProverB = "honest",
    debates: Annotated[int, typer.Option(help="number of debates")] = 10_000,
    seed: Seed = 0,
    workers: WorkersOption = 1,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    chunk: Chunk = None,
    store: EstimateStore = None,
    max_steps: MaxSteps = None,
    as_json: JsonOption = False,
) -> None:
    """Estimate P[V accepts A's claim] over many debates run in lockstep.

    With --json: one JSON object (the estimate, its interval and the queries per party).
    """
    from ..experiments.montecarlo import Cell, check_cells, estimate_acceptance
    from ..sweeps.executors import check_executor, make_executor

    if claim not in (0, 1):
        fail(f"--claim must be 0 or 1, got {claim}")
    if debates <= 0:
        fail(f"--debates must be positive, got {debates}")
    with one_line_errors():
        check_executor(executor, workers, scheduler)
        if executor != "local":  # refused before a cluster starts
            check_cells([Cell(machine, params, claim, prover_a, prover_b)], debates=debates,
                        seed=seed, chunk=chunk, max_steps=max_steps)  # fmt: skip
        with (
            make_executor(executor, workers, scheduler) as pool,
            sweep_bar("debates", debates, pool) as bar,  # stderr: with --json too
        ):
            est = estimate_acceptance(
                machine, params, claim, prover_a, prover_b, debates=debates, seed=seed,
                workers=workers, progress=bar.advance, chunk=chunk, max_steps=max_steps,
                executor=pool, store=Path(store) if store else None,
            )  # fmt: skip
    record: dict[str, Any] = est.to_dict()
    record["queries_max"] = {p: q["max"] for p, q in est.queries.items()}
    record["queries"] = {p: q["mean"] for p, q in est.queries.items()}
    if as_json:
        echo_json(record)
    else:
        console.print(_estimate_table(est, record))


ESTIMATE_ROWS = (
    "claim",
    "prover_a",
    "prover_b",
    "debates",
    "acceptance",
    "ci_low",
    "ci_high",
    "p_accept",
    "proven",
    "k_definition",
    "hypothesis",
    "formula_bound",
    "forfeited",
    "abort_rate",
    "queries",
    "queries_max",
    "seconds",
)
"""The rows of ``proofgames estimate``'s table, in order (then one row per forfeit)."""


def _estimate_table(est: Estimate, record: dict[str, Any]) -> Table:
    """``proofgames estimate``'s table of one estimate (``record``: its JSON form)."""
    from rich.table import Table

    table = Table(
        title=f"P[V accepts] on {est.machine}, {est.params['name']} parameters",
        show_header=False,
    )
    for key in ESTIMATE_ROWS:
        table.add_row(key, str(record[key]))
    for f in est.forfeits:
        table.add_row("forfeit", f"{f['party']}: {f['reason']} ({f['debates']} debates)")
    return table
