"""Command-line pieces of transcript debates: ``proofgames language generated|gsm8k``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ._jsonout import dumps
from .errors import ProofgamesError

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


def _table(title: str, summary: dict[str, Any]) -> Table:
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


def register(app: typer.Typer, console: Console, fail: Callable[[str], None]) -> None:
    """Add the ``language`` command group (``generated``, ``gsm8k``, ``report``) to the CLI."""
    lang = typer.Typer(
        no_args_is_help=True,
        help="Debates over step transcripts (natural-language arguments): generated and GSM8K.",
    )
    app.add_typer(lang, name="language")

    def show(title: str, rows: list[dict[str, Any]], as_json: bool) -> None:
        from .language.experiments import summarize

        summary = summarize(rows)
        if rows and rows[-1]["accepted"] is None:
            fail_line = f"the run stopped after {len(rows)} debates: {rows[-1]['reason']}"
            Console(stderr=True).print(f"[bold yellow]warning:[/] {fail_line}")
        if as_json:
            console.print_json(dumps({"summary": summary, "debates": rows}))
        else:
            console.print(_table(title, summary))

    _add_generated(lang, show, fail)
    _add_gsm8k(lang, show, fail)
    _add_report(lang, console, fail)


Show = Callable[[str, list[dict[str, Any]], bool], None]


def _add_generated(lang: typer.Typer, show: Show, fail: Callable[[str], None]) -> None:
    @lang.command("generated")
    def generated(
        steps: Annotated[int, typer.Option(help="Steps per transcript (2 to 5000).")] = 100,
        n: Annotated[int, typer.Option(help="Problems (each debated twice).")] = 20,
        protocol: Protocol = "cross-examination",
        judge: Judge = "calculator",
        figure1: Annotated[
            bool, typer.Option(help="Decide the disputed step by Figure 1.")
        ] = False,
        seed: Annotated[
            int, typer.Option(min=0, help="Seed of every random choice (non-negative).")
        ] = 0,
        max_judge_calls: MaxCalls = None,
        json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """The generated ledger task: honest A vs contrarian B, dishonest A vs honest B."""
        from .language.costs import JudgeBudget
        from .language.experiments import generated_games

        if n < 1:
            fail(f"--n must be at least 1, not {n}")
        try:
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
        except ProofgamesError as exc:
            fail(str(exc))
            return
        show(f"{protocol} on the generated task, {steps} steps, judge {judge}", rows, json)


def _add_gsm8k(lang: typer.Typer, show: Show, fail: Callable[[str], None]) -> None:
    @lang.command("gsm8k")
    def gsm8k(
        path: Annotated[Path, typer.Argument(help="example_model_solutions.jsonl or its folder.")],
        limit: Annotated[int, typer.Option(help="Questions to read (4 solutions each).")] = 50,
        protocol: Protocol = "cross-examination",
        judge: Judge = "calculator",
        max_judge_calls: MaxCalls = None,
        json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """GSM8K model solutions: A defends each, B disputes the first failing step."""
        from .language.costs import JudgeBudget
        from .language.experiments import gsm8k_games

        try:
            budget = JudgeBudget(max_calls=max_judge_calls)
            rows = asyncio.run(
                gsm8k_games(path, limit=limit, protocol=protocol, judge=judge, budget=budget)
            )
        except ProofgamesError as exc:
            fail(str(exc))
            return
        show(f"{protocol} on GSM8K model solutions, judge {judge}", rows, json)


def _add_report(lang: typer.Typer, console: Console, fail: Callable[[str], None]) -> None:
    @lang.command("report")
    def report(
        out: Annotated[
            Path, typer.Option(help="Folder for results.json, tables.md, figures.")
        ] = Path("reports/language"),
        gsm8k: Annotated[
            Path | None, typer.Option(help="GSM8K model solutions (file or folder); omit to skip.")
        ] = None,
        n: Annotated[int, typer.Option(help="Problems per point (each debated twice).")] = 100,
        figure1_n: Annotated[int, typer.Option(help="Problems per Figure 1 point.")] = 40,
        seed: Annotated[
            int, typer.Option(min=0, help="Seed of every random choice (non-negative).")
        ] = 0,
    ) -> None:
        """Run the language report's experiments; write results, tables and figures."""
        from .language.report import build_report

        if n < 1 or figure1_n < 1:
            fail("--n and --figure1-n must be at least 1")
        try:
            build_report(out, gsm8k, n=n, seed=seed, figure1_n=figure1_n)
        except ProofgamesError as exc:
            fail(str(exc))
            return
        console.print(f"wrote {out}/results.json, tables.md and figures")
