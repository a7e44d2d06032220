"""``proofgames language generated|gsm8k|report``: debates over step transcripts.

The transcripts are natural-language arguments (a generated ledger task, or GSM8K model
solutions) judged one disputed step at a time; the experiments and the judges' packages
are imported inside the commands.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["language", "generated", "--n", "0"])
    >>> res.exit_code, "--n must be at least 1" in res.output
    (2, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOption, console, err_console, fail, one_line_errors

if TYPE_CHECKING:
    from rich.table import Table

app = typer.Typer(
    no_args_is_help=True,
    help="Debates over step transcripts (natural-language arguments): generated and GSM8K.",
)

Protocol = Annotated[
    str,
    typer.Option(help="cross-examination, bisection, whole-transcript or consultancy."),
]
MaxCalls = Annotated[
    int | None,
    typer.Option(help="Judge budget for the whole run; the run stops when it is spent."),
]
Judge = Annotated[
    str,
    typer.Option(
        help="calculator, calculator-grounded, scripted:E, or model:NAME (an Inspect model)."
    ),
]
ReportFolder = Annotated[Path, typer.Option(help="Folder for results.json, tables.md, figures.")]
Seed = Annotated[int, typer.Option(min=0, help="Seed of every random choice (non-negative).")]


def _table(title: str, summary: dict[str, Any]) -> Table:
    """The summary of a run of debates: rates with their intervals, then mean costs."""
    from rich.table import Table

    table = Table(title=title, show_header=False)
    for key in ("debates", "accuracy", "completeness", "soundness_error"):
        value = summary[key]
        ci = summary.get(f"{key}_ci")
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        table.add_row(key, text + (f"  (95% CI {ci[0]:.3f}-{ci[1]:.3f}, measured)" if ci else ""))
    for key in ("judge_calls", "judge_input_tokens", "prover_tokens", "stopped"):
        table.add_row(
            f"{key} (mean per debate)" if key != "stopped" else key, f"{summary[key]:,.1f}"
        )
    return table


def _show(title: str, rows: list[dict[str, Any]], as_json: bool) -> None:
    """Print a run's summary (and, with ``--json``, every debate); warn if it stopped early."""
    from ..language.experiments import summarize
    from ..reporting.json import dumps

    summary = summarize(rows)
    if rows and rows[-1]["accepted"] is None:
        fail_line = f"the run stopped after {len(rows)} debates: {rows[-1]['reason']}"
        err_console.print(f"[bold yellow]warning:[/] {fail_line}")
    if as_json:
        console.print_json(dumps({"summary": summary, "debates": rows}))
    else:
        console.print(_table(title, summary))


@app.command("generated")
def generated(
    steps: Annotated[int, typer.Option(help="Steps per transcript (2 to 5000).")] = 100,
    n: Annotated[int, typer.Option(help="Problems (each debated twice).")] = 20,
    protocol: Protocol = "cross-examination",
    judge: Judge = "calculator",
    figure1: Annotated[bool, typer.Option(help="Decide the disputed step by Figure 1.")] = False,
    seed: Seed = 0,
    max_judge_calls: MaxCalls = None,
    json: JsonOption = False,
) -> None:
    """The generated ledger task: honest A vs contrarian B, dishonest A vs honest B.

    With --json: the summary and every debate, as one JSON object.
    """
    import asyncio

    from ..language.costs import JudgeBudget
    from ..language.experiments import generated_games

    if n < 1:
        fail(f"--n must be at least 1, not {n}")
    with one_line_errors():
        rows = asyncio.run(
            generated_games(
                steps,
                n,
                seed=seed,
                protocol=protocol,
                judge=judge,
                figure1=figure1,
                budget=JudgeBudget(max_calls=max_judge_calls),
            )
        )
    _show(f"{protocol} on the generated task, {steps} steps, judge {judge}", rows, json)


@app.command("gsm8k")
def gsm8k(
    path: Annotated[Path, typer.Argument(help="example_model_solutions.jsonl or its folder.")],
    limit: Annotated[int, typer.Option(help="Questions to read (4 solutions each).")] = 50,
    protocol: Protocol = "cross-examination",
    judge: Judge = "calculator",
    max_judge_calls: MaxCalls = None,
    json: JsonOption = False,
) -> None:
    """GSM8K model solutions: A defends each, B disputes the first failing step.

    With --json: the summary and every debate, as one JSON object.
    """
    import asyncio

    from ..language.costs import JudgeBudget
    from ..language.experiments import gsm8k_games

    with one_line_errors():
        budget = JudgeBudget(max_calls=max_judge_calls)
        rows = asyncio.run(
            gsm8k_games(path, limit=limit, protocol=protocol, judge=judge, budget=budget)
        )
    _show(f"{protocol} on GSM8K model solutions, judge {judge}", rows, json)


@app.command("report")
def report(
    out: ReportFolder = Path("reports/language"),
    gsm8k: Annotated[
        Path | None, typer.Option(help="GSM8K model solutions (file or folder); omit to skip.")
    ] = None,
    n: Annotated[int, typer.Option(help="Problems per point (each debated twice).")] = 100,
    figure1_n: Annotated[int, typer.Option(help="Problems per Figure 1 point.")] = 40,
    seed: Seed = 0,
) -> None:
    """Run the language report's experiments; write results, tables and figures."""
    from ..language.report import build_report

    if n < 1 or figure1_n < 1:
        fail("--n and --figure1-n must be at least 1")
    with one_line_errors():
        build_report(out, gsm8k, n=n, seed=seed, figure1_n=figure1_n)
    console.print(f"wrote {out}/results.json, tables.md and figures")
