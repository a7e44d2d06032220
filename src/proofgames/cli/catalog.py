"""The listings: ``proofgames protocols``, ``strategies`` and ``examples``.

Each prints one table of what is registered; the registries are imported inside the
commands, so that ``proofgames --help`` stays quick.

Example:
    >>> from typer.testing import CliRunner
    >>> from proofgames.cli import app
    >>> res = CliRunner().invoke(app, ["strategies", "bisection"])
    >>> res.exit_code, "flip-step" in res.stdout
    (0, True)
"""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import console
from .debate import check_protocol, protocol_names


def protocols() -> None:
    """List the registered protocols with the figure, theorem and bounds they implement."""
    from rich.table import Table

    from ..protocols import get_protocol

    table = Table(title="registered protocols")
    for col in ("name", "figure", "theorem", "completeness", "soundness", "verifier cost"):
        table.add_column(col)
    for name in protocol_names():
        p = get_protocol(name)
        table.add_row(
            name, p.figure, p.theorem, f"{p.completeness:g}", f"{p.soundness:g}", p.verifier_cost
        )
    console.print(table)


def strategies(
    protocol: Annotated[str | None, typer.Argument(help="limit to one protocol")] = None,
) -> None:
    """List the registered strategies."""
    from rich.table import Table

    from ..strategies import strategy_description, strategy_names

    if protocol is not None:
        check_protocol(protocol)
    table = Table(title="registered strategies")
    for col in ("protocol", "role", "name", "description"):
        table.add_column(col)
    for p in [protocol] if protocol else protocol_names():
        for role in ("A", "B"):
            for name in strategy_names(p, role):
                table.add_row(p, role, name, strategy_description(p, role, name))
    console.print(table)


def examples() -> None:
    """List the named example computations."""
    from rich.table import Table

    from ..machines.examples import example_names, get_example
    from ..stochastic.machines import stochastic_machine_description, stochastic_machine_names

    table = Table(title="examples")
    for col in ("name", "kind", "steps", "description"):
        table.add_column(col)
    for name in example_names():
        e = get_example(name)
        table.add_row(name, e.kind, "" if e.steps is None else f"{e.steps:,}", e.description)
    for name in stochastic_machine_names():
        table.add_row(name, "stochastic", "", stochastic_machine_description(name))
    console.print(table)
