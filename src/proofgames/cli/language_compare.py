"""``proofgames language compare``, ``summarize``, ``reading``: protocols against baselines.

Registered on the ``language`` app by :mod:`.language`; see :mod:`proofgames.language.compare`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._common import JsonOption, console, fail, one_line_errors

Seed = Annotated[int, typer.Option(min=0, help="Seed of every random choice (non-negative).")]
Judges = Annotated[
    list[str] | None,
    typer.Option(help="A judge (repeat for several). Default: calculator and scripted:0.1."),
]
Protocols = Annotated[
    list[str] | None, typer.Option(help="A protocol (repeat for several). Default: all five.")
]


def compare(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="GSM8K problems or model solutions (as for 'language gsm8k'); omit for the "
            "demo problems; with --steps, the generated task instead.",
            show_default=False,
        ),
    ] = None,
    steps: Annotated[
        int | None, typer.Option(help="Debate the generated task of this many steps instead.")
    ] = None,
    n: Annotated[int, typer.Option(help="Problems (GSM8K: questions read; each twice).")] = 20,
    judge: Judges = None,
    protocol: Protocols = None,
    prover_a: Annotated[
        str | None,
        typer.Option(
            help="model:NAME: A is the model, writing its own solution (honest, or for the "
            "planted wrong answer); the truth is whether its answer is right."
        ),
    ] = None,
    prover_b: Annotated[
        str | None, typer.Option(help="model:NAME: B is the model, naming the first wrong step.")
    ] = None,
    best_of: Annotated[
        list[int] | None,
        typer.Option(
            help="With --prover-a model:NAME: A samples N solutions and commits to the one "
            "the checker and the calculator like best (repeat: 1, 4, 16 for a strength curve)."
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(help="With --best-of: write judge accuracy against A's strength here."),
    ] = None,
    prefer: Annotated[
        str | None,
        typer.Option(
            help="With --best-of: a judge spec (e.g. model:NAME) whose P[yes] on the whole "
            "transcript picks A's sample (a preference judge; its tokens count as A's)."
        ),
    ] = None,
    model_cost_config: Annotated[
        Path | None,
        typer.Option(
            help="Model prices (YAML or JSON, Inspect's --model-cost-config format: model "
            "-> input, output, input_cache_write, input_cache_read in $ per million tokens)."
        ),
    ] = None,
    controls: Annotated[
        bool,
        typer.Option(
            help="Also ask each model judge the negated question (flip:) and with its "
            "inputs reversed (swap:); report each judge's bias."
        ),
    ] = False,
    judge_min_mass: Annotated[
        float | None,
        typer.Option(
            help="Model judges: the least yes/no probability mass, in (0, 1], a reading "
            "needs (below it the judge failed: that debate stops)."
        ),
    ] = None,
    figure1: Annotated[
        bool,
        typer.Option(
            help="With --steps: also play cross-examination and bisection with Figure 1's "
            "stochastic protocol on the disputed step (scripted:E judges)."
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the expected calls, tokens and dollars of every role (an estimate) "
            "and stop: no debate is played, no model is called.",
        ),
    ] = False,
    seed: Seed = 0,
    json: JsonOption = False,
) -> None:
    """Every protocol against its baselines, with the same judges, on the same problems.

    Cross-examination, bisection, the judge reading the whole transcript, consultancy
    and the judge alone on the final answer: completeness, soundness error and accuracy
    with 95% Wilson intervals, and judge calls, tokens and dollars per (protocol, judge).
    With --json: every cell and every debate, as one JSON object. Before a run that calls
    a model, the expected calls, tokens and dollars of every role are printed (stderr).
    """
    import asyncio

    from ..language.compare import (
        DEFAULT_JUDGES,
        biases,
        cells,
        compare_generated,
        compare_gsm8k,
        load_prices,
        reliability,
        table,
        with_controls,
    )
    from ..language.experiments import PROTOCOLS, check_problems
    from ..reporting.json import dumps

    judges, protocols = tuple(judge or DEFAULT_JUDGES), tuple(protocol or PROTOCOLS)
    models = {}
    for role, spec in (("A", prover_a), ("B", prover_b)):
        if spec is not None:
            if not spec.startswith("model:") or not spec[6:].strip():
                fail(f"--prover-{role.lower()} takes model:NAME (an Inspect model), not {spec!r}")
            models[role] = spec[6:]
    if controls:
        judges = tuple(with_controls(judges))
    if best_of and "A" not in models:
        fail("--best-of needs a model as A (--prover-a model:NAME): it samples A's solutions")
    if plot is not None and not best_of:
        fail("--plot draws accuracy against --best-of N: give --best-of")
    if prefer is not None and not best_of:
        fail("--prefer picks among A's --best-of N samples: give --best-of")
    with one_line_errors():
        check_problems(n, "--n")
        if steps is not None and path is not None:
            fail("give a GSM8K PATH or --steps (the generated task), not both")
        if figure1 and steps is None:
            fail("--figure1 plays on the generated task: give --steps")
        prices = load_prices(model_cost_config) if model_cost_config is not None else {}

        def grid(js: tuple[str, ...]) -> Any:
            strengths = tuple(best_of or ())
            if steps is None:
                return compare_gsm8k(path, limit=n, seed=seed, judges=js, protocols=protocols,
                                     models=models, best_of=strengths,
                                     prefer=prefer)  # fmt: skip
            return compare_generated(steps, n, seed=seed, judges=js, protocols=protocols,
                                     models=models, best_of=strengths, prefer=prefer,
                                     figure1=figure1 and js != ("calculator",))  # fmt: skip

        def expected() -> Any:
            from ..language.estimate import estimate_generated, estimate_gsm8k

            settings: dict[str, Any] = {"judges": judges, "protocols": protocols, "models": models,
                        "best_of": tuple(best_of or ()), "prefer": prefer}  # fmt: skip
            if steps is None:
                return estimate_gsm8k(path, limit=n, **settings)
            return estimate_generated(steps, n, seed=seed, figure1=figure1, **settings)

        if _announce_cost(expected(), prices, dry_run, json):
            return
        with _judge_config(judges, judge_min_mass):
            rows = asyncio.run(grid(judges))
    summaries, bias, curves = cells(rows), biases(rows), reliability(rows)
    rated = _rated(rows) if best_of else {}
    if plot is not None:
        from ..language.strength import strength_figure

        with one_line_errors():
            strength_figure(summaries, plot)
    if json:
        console.print_json(dumps({"cells": summaries, "biases": bias, "reliability": curves,
                                  "ratings": rated, "debates": rows}))  # fmt: skip
        return
    typer.echo(table(summaries), nl=False)
    for b in bias:
        typer.echo(
            f"{b['judge']} under {b['control']} ({b['protocol']}): mean P[yes] "
            f"{b['p_yes']:.3f} plain, {b['p_yes_controlled']:.3f} controlled: bias "
            f"{b['bias']:+.3f} (measured)"
        )
    for player, r in rated.items():
        typer.echo(f"Elo of {player}: {r['rating']:.0f} +- {r['se']:.0f} ({r['games']} games)")
    for c in curves:  # judges that answer with a probability: their reliability curves
        if 0.0 < c["mean_p_yes"] < 1.0:
            lo, hi = c["followed_ci"]
            typer.echo(
                f"{c['judge']} ({c['protocol']}), P[yes] in [{c['bin'][0]:.1f}, "
                f"{c['bin'][1]:.1f}): {c['judgements']} judgements, mean {c['mean_p_yes']:.3f}; "
                f"the step followed in {c['followed']:.3f} [{lo:.3f}, {hi:.3f}] (measured)"
            )


def summarize_logs(
    logdir: Annotated[
        Path, typer.Argument(help="A folder of Inspect logs of gsm8k_debate or generated_debate.")
    ],
    json: JsonOption = False,
) -> None:
    """The comparison table from Inspect logs: per (protocol, judge), rates and costs.

    Completeness, soundness error and accuracy with 95% Wilson intervals; judge calls,
    tokens and dollars. A sample whose debate errored is counted as stopped, in no rate.
    """
    from ..language.compare import cells, table
    from ..language.summarize import rows_from_logs
    from ..reporting.json import dumps

    with one_line_errors():
        rows = rows_from_logs(logdir)
    summaries = cells(rows)
    if json:
        console.print_json(dumps({"cells": summaries, "samples": rows}))
    else:
        typer.echo(table(summaries), nl=False)


def _announce_cost(roles: dict[str, Any], prices: dict[str, Any], dry: bool, as_json: bool) -> bool:
    """Print the expected cost of every role before a run that calls a model (stderr).

    With ``dry`` it is the command's output (stdout; ``as_json``: as JSON) and the run
    does not start: returns True.
    """
    from ..language.estimate import estimate_table, priced

    def price_of(name: str) -> Any:
        return prices.get(name) or _inspect_price(name)

    if dry and as_json:
        from ..reporting.json import dumps

        console.print_json(dumps({"estimate": priced(roles, price_of)}))
    elif dry:
        typer.echo(estimate_table(roles, price_of), nl=False)
    elif any(r.model is not None and r.calls for r in roles.values()):
        typer.echo(estimate_table(roles, price_of), nl=False, err=True)
    return dry


def _inspect_price(name: str) -> Any:
    """The price Inspect's model database has for ``name``, if any."""
    from inspect_ai.model import get_model_info

    info = get_model_info(name)
    return None if info is None else info.cost


def _rated(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A's Elo ratings at each strength against its B (none when no debate finished)."""
    import dataclasses

    from ..language.strength import ratings

    if not any("strength" in r and r["accepted"] is not None for r in rows):
        return {}
    return {k: dataclasses.asdict(v) for k, v in ratings(rows).items()}


def _judge_config(judges: tuple[str, ...], min_mass: float | None) -> Any:
    """The model judges' options for the run (none given: a context that changes nothing)."""
    import contextlib

    if min_mass is None:
        return contextlib.nullcontext()
    if not any("model" in j.split(":") for j in judges):
        fail("--judge-min-mass applies to model judges (--judge model:NAME)")
    from ..judges.model import ModelJudgeConfig, check_min_mass, use_judge_config

    return use_judge_config(ModelJudgeConfig(min_mass=check_min_mass(min_mass, "--judge-min-mass")))


def reading(
    path: Annotated[Path, typer.Argument(help="A QuALITY- or GPQA-style JSON-lines file (local).")],
    n: Annotated[
        int,
        typer.Option(help="Articles (QuALITY) or questions (GPQA) read; each debated twice."),
    ] = 20,
    judge: Annotated[
        list[str] | None,
        typer.Option(help="A judge (repeat): quotes (default), or any judge spec, model:NAME."),
    ] = None,
    protocol: Protocols = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of every random choice.")] = 0,
    json: JsonOption = False,
) -> None:
    """Every protocol on QuALITY- or GPQA-style questions: arguments from quotes, checked by V.

    The judge never reads the article; each quote it is shown is marked verified or not.
    Offline the debaters are scripted (an honest A quoting the article, a lying A who
    misquotes) and the judge 'quotes' accepts what holds only verified quotes. A
    GPQA-style question has no source: every quote is marked unverifiable and the judge
    is told so ('quotes' then rejects every argument: use a judge that reads, model:NAME).
    """
    import asyncio

    from ..language.compare import cells, table
    from ..language.experiments import PROTOCOLS, check_problems
    from ..language.reading_debate import reading_games
    from ..reporting.json import dumps

    with one_line_errors():
        check_problems(n, "--n")
        judges = tuple(judge or ("quotes",))
        rows = asyncio.run(reading_games(path, limit=n, seed=seed, judges=judges,
                                         protocols=tuple(protocol or PROTOCOLS)))  # fmt: skip
    summaries = cells(rows)
    if json:
        console.print_json(dumps({"cells": summaries, "debates": rows}))
    else:
        typer.echo(table(summaries), nl=False)
