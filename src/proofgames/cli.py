"""The ``proofgames`` command line: run debates, list strategies and examples, run the demo."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.exceptions import TyperException

from ._cli_executors import ExecutorOption, SchedulerOption, sweep_bar
from ._cli_judge import register as register_judge
from ._cli_language import register as register_language
from ._cli_params import register as register_params
from ._cli_stochastic import register as register_stochastic
from ._jsonout import dumps
from .errors import ProofgamesError
from .machines.examples import example_names, get_example
from .protocols import Outcome, get_protocol, protocol_names
from .strategies import strategy_description, strategy_names

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Interactive-proof games for AI oversight: doubly-efficient debate on real computations.",
)
# Tables are wide: give non-terminal output (logs, pipes) room instead of rich's 80 columns.
console = Console() if sys.stdout.isatty() else Console(width=120)
err_console = Console(stderr=True, soft_wrap=True)  # one line per message, even piped

PROTOCOLS = tuple(protocol_names())


def _fail(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr fed with simulated steps, when stderr is a terminal.

    ``--json`` output goes to stdout, so the bar shows with it too (and never in a pipe
    or a log file).
    """
    if not err_console.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} steps"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)
        yield lambda n: bar.advance(task, n)


def outcome_table(out: Outcome, truth: int | None) -> Table:
    """A rich summary of one debate."""
    c = out.costs
    table = Table(title=f"{out.protocol} debate on {out.machine}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("claim (A asserts output =)", str(out.claim)),
        ("true output", "?" if truth is None else str(truth)),
        ("prover A", out.prover_a.label),
        ("prover B", out.prover_b.label),
        ("verdict", f"{out.verdict} ({'accepts' if out.verdict else 'rejects'} A's claim)"),
        ("winner", out.winner),
        ("reason", out.reason),
        ("computation steps T", f"{out.steps:,}"),
        ("rounds", str(c.rounds)),
        ("verifier read", f"{c.verifier_reads} {c.verifier_read_unit} ({c.verifier_bits:,} bits)"),
        ("verifier steps / oracle queries", f"{c.verifier_steps} / {c.verifier_queries}"),
        ("prover steps A / B", f"{c.prover_steps['A']:,} / {c.prover_steps['B']:,}"),
        ("prover oracle queries A / B", f"{c.prover_queries['A']} / {c.prover_queries['B']}"),
        ("B's reads of A's messages", f"{c.prover_reads['B']:,}"),
        ("wall time", f"{c.seconds:.3f} s"),
    ]
    for k, v in rows:
        table.add_row(k, v)
    return table


def _program(spec: str | None, isolation: str) -> str | list[str] | None:
    """``exec:COMMAND`` names a program to run as the prover (process isolation only)."""
    if spec is None or not spec.startswith("exec:"):
        return spec
    if isolation != "process":
        raise ProofgamesError(f"{spec!r} runs a program: it needs --isolation process")
    command = shlex.split(spec[5:])
    if not command:
        raise ProofgamesError("exec: needs a command, e.g. exec:'python3 my_prover.py'")
    return command


@app.command()
def debate(
    protocol: Annotated[
        str,
        typer.Argument(
            help="cross-examination | bisection | witness | stochastic | stochastic-witness"
        ),
    ],
    machine: Annotated[
        str | None,
        typer.Option(
            "--machine",
            "-m",
            help="tm:<text> or an example name (default bb5); witness: a SAT example or "
            "sat:<file.cnf>; stochastic: a stochastic machine spec",
        ),
    ] = None,
    steps: Annotated[
        int | None, typer.Option("--steps", "-T", help="T (default: the example's)")
    ] = None,
    claim: Annotated[int | None, typer.Option(help="what A asserts (default: the truth)")] = None,
    prover_a: Annotated[
        str | None,
        typer.Option("--prover-a", help="strategy[:k=v,...], or exec:COMMAND (with process)"),
    ] = None,
    prover_b: Annotated[
        str | None,
        typer.Option("--prover-b", help="strategy[:k=v,...], or exec:COMMAND (with process)"),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, help="root seed of every random choice (a non-negative integer)")
    ] = 0,
    params: Annotated[
        str | None,
        typer.Option(
            help="stochastic protocols: paper (default) | lean | optimized | optimized-exact | "
            "FILE.json; add ':strict' "
            "(e.g. paper:strict) to check steps whose probability is known exactly"
        ),
    ] = None,
    isolation: Annotated[
        str, typer.Option(help="in-process | process (each prover in its own OS process)")
    ] = "in-process",
    timeout: Annotated[
        float | None, typer.Option(help="seconds per prover call (pre-emptive with process)")
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            help="stochastic, stochastic-witness: refuse a machine of more steps than this, "
            "before building it "
            "(default 100,000)"
        ),
    ] = None,
    max_sat_work: Annotated[
        int | None,
        typer.Option(
            help="witness: refuse a formula whose search work estimate (literal visits) is "
            "over this, before any search (default 5e8, about 20 s)"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Run one debate and report who won and what the verifier paid."""
    from .harness import play, resolve_instance

    if protocol not in PROTOCOLS:
        _fail(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    if claim is not None and claim not in (0, 1):
        _fail(f"--claim must be 0 or 1, got {claim}")
    if timeout is not None and not timeout > 0:
        _fail(f"--timeout must be a positive number of seconds, got {timeout}")
    try:
        a, b = _program(prover_a, isolation), _program(prover_b, isolation)
        inst = resolve_instance(
            protocol, machine, steps, max_steps=max_steps, max_sat_work=max_sat_work
        )
        with _progress("simulating") as progress:
            out = play(
                protocol, inst, claim, a, b, seed=seed, isolation=isolation,
                timeout=timeout, params=params, progress=progress,
            )  # fmt: skip
    except ProofgamesError as exc:
        _fail(str(exc))
        return
    except MemoryError:
        _fail("out of memory: this instance is too large for this machine")
        return
    if as_json:
        print(dumps(out.to_dict() | {"truth": inst.truth, "p_accept": inst.p_accept}))
    else:
        console.print(outcome_table(out, inst.truth))


@app.command()
def exhaustive(
    protocol: Annotated[str, typer.Argument(help="cross-examination | bisection")],
    machine: Annotated[
        list[str] | None,
        typer.Option(
            "--machine",
            "-m",
            help="tm:<text> or example (default bb2); repeat for several "
            "instances, searched in parallel with --workers or --executor dask",
        ),
    ] = None,
    steps: Annotated[int | None, typer.Option("--steps", "-T", help="T")] = None,
    space: Annotated[
        int | None, typer.Option(help="tape window S (default: the cells the run uses)")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="worker processes")] = 1,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    store: Annotated[
        str | None,
        typer.Option(
            help="JSONL file keeping every finished instance; the command run again with "
            "the same protocol, --steps and --space searches only the instances not yet done"
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print one JSON object (a line per instance)")
    ] = False,
) -> None:
    """Search every dishonest strategy of a small instance: exact completeness and soundness."""
    from ._exhaustive_items import search_instances  # imported here: keeps CLI start-up light
    from .executors import check_executor, make_executor

    if protocol not in ("cross-examination", "bisection"):
        _fail(f"exhaustive search covers cross-examination and bisection, not {protocol!r}")
    if steps is not None and steps <= 0:
        _fail(f"--steps must be a positive number of steps, got {steps}")
    machines = machine or ["bb2"]
    distinct = len(set(machines))
    try:
        check_executor(executor, workers, scheduler)
        with (
            make_executor(executor, min(workers, distinct), scheduler) as pool,
            sweep_bar("instances", distinct, pool) as bar,
        ):
            records = search_instances(
                protocol, machines, steps, space, pool, bar.advance, Path(store) if store else None
            )
    except ProofgamesError as exc:
        _fail(str(exc))
        return
    except MemoryError:
        _fail("out of memory: this instance is too large for an exhaustive search")
        return
    for record in records:
        if as_json:
            print(dumps(record))
            continue
        title = f"exhaustive {protocol} on {record['machine']}, T = {record['steps']}"
        table = Table(title=title, show_header=False)
        for k, v in record.items():
            table.add_row(k, str(v))
        console.print(table)


@app.command()
def strategies(
    protocol: Annotated[str | None, typer.Argument(help="limit to one protocol")] = None,
) -> None:
    """List the registered strategies."""
    if protocol is not None and protocol not in PROTOCOLS:
        _fail(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    table = Table(title="registered strategies")
    for col in ("protocol", "role", "name", "description"):
        table.add_column(col)
    for p in [protocol] if protocol else PROTOCOLS:
        for role in ("A", "B"):
            for name in strategy_names(p, role):
                table.add_row(p, role, name, strategy_description(p, role, name))
    console.print(table)


@app.command()
def protocols() -> None:
    """List the registered protocols with the figure, theorem and bounds they implement."""
    table = Table(title="registered protocols")
    for col in ("name", "figure", "theorem", "completeness", "soundness", "verifier cost"):
        table.add_column(col)
    for name in protocol_names():
        p = get_protocol(name)
        table.add_row(
            name, p.figure, p.theorem, f"{p.completeness:g}", f"{p.soundness:g}", p.verifier_cost
        )
    console.print(table)


@app.command()
def examples() -> None:
    """List the named example computations."""
    table = Table(title="examples")
    for col in ("name", "kind", "steps", "description"):
        table.add_column(col)
    for name in example_names():
        e = get_example(name)
        table.add_row(name, e.kind, "" if e.steps is None else f"{e.steps:,}", e.description)
    from .stochastic.machines import stochastic_machine_description, stochastic_machine_names

    for name in stochastic_machine_names():
        table.add_row(name, "stochastic", "", stochastic_machine_description(name))
    console.print(table)


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="print JSON lines")] = False,
) -> None:
    """Debate the 5-state Busy Beaver champion's 47,176,870-step run, four ways."""
    from .harness import play

    scenarios = [
        ("bisection", 1, None, None),
        ("bisection", 0, None, None),
        ("cross-examination", 1, None, None),
        ("cross-examination", 0, None, None),
    ]
    if not as_json:
        console.print(
            "[bold]proofgames demo[/]: does the 5-state Busy Beaver champion halt within "
            "47,176,870 steps?\nHonest provers defend the truth (1); liars claim 0 and keep "
            "their lie consistent everywhere but one step.\n"
        )
    summary = Table(title="bb5: who wins, and what the verifier paid")
    for col in (
        "protocol",
        "claim",
        "A vs B",
        "winner",
        "V read",
        "V queries",
        "work A, B (x T)",
        "s",
    ):
        summary.add_column(col)
    for protocol, claim, a, b in scenarios:
        with _progress(f"{protocol}, claim {claim}") as progress:
            out = play(protocol, "bb5", claim, a, b, seed=0, progress=progress)
        c = out.costs
        if as_json:
            print(dumps(out.to_dict(messages=False)))
            continue
        unit = "configs" if c.verifier_read_unit == "configurations" else c.verifier_read_unit
        summary.add_row(
            protocol,
            str(claim),
            f"{out.prover_a.label} vs {out.prover_b.label}",
            out.winner,
            f"{c.verifier_reads} {unit}",
            str(c.verifier_queries),
            f"{c.prover_steps['A'] / out.steps:.2f}, {c.prover_steps['B'] / out.steps:.2f}",
            f"{c.seconds:.1f}",
        )
    if not as_json:
        console.print(summary)
        console.print(
            "Bisection: V read the initial and final configurations and one midpoint per round, "
            "then checked a single step.\nCross-examination: V read at most 5 tableau entries "
            "and recomputed a single step."
        )


register_stochastic(app, console, _fail)
register_params(app, console, _fail)
register_language(app, console, _fail)
register_judge(app, console, _fail)


@app.command(
    "pvg",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def pvg(ctx: typer.Context) -> None:
    """Prover-Verifier Games: train and stress-test agents (needs the 'pvg' extra)."""
    try:
        from .pvg.cli import app as pvg_app  # imported here: PyTorch loads only when needed
    except ImportError as exc:
        _fail(f"proofgames pvg needs PyTorch: pip install 'proofgames[pvg]' ({exc})")
        return
    code = pvg_app(args=list(ctx.args), prog_name="proofgames pvg", standalone_mode=False)
    if isinstance(code, int) and code:
        raise typer.Exit(code)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point: usage errors, too, are one ``error:`` line on stderr."""
    try:
        args = argv if argv is not None else sys.argv[1:]
        code = app(args=args, prog_name="proofgames", standalone_mode=False)
    except TyperException as exc:  # a bad option or value, as the parser found it
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help())  # a bare command group: its help, as Typer would
            sys.exit(2)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        err_console.print(f"[bold red]error:[/] {exc.format_message()}{hint}", markup=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except typer.Abort:
        err_console.print("[bold red]error:[/] aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
