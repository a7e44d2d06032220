"""Command-line pieces of the stochastic protocol: one debate and Monte Carlo estimates."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ._errors import ProofgamesError
from ._jsonout import dumps


def register(app: typer.Typer, console: Console, fail: Callable[[str], None]) -> None:
    """Add the ``estimate`` and ``report`` commands to the CLI."""

    @app.command()
    def report(
        out: Annotated[
            str, typer.Option(help="directory for report.md and figures")
        ] = "reports/stochastic",
        debates: Annotated[int, typer.Option(help="debates per table cell")] = 20_000,
        seed: Annotated[
            int, typer.Option(min=0, help="root seed of every random choice (non-negative)")
        ] = 0,
        readme: Annotated[
            str | None,
            typer.Option(
                help="also put the summary table in this README's report:stochastic block"
            ),
        ] = None,
    ) -> None:
        """Regenerate the stochastic-debate report (tables and figures) from measurements."""
        from pathlib import Path

        from .stochastic.report import write_report

        if debates <= 0:
            fail(f"--debates must be positive, got {debates}")
        err = Console(stderr=True)
        try:
            with (
                err.status(f"measuring the stochastic report ({debates:,} debates a cell)")
                if err.is_terminal
                else nullcontext()
            ):
                path = write_report(
                    Path(out), debates=debates, seed=seed, readme=Path(readme) if readme else None
                )
        except ProofgamesError as exc:
            fail(str(exc))
            return
        console.print(f"wrote {path}")

    @app.command()
    def estimate(
        machine: Annotated[
            str,
            typer.Option(
                "--machine", "-m", help="stochastic machine spec, e.g. majority:n=5,p=0.7"
            ),
        ] = "single-query:p=0.8",
        params: Annotated[
            str,
            typer.Option(
                help="paper | lean | optimized | optimized-exact | FILE.json; add ':strict' "
                "(e.g. lean:strict) to check "
                "steps whose probability is known exactly"
            ),
        ] = "lean",
        claim: Annotated[int, typer.Option(help="1: P[M=1] >= 2/3; 0: P[M=1] <= 1/3")] = 1,
        prover_a: Annotated[
            str, typer.Option("--prover-a", help="A's stochastic strategy[:k=v,...]")
        ] = "honest",
        prover_b: Annotated[
            str, typer.Option("--prover-b", help="B's stochastic strategy[:k=v,...]")
        ] = "honest",
        debates: Annotated[int, typer.Option(help="number of debates")] = 10_000,
        seed: Annotated[
            int, typer.Option(min=0, help="root seed of every random choice (non-negative)")
        ] = 0,
        workers: Annotated[int, typer.Option(min=1, help="worker processes")] = 1,
        max_steps: Annotated[
            int | None,
            typer.Option(
                min=1,
                help="refuse a machine of more steps than this, before building it "
                "(default 100,000)",
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    ) -> None:
        """Estimate P[V accepts A's claim] over many debates run in lockstep."""
        from .stochastic.montecarlo import estimate_acceptance

        if claim not in (0, 1):
            fail(f"--claim must be 0 or 1, got {claim}")
        if debates <= 0:
            fail(f"--debates must be positive, got {debates}")
        err = Console(stderr=True)
        try:
            with Progress(
                TextColumn("[bold]debates"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
                disable=not err.is_terminal,  # stderr: shown with --json too, never piped
            ) as bar:
                task = bar.add_task("debates", total=debates)
                est = estimate_acceptance(
                    machine,
                    params,
                    claim,
                    prover_a,
                    prover_b,
                    debates=debates,
                    seed=seed,
                    workers=workers,
                    progress=lambda n: bar.advance(task, n),
                    max_steps=max_steps,
                )
        except ProofgamesError as exc:
            fail(str(exc))
            return
        record: dict[str, Any] = est.to_dict()
        record["queries_max"] = {p: q["max"] for p, q in est.queries.items()}
        record["queries"] = {p: q["mean"] for p, q in est.queries.items()}
        if as_json:
            print(dumps(record))
            return
        table = Table(
            title=f"P[V accepts] on {est.machine}, {est.params['name']} parameters",
            show_header=False,
        )
        for k in (
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
        ):
            table.add_row(k, str(record[k]))
        for f in est.forfeits:
            table.add_row("forfeit", f"{f['party']}: {f['reason']} ({f['debates']} debates)")
        console.print(table)
