"""``proofgames demo``: the 5-state Busy Beaver champion's run, debated four ways.

Honest provers defend the truth; liars claim the opposite and keep their lie consistent
everywhere but one step. The demo plays bisection and cross-examination both ways and
prints one table of who won and what the verifier paid (``--json``: one line per
debate). It simulates 47,176,870 steps per debate, so it takes a few seconds.

Example:
    >>> from proofgames.cli.demo import SCENARIOS
    >>> [(protocol, claim) for protocol, claim, _, _ in SCENARIOS][:2]
    [('bisection', 1), ('bisection', 0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._common import JsonOption, console, echo_json
from .sweeps import step_bar

if TYPE_CHECKING:
    from rich.table import Table

    from ..protocols import Outcome

#: ``(protocol, claim, prover A, prover B)`` of each debate (``None``: the default player).
SCENARIOS: tuple[tuple[str, int, str | None, str | None], ...] = (
    ("bisection", 1, None, None),
    ("bisection", 0, None, None),
    ("cross-examination", 1, None, None),
    ("cross-examination", 0, None, None),
)

INTRO = (
    "[bold]proofgames demo[/]: does the 5-state Busy Beaver champion halt within "
    "47,176,870 steps?\nHonest provers defend the truth (1); liars claim 0 and keep "
    "their lie consistent everywhere but one step.\n"
)
OUTRO = (
    "Bisection: V read the initial and final configurations and one midpoint per round, "
    "then checked a single step.\nCross-examination: V read at most 5 tableau entries "
    "and recomputed a single step."
)


def _summary() -> Table:
    """The demo's empty table, its columns named."""
    from rich.table import Table

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
    return summary


def _row(protocol: str, claim: int, out: Outcome) -> list[str]:
    """One debate's row of the demo's table."""
    c = out.costs
    unit = "configs" if c.verifier_read_unit == "configurations" else c.verifier_read_unit
    return [
        protocol,
        str(claim),
        f"{out.prover_a.label} vs {out.prover_b.label}",
        out.winner,
        f"{c.verifier_reads} {unit}",
        str(c.verifier_queries),
        f"{c.prover_steps['A'] / out.steps:.2f}, {c.prover_steps['B'] / out.steps:.2f}",
        f"{c.seconds:.1f}",
    ]


def demo(as_json: JsonOption = False) -> None:
    """Debate the 5-state Busy Beaver champion's 47,176,870-step run, four ways.

    With --json: one JSON object per line, one line per debate.
    """
    from ..harness import play

    if not as_json:
        console.print(INTRO)
    summary = _summary()
    for protocol, claim, a, b in SCENARIOS:
        with step_bar(f"{protocol}, claim {claim}") as progress:
            out = play(protocol, "bb5", claim, a, b, seed=0, progress=progress)
        if as_json:
            echo_json(out.to_dict(messages=False))
        else:
            summary.add_row(*_row(protocol, claim, out))
    if not as_json:
        console.print(summary)
        console.print(OUTRO)
