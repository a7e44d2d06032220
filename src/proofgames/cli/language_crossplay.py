"""``proofgames language crossplay``: debaters at several strengths, every pair, with Elo.

Registered on the ``language`` app by :mod:`.language`; see
:mod:`proofgames.language.crossplay`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from ._common import JsonOption, console, fail, one_line_errors
from .language_compare import Judges, Protocols


def crossplay(
    steps: Annotated[int, typer.Option(help="Steps of the generated task.")] = 20,
    n: Annotated[int, typer.Option(help="Problems (each debated twice: honest and lying A).")] = 20,
    best_of: Annotated[
        list[int] | None,
        typer.Option(help="A strength, best-of-N for A and for B (repeat). Default: 1, 4, 16."),
    ] = None,
    judge: Judges = None,
    protocol: Protocols = None,
    prefer: Annotated[
        str | None,
        typer.Option(
            help="A judge spec (e.g. model:NAME) whose P[yes] on the whole transcript picks "
            "A's sample. Default: the opponent's score (the checker and the calculator)."
        ),
    ] = None,
    prover_a: Annotated[
        str | None,
        typer.Option(help="model:NAME: A's samples are the model's (default: scripted)."),
    ] = None,
    prover_b: Annotated[
        str | None,
        typer.Option(help="model:NAME: B's samples are the model's (default: scripted)."),
    ] = None,
    skill_a: Annotated[
        float,
        typer.Option(help="Scripted A: the chance one sample is good (right, or a subtle lie)."),
    ] = 0.5,
    skill_b: Annotated[
        float, typer.Option(help="Scripted B: the chance one sample finds the wrong step.")
    ] = 0.5,
    plot: Annotated[
        Path | None,
        typer.Option(help="Write self-play judge accuracy against the debaters' Elo here (PNG)."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of every random choice.")] = 0,
    json: JsonOption = False,
) -> None:
    """Cross-play: A at each best-of-N against B at each, every protocol and judge, with Elo.

    The table has a row per (protocol, judge, A's N, B's N): completeness, soundness
    error and accuracy with 95% Wilson intervals, and costs. Then each judge's Elo ratings
    (A wins a debate when V accepts its answer) and, per protocol B plays, A's win rate
    against each B. Offline by default: the debaters are scripted models (see
    proofgames.language.crossplay). With --json: every cell, rating and debate.
    """
    import asyncio

    from ..language.compare import DEFAULT_JUDGES, cells, table
    from ..language.crossplay import (
        STRENGTHS,
        TWO_PROVERS,
        Skills,
        crossplay_figure,
        crossplay_generated,
        crossplay_ratings,
        matrix,
    )
    from ..language.experiments import PROTOCOLS, check_problems
    from ..reporting.json import dumps

    models = {}
    for role, spec in (("A", prover_a), ("B", prover_b)):
        if spec is not None:
            if not spec.startswith("model:") or not spec[6:].strip():
                fail(f"--prover-{role.lower()} takes model:NAME (an Inspect model), not {spec!r}")
            models[role] = spec[6:]
    judges, protocols = tuple(judge or DEFAULT_JUDGES), tuple(protocol or PROTOCOLS)
    with one_line_errors():
        check_problems(n, "--n")
        skills = Skills(skill_a, skill_b)
        rows = asyncio.run(crossplay_generated(
            steps, n, seed=seed, judges=judges, protocols=protocols,
            strengths=tuple(best_of or STRENGTHS), skills=skills, prefer=prefer, models=models,
        ))  # fmt: skip
    summaries, rated = cells(rows), crossplay_ratings(rows)
    if plot is not None:
        with one_line_errors():
            crossplay_figure(summaries, rated, plot)
    plain = {j: {p: dataclasses.asdict(r) for p, r in v.items()} for j, v in rated.items()}
    if json:
        console.print_json(dumps({"cells": summaries, "ratings": plain, "debates": rows}))
        return
    typer.echo(table(summaries), nl=False)
    for j, players in rated.items():
        for player, r in sorted(
            players.items(), key=lambda kv: (kv[0][0], kv[1].games, int(kv[0].rsplit("-", 1)[1]))
        ):
            typer.echo(f"Elo under {j}, {player}: {r.rating:.0f} +- {r.se:.0f} "
                       f"({r.games} games, fitted)")  # fmt: skip
    for p in (p for p in protocols if p in TWO_PROVERS):
        for j in judges:
            typer.echo("\nA's win rate (V accepted; debates):\n" + matrix(rows, p, j), nl=False)
