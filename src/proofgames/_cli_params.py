"""Command-line pieces of stochastic-debate parameters: ``proofgames params optimize|report``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ._cli_executors import ExecutorOption, SchedulerOption, sweep_bar
from ._jsonout import dumps
from .errors import ProofgamesError

TIER_LABELS = {
    "hoeffding": "Hoeffding counts: covered by the Lean theorem (machine-checked)",
    "exact": "exact binomial tail, not machine-checked",
}


def _table(record: dict[str, Any], tail: str) -> Table:
    """The optimizer's result, its tier's label first."""
    table = Table(
        title=f"optimized parameters at K = {record['k']:g}, T = {record['t']}", show_header=False
    )
    table.add_row("tier", TIER_LABELS[tail])
    for key, value in record.items():
        if key != "tail":
            table.add_row(key, f"{value:,}" if isinstance(value, int) else str(value))
    return table


def register(app: typer.Typer, console: Console, fail: Callable[[str], None]) -> None:
    """Add the ``params`` command group (``optimize``, ``report``) to the CLI."""
    params_app = typer.Typer(
        no_args_is_help=True,
        help="Stochastic-debate parameter sets: optimize V's queries, report the trade-offs.",
    )
    app.add_typer(params_app, name="params")

    @params_app.command()
    def optimize(
        k: Annotated[float, typer.Option("--k", help="the machine's Lipschitz constant K")],
        steps: Annotated[int, typer.Option("--steps", "-T", help="T, the machine's steps")],
        gap: Annotated[
            float, typer.Option("--gap", help="w: the claim is P[M=1] >= w (Lean's w)")
        ] = 2 / 3,
        win: Annotated[
            float,
            typer.Option("--win", help="d: the guaranteed win probability (Lean's d)"),
        ] = 3 / 5,
        max_prover_samples: Annotated[
            int,
            typer.Option(help="cap on A's and on B's oracle samples per round"),
        ] = 10**8,
        tail: Annotated[
            str,
            typer.Option(
                help="hoeffding (machine-checked counts) | exact (exact binomial tail, "
                "not machine-checked)"
            ),
        ] = "hoeffding",
        prover_weight: Annotated[
            float | None,
            typer.Option(
                help="minimize V + WEIGHT * T * (A + B samples per round) instead of V alone"
            ),
        ] = None,
        out: Annotated[
            str | None,
            typer.Option(help="also write the set as a --params JSON file here"),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    ) -> None:
        """The parameter set minimizing V's oracle queries under the Lean conditions."""
        from pathlib import Path

        from ._readme import write_atomic
        from .stochastic.optimize import optimize_params

        try:
            result = optimize_params(
                k, steps, w=gap, d=win, max_prover_samples=max_prover_samples, tail=tail,
                prover_weight=prover_weight,
            )  # fmt: skip
            if out is not None:
                write_atomic(Path(out), dumps(result.params_file(), indent=1) + "\n")
        except (ProofgamesError, OSError) as exc:
            fail(str(exc))
            return
        record = result.to_dict()
        if as_json:
            print(dumps(record))
            return
        console.print(_table(record, tail))
        if out is not None:
            console.print(f"wrote {out} (use it as --params {out})")

    @params_app.command("report")
    def params_report(
        out: Annotated[str, typer.Option(help="directory for report.md and figures")] = (
            "reports/params"
        ),
        debates: Annotated[int, typer.Option(help="Monte Carlo debates per measured row")] = 20_000,
        seed: Annotated[
            int, typer.Option(min=0, help="root seed of every random choice (non-negative)")
        ] = 0,
        readme: Annotated[
            str | None,
            typer.Option(help="also put the summary line in this README's report:params block"),
        ] = None,
        executor: ExecutorOption = "local",
        workers: Annotated[int, typer.Option(min=1, help="worker processes")] = 1,
        scheduler: SchedulerOption = None,
    ) -> None:
        """Regenerate the parameter report: V's queries for four sets, measured guarantees."""
        from pathlib import Path

        from .executors import check_executor, make_executor
        from .stochastic.params_report import write_params_report

        try:
            check_executor(executor, workers, scheduler)
            with (
                make_executor(executor, workers, scheduler) as pool,
                sweep_bar("optimizations", None, pool) as bar,
            ):
                path = write_params_report(
                    Path(out), debates=debates, seed=seed,
                    readme=Path(readme) if readme else None, executor=pool, progress=bar.stage,
                )  # fmt: skip
        except ProofgamesError as exc:
            fail(str(exc))
            return
        console.print(f"wrote {path}")
