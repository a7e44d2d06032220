"""``proofgames params optimize|report``: stochastic-debate parameter sets.

``optimize`` finds the parameter set minimizing V's oracle queries under the Lean
conditions (optionally written as a ``--params`` file); ``report`` regenerates the
parameter report.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["params", "optimize", "--k", "1", "-T", "3", "--json"])
    >>> res.exit_code, '"t": 3' in res.stdout
    (0, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOption, OverwriteOption, console, echo_json, one_line_errors
from .sweeps import ExecutorOption, SchedulerOption, WorkersOption, sweep_bar

if TYPE_CHECKING:
    from rich.table import Table

app = typer.Typer(
    no_args_is_help=True,
    help="Stochastic-debate parameter sets: optimize V's queries, report the trade-offs.",
)


Gap = Annotated[float, typer.Option("--gap", help="w: the claim is P[M=1] >= w (Lean's w)")]
Win = Annotated[float, typer.Option("--win", help="d: the guaranteed win probability (Lean's d)")]
MaxProverSamples = Annotated[
    int, typer.Option(help="cap on A's and on B's oracle samples per round")
]
Tail = Annotated[
    str,
    typer.Option(
        help="hoeffding (machine-checked: the Lean theorem) | exact (Lean's argument with an "
        "exact binomial tail, not machine-checked) | tight (a written proof, "
        "docs/stochastic-tight.md, checked numerically; not machine-checked) | sequential "
        "(the tight tier with a sequential V: a written proof, docs/stochastic-sequential.md, "
        "checked numerically; not machine-checked)"
    ),
]
ProverWeight = Annotated[
    float | None,
    typer.Option(help="minimize V + WEIGHT * T * (A + B samples per round) instead of V alone"),
]


def _table(record: dict[str, Any], tail: str) -> Table:
    """The optimizer's result, what backs it first."""
    from rich.table import Table

    from ..stochastic.tails import TIER_BACKING

    table = Table(
        title=f"optimized parameters at K = {record['k']:g}, T = {record['t']}", show_header=False
    )
    table.add_row("tier", tail)
    table.add_row("backed by", TIER_BACKING[tail])
    for key, value in record.items():
        if key == "conditions":
            held = sum(c["holds"] for c in value)
            table.add_row(key, f"{held} of {len(value)} hold (exact; --json lists them)")
        elif key not in ("tail", "backed_by"):
            table.add_row(key, f"{value:,}" if isinstance(value, int) else str(value))
    return table


@app.command()
def optimize(
    k: Annotated[float, typer.Option("--k", help="the machine's Lipschitz constant K")],
    steps: Annotated[int, typer.Option("--steps", "-T", help="T, the machine's steps")],
    gap: Gap = 2 / 3,
    win: Win = 3 / 5,
    max_prover_samples: MaxProverSamples = 10**8,
    tail: Tail = "hoeffding",
    prover_weight: ProverWeight = None,
    max_v_queries: Annotated[
        int | None,
        typer.Option(
            help="--tail sequential: the cap on V's queries (default 1.5 times the tight "
            "tier's fixed n)"
        ),
    ] = None,
    out: Annotated[
        str | None, typer.Option(help="also write the set as a --params JSON file here")
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """The parameter set minimizing V's oracle queries, labelled for what backs it.

    --tail hoeffding: the Lean conditions (machine-checked theorem); exact: Lean's argument
    with exact tails (not machine-checked); tight: the written argument of
    docs/stochastic-tight.md, every condition checked in exact arithmetic (not
    machine-checked); sequential: the tight tier with V's anytime-valid sequential test
    (docs/stochastic-sequential.md; V's worst case is its cap, expected queries by exact
    dynamic programming).  With --json: one JSON object (the set, its costs, ``backed_by``).
    """
    from ..errors import ProtocolError
    from ..reporting import check_output_file, dumps, write_atomic
    from ..stochastic.optimize import optimize_params
    from ..stochastic.tight import optimize_tight

    if tail == "sequential" or max_v_queries is not None:
        _sequential(k, steps, gap, win, max_prover_samples, tail, max_v_queries, out, prover_weight,
                    as_json)  # fmt: skip
        return
    with one_line_errors(also=(OSError,)):
        if out is not None and tail == "tight":
            raise ProtocolError(
                "--out is not available with --tail tight (its constants are not Lean's "
                "c, s, b, q, v); use --params optimized-tight"
            )
        if out is not None:
            check_output_file(out, overwrite=overwrite)
        if tail == "tight":
            if prover_weight is not None:
                raise ProtocolError("--prover-weight is not available with --tail tight")
            result = optimize_tight(k, steps, w=gap, d=win, max_prover_samples=max_prover_samples)
        else:
            result = optimize_params(
                k, steps, w=gap, d=win, max_prover_samples=max_prover_samples, tail=tail,
                prover_weight=prover_weight,
            )  # fmt: skip
        if out is not None:
            write_atomic(Path(out), dumps(result.params_file(), indent=1) + "\n")
    record = result.to_dict()
    if as_json:
        echo_json(record)
        return
    console.print(_table(record, tail))
    if out is not None:
        console.print(f"wrote {out} (use it as --params {out})")


def _sequential(
    k: float, steps: int, gap: float, win: float, cap: int, tail: str, max_v: int | None,
    out: str | None, weight: float | None, as_json: bool,
) -> None:  # fmt: skip
    """``optimize --tail sequential``: refuse what it cannot do, then print the set."""
    from ..errors import ProtocolError
    from ..stochastic.seq_tier import optimize_sequential

    with one_line_errors():
        if tail != "sequential":
            raise ProtocolError("--max-v-queries needs --tail sequential")
        if out is not None or weight is not None:
            raise ProtocolError(
                "--out and --prover-weight are not available with --tail sequential"
            )
        result = optimize_sequential(
            k, steps, w=gap, d=win, max_prover_samples=cap, max_v_queries=max_v
        )
    record = result.to_dict()
    if as_json:
        echo_json(record)
        return
    from rich.table import Table

    table = Table(title=f"sequential tier at K = {k:g}, T = {steps}", show_header=False)
    table.add_row("backed by", record["backed_by"])
    for key in ("v_worst_case", "tight_v_samples", "wald_floor_half"):
        table.add_row(key, f"{record[key]:,.0f}")
    for key in ("expected_honest_half", "expected_honest_worst_on_grid",
                "expected_liar_worst_on_grid"):  # fmt: skip
        o = record[key]
        table.add_row(key, f"{o['expected_queries']:,.1f} (a = {o['a']:g}, x = {o['x']:g})")
    table.add_row("conditions", record["certified_by"])
    table.add_row("figures", record["figures"])
    console.print(table)


@app.command("report")
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
    workers: WorkersOption = 1,
    scheduler: SchedulerOption = None,
    overwrite: OverwriteOption = False,
    section: Annotated[
        str | None,
        typer.Option(
            help="regenerate only this section: 'adversaries' (section 7, V under the exact "
            "optimal adversaries and the floor; adversaries.md and adversaries.json)"
        ),
    ] = None,
) -> None:
    """Regenerate the parameter report: V's queries for four sets, measured guarantees."""
    from ..experiments.params_report import check_params_report_args, write_params_report
    from ..reporting import writing_folder
    from ..sweeps.executors import check_executor, make_executor

    with one_line_errors():
        check_executor(executor, workers, scheduler)
        check_params_report_args(Path(out), debates, seed, Path(readme) if readme else None)
        if section is not None:
            _report_section(section, out, debates, seed, readme, overwrite)
            return
        with (
            writing_folder(out, "proofgames params report", overwrite=overwrite),
            make_executor(executor, workers, scheduler) as pool,
            sweep_bar("optimizations", None, pool) as bar,
        ):
            path = write_params_report(
                Path(out), debates=debates, seed=seed,
                readme=Path(readme) if readme else None, executor=pool, progress=bar.stage,
            )  # fmt: skip
    console.print(f"wrote {path}")


def _report_section(
    section: str, out: str, debates: int, seed: int, readme: str | None, overwrite: bool
) -> None:
    """``params report --section``: one section, written beside the report's other files."""
    from ..errors import ProofgamesError
    from ..experiments.params_adversaries import write_adversaries_section
    from ..reporting import writing_folder

    if section != "adversaries":
        raise ProofgamesError(f"unknown section {section!r}: the one section is 'adversaries'")
    if readme is not None:
        raise ProofgamesError("--readme needs the whole report (its summary line); drop --section")
    with writing_folder(out, "proofgames params report", overwrite=overwrite):
        path = write_adversaries_section(Path(out), debates=debates, seed=seed)
    console.print(f"wrote {path}")
