"""``proofgames debate`` (one debate), ``exhaustive`` (every strategy) and ``party-server``.

The protocols, machines and searches are imported inside the commands, so that
``proofgames --help`` stays quick.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["debate", "bisection", "-m", "bb3", "--json"])
    >>> res.exit_code, '"winner": "A"' in res.stdout
    (0, True)
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand

from ..errors import ProofgamesError
from ._common import JsonOption, console, echo_json, fail, one_line_errors
from .sweeps import ExecutorOption, SchedulerOption, WorkersOption, step_bar, sweep_bar

if TYPE_CHECKING:
    from rich.table import Table

    from ..protocols import Outcome


def protocol_names() -> tuple[str, ...]:
    """The registered protocols' names (imported when a command first needs them)."""
    from ..protocols import protocol_names as names

    return tuple(names())


def check_protocol(protocol: str) -> None:
    """Refuse (exit 2) a protocol that is not registered."""
    from ..protocols import has_protocol

    if not has_protocol(protocol):  # a miss loads the plugins; a hit lists nothing
        fail(f"unknown protocol {protocol!r}; choose one of {', '.join(protocol_names())}")


class DebateCommand(TyperCommand):
    """``debate``'s command: its help lists the protocols registered when it is shown.

    Plugins register protocols too, so the list is read from the registry then, not
    written into the help (and the registry is imported only for ``--help``).
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:  # Typer's own click types
        """The help, with the protocol argument's choices filled in."""
        for param in self.params:
            if isinstance(param, TyperArgument) and param.name == "protocol":
                param.help = " | ".join(protocol_names())
        super().format_help(ctx, formatter)


def outcome_table(out: Outcome, truth: int | None) -> Table:
    """A rich summary of one debate."""
    from rich.table import Table

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


Protocol = Annotated[
    str, typer.Argument(help="a registered protocol (proofgames protocols lists them)")
]
Machine = Annotated[
    str | None,
    typer.Option(
        "--machine",
        "-m",
        help="tm:<text> or an example name (default bb5); witness: a SAT example or "
        "sat:<file.cnf>; stochastic: a stochastic machine spec",
    ),
]
Steps = Annotated[int | None, typer.Option("--steps", "-T", help="T (default: the example's)")]
Claim = Annotated[int | None, typer.Option(help="what A asserts (default: the truth)")]
ProverA = Annotated[
    str | None,
    typer.Option("--prover-a", help="strategy[:k=v,...], or exec:COMMAND (with process)"),
]
ProverB = Annotated[
    str | None,
    typer.Option("--prover-b", help="strategy[:k=v,...], or exec:COMMAND (with process)"),
]
Seed = Annotated[
    int, typer.Option(min=0, help="root seed of every random choice (a non-negative integer)")
]
Params = Annotated[
    str | None,
    typer.Option(
        help="stochastic protocols: paper (default) | lean | optimized | optimized-exact | "
        "FILE.json; add ':strict' "
        "(e.g. paper:strict) to check steps whose probability is known exactly"
    ),
]
Isolation = Annotated[
    str, typer.Option(help="in-process | process (each prover in its own OS process)")
]
Timeout = Annotated[
    float | None, typer.Option(help="seconds per prover call (pre-emptive with process)")
]
MaxSteps = Annotated[
    int | None,
    typer.Option(
        help="stochastic, stochastic-witness: refuse a machine of more steps than this, "
        "before building it "
        "(default 100,000)"
    ),
]
MaxSatWork = Annotated[
    int | None,
    typer.Option(
        help="witness: refuse a formula whose search work estimate (literal visits) is "
        "over this, before any search (default 5e8, about 20 s)"
    ),
]


def debate(
    protocol: Protocol,
    machine: Machine = None,
    steps: Steps = None,
    claim: Claim = None,
    prover_a: ProverA = None,
    prover_b: ProverB = None,
    seed: Seed = 0,
    params: Params = None,
    isolation: Isolation = "in-process",
    timeout: Timeout = None,
    max_steps: MaxSteps = None,
    max_sat_work: MaxSatWork = None,
    as_json: JsonOption = False,
) -> None:
    """Run one debate and report who won and what the verifier paid.

    With --json: one JSON object (the debate, the true output and P(V accepts)).
    """
    from ..harness import play, resolve_instance

    check_protocol(protocol)
    if claim is not None and claim not in (0, 1):
        fail(f"--claim must be 0 or 1, got {claim}")
    if timeout is not None and not timeout > 0:
        fail(f"--timeout must be a positive number of seconds, got {timeout}")
    with one_line_errors(out_of_memory="this instance is too large for this machine"):
        a, b = _program(prover_a, isolation), _program(prover_b, isolation)
        inst = resolve_instance(
            protocol, machine, steps, max_steps=max_steps, max_sat_work=max_sat_work
        )
        with step_bar("simulating") as progress:
            out = play(
                protocol, inst, claim, a, b, seed=seed, isolation=isolation,
                timeout=timeout, params=params, progress=progress,
            )  # fmt: skip
    if as_json:
        echo_json(out.to_dict() | {"truth": inst.truth, "p_accept": inst.p_accept})
    else:
        console.print(outcome_table(out, inst.truth))


ExhaustiveStore = Annotated[
    str | None,
    typer.Option(
        help="JSONL file keeping every finished instance; the command run again with "
        "the same protocol, --steps and --space searches only the instances not yet done"
    ),
]


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
    workers: WorkersOption = 1,
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    store: ExhaustiveStore = None,
    as_json: JsonOption = False,
) -> None:
    """Search every dishonest strategy of a small instance: exact completeness and soundness.

    With --json: one JSON object per line, one line per instance.
    """
    from rich.table import Table

    from ..analysis._exhaustive_items import search_instances
    from ..sweeps.executors import check_executor, make_executor

    if protocol not in ("cross-examination", "bisection"):
        fail(f"exhaustive search covers cross-examination and bisection, not {protocol!r}")
    if steps is not None and steps <= 0:
        fail(f"--steps must be a positive number of steps, got {steps}")
    machines = machine or ["bb2"]
    distinct = len(set(machines))
    with one_line_errors(out_of_memory="this instance is too large for an exhaustive search"):
        check_executor(executor, workers, scheduler)
        with (
            make_executor(executor, min(workers, distinct), scheduler) as pool,
            sweep_bar("instances", distinct, pool) as bar,
        ):
            records = search_instances(
                protocol, machines, steps, space, pool, bar.advance, Path(store) if store else None
            )
    for record in records:
        if as_json:
            echo_json(record)
            continue
        title = f"exhaustive {protocol} on {record['machine']}, T = {record['steps']}"
        table = Table(title=title, show_header=False)
        for k, v in record.items():
            table.add_row(k, str(v))
        console.print(table)


def party_server(
    socket: Annotated[
        Path, typer.Argument(help="the Unix socket to listen on (PROOFGAMES_PARTY_SERVER)")
    ],
    spares: Annotated[
        int,
        typer.Option(
            min=0,
            max=64,
            help="children kept forked and warm ahead of requests (0: fork each on request)",
        ),
    ] = 2,
) -> None:
    """Serve isolated provers from one warm process: each is forked, not started anew.

    Opt-in: a debate with --isolation process uses it while PROOFGAMES_PARTY_SERVER names
    this socket, and starts each prover's process itself when the variable is unset or
    the server is gone (with a warning). Runs until SIGTERM or Ctrl-C; restart it after
    changing proofgames or a plugin, as the children run the code it loaded.
    """
    import os
    import sys

    from ..isolation.server import MODULE, SINGLE_THREADED

    folder = socket.absolute().parent
    if not folder.is_dir():
        fail(f"the socket's folder {folder} does not exist")
    if socket.exists() and not socket.is_socket():
        fail(f"{socket} exists and is not a socket")
    argv = [sys.executable, "-m", MODULE, str(socket), "--spares", str(spares)]
    os.execve(sys.executable, argv, os.environ | SINGLE_THREADED)  # BLAS before NumPy loads
