"""``proofgames language generated|gsm8k|report``: debates over step transcripts.

The transcripts are natural-language arguments (a generated ledger task, or GSM8K model
solutions) judged one disputed step at a time; the experiments and the judges' packages
are imported inside the commands.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["language", "generated", "--n", "0"])
    >>> res.exit_code, "--n must be an int in [1, 100,000]" in res.output
    (2, True)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOption, OverwriteOption, console, err_console, fail, one_line_errors

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
    typer.Option(
        help="Judge budget for the whole run (at least 1); the run stops when it is spent."
    ),
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
        if isinstance(value, float) and math.isnan(value):
            table.add_row(key, "none (no finished debate of this kind)")
            continue
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        table.add_row(key, text + (f"  (95% CI {ci[0]:.3f}-{ci[1]:.3f}, measured)" if ci else ""))
    for key in ("judge_calls", "judge_input_tokens", "prover_tokens"):
        table.add_row(f"{key} (mean per debate)", f"{summary[key]:,.1f}")
    table.add_row("stopped (debates in no rate)", str(summary["stopped"]))
    return table


def _check_budget(max_judge_calls: int | None) -> None:
    """A judge budget of nothing measures nothing: refused before any debate."""
    if max_judge_calls is not None and max_judge_calls < 1:
        fail(f"--max-judge-calls must be at least 1 (omit it for no limit), not {max_judge_calls}")


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
    from ..language.experiments import check_problems, generated_games

    _check_budget(max_judge_calls)
    with one_line_errors():
        check_problems(n, "--n")
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
    path: Annotated[
        Path | None,
        typer.Argument(
            help="GSM8K test.jsonl (problems) or example_model_solutions.jsonl, or their "
            "folder; omit for the demo problems shipped with proofgames.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="Questions to read (at least 1).")] = 50,
    protocol: Protocol = "cross-examination",
    judge: Judge = "calculator",
    max_judge_calls: MaxCalls = None,
    json: JsonOption = False,
) -> None:
    """GSM8K solutions: A defends each, B disputes the first step the calculator rejects.

    Model solutions are judged against their is_correct labels; problems give their
    reference solution (correct) and the same with a slip planted in the last step
    (wrong).  With --json: the summary and every debate, as one JSON object.
    """
    import asyncio

    from ..language.costs import JudgeBudget
    from ..language.experiments import gsm8k_games

    if limit < 1:
        fail(f"--limit must be at least 1, not {limit}")
    _check_budget(max_judge_calls)
    with one_line_errors():
        budget = JudgeBudget(max_calls=max_judge_calls)
        rows = asyncio.run(
            gsm8k_games(path, limit=limit, protocol=protocol, judge=judge, budget=budget)
        )
    source = "the demo problems" if path is None else str(path)
    _show(f"{protocol} on GSM8K ({source}), judge {judge}", rows, json)


@app.command("report")
def report(
    out: ReportFolder = Path("reports/language"),
    gsm8k: Annotated[
        Path | None, typer.Option(help="GSM8K model solutions (file or folder); omit to skip.")
    ] = None,
    n: Annotated[int, typer.Option(help="Problems per point (each debated twice).")] = 100,
    figure1_n: Annotated[int, typer.Option(help="Problems per Figure 1 point.")] = 40,
    seed: Seed = 0,
    overwrite: OverwriteOption = False,
) -> None:
    """Run the language report's experiments; write results, tables and figures."""
    from ..language.experiments import check_problems
    from ..language.report import build_report
    from ..reporting import writing_folder

    with one_line_errors():
        check_problems(n, "--n")
        check_problems(figure1_n, "--figure1-n")
    inputs = [gsm8k] if gsm8k is not None else []
    with (
        one_line_errors(),
        writing_folder(out, "proofgames language report", overwrite=overwrite, inputs=inputs),
    ):
        build_report(out, gsm8k, n=n, seed=seed, figure1_n=figure1_n)
    console.print(f"wrote {out}/results.json, tables.md and figures")
