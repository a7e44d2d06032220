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

import contextlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import language_compare, language_crossplay
from ._common import JsonOption, OverwriteOption, console, err_console, fail, one_line_errors

if TYPE_CHECKING:
    from rich.table import Table

app = typer.Typer(
    no_args_is_help=True,
    help="Debates over step transcripts (natural-language arguments): generated and GSM8K.",
)

Protocol = Annotated[
    str,
    typer.Option(
        help="cross-examination, bisection, whole-transcript, consultancy or judge-alone."
    ),
]
MaxCalls = Annotated[
    int | None,
    typer.Option(
        help="Judge budget for the whole run (at least 1); the run stops when it is spent."
    ),
]
Judge = Annotated[
    str | None,
    typer.Option(
        help="calculator, calculator-grounded, scripted:E, or model:NAME (an Inspect model). "
        "Default: calculator-grounded under bisection, calculator otherwise.",
        show_default=False,
    ),
]
JudgeMinMass = Annotated[
    float | None,
    typer.Option(
        help="Model judge: the least yes/no probability mass, in (0, 1], a reading needs; "
        "below it the judge failed and the run stops.  [default: 0.5]",
        show_default=False,
    ),
]
JudgeMaxTokens = Annotated[
    int | None,
    typer.Option(
        help="Model judge: the cap on output tokens.  [default: 1, or 1024 with --judge-reason]",
        show_default=False,
    ),
]
JudgeReason = Annotated[
    bool | None,
    typer.Option(
        "--judge-reason/--no-judge-reason",
        help="Model judge: let the model reason, then read its last 'Answer: yes|no' line.  "
        "[default: no]",
        show_default=False,
    ),
]
JudgePrompt = Annotated[
    Path | None,
    typer.Option(
        help="Model judge: a prompt template file (UTF-8; fields {task}, {premises}, {step}, "
        "{question}, {instruction}; {step} required).",
        show_default=False,
    ),
]
JudgeLogprobs = Annotated[
    bool | None,
    typer.Option(
        "--judge-logprobs/--no-judge-logprobs",
        help="Model judge: ask for log-probabilities (off: P[yes] from the text).  [default: on]",
        show_default=False,
    ),
]
Isolation = Annotated[
    str,
    typer.Option(help="in-process, or process: every prover in its own OS process (docs/wire.md)"),
]
StepProverA = Annotated[
    str | None,
    typer.Option("--prover-a", help="exec:COMMAND: a program that plays A (docs/wire.md)"),
]
StepProverB = Annotated[
    str | None,
    typer.Option("--prover-b", help="exec:COMMAND: a program that plays B (docs/wire.md)"),
]
MoveTimeout = Annotated[
    float, typer.Option(help="Seconds a prover's move may take (pre-empted; its forfeit).")
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


JudgeTimeout = Annotated[
    float | None,
    typer.Option(
        help="Seconds one judge call may take; a call past it stops that debate as the "
        "judge's failure (counted, in no rate). Default: no limit."
    ),
]


def _check_budget(max_judge_calls: int | None) -> None:
    """A judge budget of nothing measures nothing: refused before any debate."""
    if max_judge_calls is not None and max_judge_calls < 1:
        fail(f"--max-judge-calls must be at least 1 (omit it for no limit), not {max_judge_calls}")


class _JudgeSetup:
    """The judge spec a run uses, and the model judge's options (``None``: not a model)."""

    def __init__(self, spec: str, config: Any) -> None:
        self.spec, self.config = spec, config

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Model judges built inside take these options."""
        if self.config is None:
            yield
            return
        from ..judges.model import use_judge_config

        with use_judge_config(self.config):
            yield


def _judge_setup(
    judge: str | None, protocol: str, min_mass: float | None, max_tokens: int | None,
    reason: bool | None, prompt: Path | None, logprobs: bool | None,
) -> _JudgeSetup:  # fmt: skip
    """The judge spec (the protocol's default when none is given) and its checked options."""
    from ..judges import default_judge

    spec = default_judge(protocol) if judge is None else judge
    given = {
        "--judge-min-mass": min_mass, "--judge-max-tokens": max_tokens,
        "--judge-reason": reason, "--judge-prompt": prompt, "--judge-logprobs": logprobs,
    }  # fmt: skip
    is_model = spec == "model" or spec.startswith("model:")
    if not is_model:
        named = [k for k, v in given.items() if v is not None]
        if named:
            fail(f"{named[0]} applies to a model judge only (--judge model:NAME), not {spec!r}")
        return _JudgeSetup(spec, None)
    if spec == "model" or not spec.partition(":")[2].strip():
        fail(
            "--judge model needs a model name on the command line: model:NAME "
            "(e.g. model:openai/gpt-4o-mini); the judge role is for Inspect tasks"
        )
    with one_line_errors():
        from ..judges import model as mj

        mj.check_min_mass(mj.DEFAULT_MIN_MASS if min_mass is None else min_mass, "--judge-min-mass")
        if max_tokens is not None:
            mj.check_max_tokens(max_tokens, "--judge-max-tokens")
        config = mj.ModelJudgeConfig(
            min_mass=mj.DEFAULT_MIN_MASS if min_mass is None else min_mass,
            max_tokens=max_tokens,
            reason_then_answer=bool(reason),
            prompt=mj.DEFAULT_PROMPT_TEMPLATE if prompt is None else mj.load_prompt(prompt),
            logprobs=True if logprobs is None else logprobs,
        )
    return _JudgeSetup(spec, config)


def _programs(isolation: str, specs: dict[str, str | None]) -> dict[str, list[str]]:
    """The commands of ``--prover-a/-b exec:COMMAND`` (which need ``--isolation process``)."""
    import shlex

    from ..errors import ProofgamesError
    from ..language._sides import check_isolation

    check_isolation(isolation)
    out: dict[str, list[str]] = {}
    for role, spec in specs.items():
        if spec is None:
            continue
        if not spec.startswith("exec:"):
            raise ProofgamesError(f"--prover-{role.lower()} takes exec:COMMAND, not {spec!r}")
        if isolation != "process":
            raise ProofgamesError(f"{spec!r} runs a program: it needs --isolation process")
        command = shlex.split(spec[5:])
        if not command:
            raise ProofgamesError("exec: needs a command, e.g. exec:'python3 my_prover.py'")
        out[role] = command
    return out


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
    judge: Judge = None,
    figure1: Annotated[bool, typer.Option(help="Decide the disputed step by Figure 1.")] = False,
    seed: Seed = 0,
    max_judge_calls: MaxCalls = None,
    judge_timeout: JudgeTimeout = None,
    json: JsonOption = False,
    judge_min_mass: JudgeMinMass = None,
    judge_max_tokens: JudgeMaxTokens = None,
    judge_reason: JudgeReason = None,
    judge_prompt: JudgePrompt = None,
    judge_logprobs: JudgeLogprobs = None,
    isolation: Isolation = "in-process",
    prover_a: StepProverA = None,
    prover_b: StepProverB = None,
    timeout: MoveTimeout = 600.0,
) -> None:
    """The generated ledger task: honest A vs contrarian B, dishonest A vs honest B.

    A program as B (--prover-b exec:COMMAND) meets both A's; a program as A defends its
    own answer once per problem against the honest B (truth: its answer is right).
    With --json: the summary and every debate, as one JSON object.
    """
    import asyncio

    from ..language.costs import JudgeBudget
    from ..language.experiments import check_problems, generated_games

    _check_budget(max_judge_calls)
    setup = _judge_setup(
        judge, protocol, judge_min_mass, judge_max_tokens, judge_reason, judge_prompt,
        judge_logprobs,
    )  # fmt: skip
    with one_line_errors(), setup.active():
        check_problems(n, "--n")
        programs = _programs(isolation, {"A": prover_a, "B": prover_b})
        rows = asyncio.run(
            generated_games(
                steps,
                n,
                seed=seed,
                protocol=protocol,
                judge=setup.spec,
                figure1=figure1,
                budget=JudgeBudget(max_calls=max_judge_calls, call_timeout=judge_timeout),
                isolation=isolation,
                programs=programs,
                timeout=timeout,
            )
        )
    _show(f"{protocol} on the generated task, {steps} steps, judge {setup.spec}", rows, json)


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
    judge: Judge = None,
    max_judge_calls: MaxCalls = None,
    judge_timeout: JudgeTimeout = None,
    json: JsonOption = False,
    judge_min_mass: JudgeMinMass = None,
    judge_max_tokens: JudgeMaxTokens = None,
    judge_reason: JudgeReason = None,
    judge_prompt: JudgePrompt = None,
    judge_logprobs: JudgeLogprobs = None,
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
    setup = _judge_setup(
        judge, protocol, judge_min_mass, judge_max_tokens, judge_reason, judge_prompt,
        judge_logprobs,
    )  # fmt: skip
    with one_line_errors(), setup.active():
        budget = JudgeBudget(max_calls=max_judge_calls, call_timeout=judge_timeout)
        rows = asyncio.run(
            gsm8k_games(path, limit=limit, protocol=protocol, judge=setup.spec, budget=budget)
        )
    source = "the demo problems" if path is None else str(path)
    _show(f"{protocol} on GSM8K ({source}), judge {setup.spec}", rows, json)


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


# The comparison commands live in their own module (this one holds the single runs).
app.command("compare")(language_compare.compare)
app.command("summarize")(language_compare.summarize_logs)
app.command("crossplay")(language_crossplay.crossplay)
app.command("reading")(language_compare.reading)
