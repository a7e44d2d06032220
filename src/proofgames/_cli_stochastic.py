"""Command-line pieces of the stochastic protocol: one debate and Monte Carlo estimates."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ._errors import ProofgamesError
from .protocols import Outcome, play_stochastic
from .stochastic import StochasticParams, resolve_params
from .stochastic.machine import StochasticMachine
from .strategies import make_strategy


def _machine(spec: str) -> StochasticMachine:
    from .stochastic.machines import make_stochastic_machine

    return make_stochastic_machine(spec)


def _params(spec: str, machine: StochasticMachine) -> StochasticParams:
    if machine.lipschitz is None:
        raise ProofgamesError(f"{machine.name} has no known Lipschitz constant")
    return resolve_params(spec, machine.lipschitz, machine.length)


def default_players(machine: StochasticMachine, claim: int) -> tuple[str, str]:
    """Honest A and a disputing B when the claim is likely true, else a liar and honest B."""
    p1 = machine.p_accept
    likely = p1 is None or (p1 if claim == 1 else 1 - p1) >= 0.5
    return ("honest", "abort-against") if likely else ("evade", "honest")


def run_stochastic_debate(
    machine_spec: str,
    params_spec: str,
    claim: int | None,
    prover_a: str | None,
    prover_b: str | None,
    seed: int,
) -> tuple[Outcome, StochasticParams, float | None]:
    """Set up and play one stochastic debate."""
    machine = _machine(machine_spec)
    params = _params(params_spec, machine)
    p1 = machine.p_accept
    c = claim if claim is not None else (1 if p1 is None or p1 >= 0.5 else 0)
    a, b = default_players(machine, c)
    out = play_stochastic(
        machine,
        params,
        c,
        make_strategy("stochastic", "A", prover_a or a),
        make_strategy("stochastic", "B", prover_b or b),
        seed=seed,
    )
    return out, params, p1


def run_stochastic_witness_debate(
    machine_spec: str, params_spec: str, prover_a: str | None, prover_b: str | None, seed: int
) -> dict[str, Any]:
    """One debate with a witness on ``panel-choice:p=P1;P2;...[,votes=V]``."""
    from .protocols.stochastic_witness import PanelChoice, play_stochastic_witness
    from .strategies import parse_strategy

    name, args = parse_strategy(machine_spec)
    if name != "panel-choice" or "p" not in args:
        raise ProofgamesError(
            f"stochastic-witness debates a panel-choice problem, e.g. "
            f"'panel-choice:p=0.2;0.9;0.4' -- got {machine_spec!r}"
        )
    try:
        probs = tuple(float(x) for x in str(args["p"]).split(";"))
    except ValueError:
        raise ProofgamesError(f"bad item probabilities {args['p']!r}") from None
    problem = PanelChoice(probs, votes=int(args.get("votes", 3)))
    params = resolve_params(params_spec, problem.lipschitz, problem.steps)
    res = play_stochastic_witness(
        problem,
        params,
        make_strategy("stochastic-witness", "A", prover_a or "honest"),
        make_strategy("stochastic-witness", "B", prover_b or "honest"),
        debates=1,
        seed=seed,
    )
    verdict = int(res.verdicts[0])
    return {
        "protocol": "stochastic-witness",
        "machine": machine_spec,
        "claim": 1,
        "verdict": verdict,
        "winner": "A" if verdict else "B",
        "witness": next(iter(res.witnesses), None),
        "forfeits": list(res.forfeits),
        "prover_a": prover_a or "honest",
        "prover_b": prover_b or "honest",
        "seed": seed,
        "params": params.to_dict(),
        "best_item_p_accept": max(problem.machine(w).p_accept or 0.0 for w in problem.candidates()),
    }


def register(app: typer.Typer, console: Console, fail: Callable[[str], None]) -> None:
    """Add the ``estimate`` and ``report`` commands to the CLI."""

    @app.command()
    def report(
        out: Annotated[
            str, typer.Option(help="directory for report.md and figures")
        ] = "reports/stochastic",
        debates: Annotated[int, typer.Option(help="debates per table cell")] = 20_000,
        seed: Annotated[int, typer.Option()] = 0,
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
        path = write_report(
            Path(out), debates=debates, seed=seed, readme=Path(readme) if readme else None
        )
        console.print(f"wrote {path}")

    @app.command()
    def estimate(
        machine: Annotated[
            str,
            typer.Option(
                "--machine", "-m", help="stochastic machine spec, e.g. majority:n=5,p=0.7"
            ),
        ] = "single-query:p=0.8",
        params: Annotated[str, typer.Option(help="paper | lean | FILE.json")] = "lean",
        claim: Annotated[int, typer.Option(help="1: P[M=1] >= 2/3; 0: P[M=1] <= 1/3")] = 1,
        prover_a: Annotated[str, typer.Option("--prover-a")] = "honest",
        prover_b: Annotated[str, typer.Option("--prover-b")] = "honest",
        debates: Annotated[int, typer.Option(help="number of debates")] = 10_000,
        seed: Annotated[int, typer.Option()] = 0,
        workers: Annotated[int, typer.Option(help="processes")] = 1,
        as_json: Annotated[bool, typer.Option("--json")] = False,
    ) -> None:
        """Estimate P[V accepts A's claim] over many debates run in lockstep."""
        from .stochastic.montecarlo import estimate_acceptance

        if claim not in (0, 1):
            fail(f"--claim must be 0 or 1, got {claim}")
        if debates <= 0:
            fail(f"--debates must be positive, got {debates}")
        try:
            with Progress(
                TextColumn("[bold]debates"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
                disable=as_json,
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
                )
        except ProofgamesError as exc:
            fail(str(exc))
            return
        record: dict[str, Any] = est.to_dict()
        record["queries_max"] = {p: q["max"] for p, q in est.queries.items()}
        record["queries"] = {p: q["mean"] for p, q in est.queries.items()}
        if as_json:
            print(json.dumps(record))
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
            "abort_rate",
            "queries",
            "queries_max",
            "seconds",
        ):
            table.add_row(k, str(record[k]))
        console.print(table)
