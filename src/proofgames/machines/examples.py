"""Named example computations, registered by name.

Each example records what it is and how many steps it takes, so that the CLI and the
tests can run it without configuration.  This module holds the registry and the plain
Turing-machine examples; every other example is registered at the end of the module that
defines its kind (:mod:`~proofgames.machines.sat` and
:mod:`~proofgames.machines.screening`), and importing :mod:`proofgames.machines` imports
them all.  The Busy Beaver champions below are the standard ones (step counts include the
final transition into the halt state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._registry import NameRegistry


@dataclass(frozen=True)
class Example:
    """A named computation.

    Attributes:
        name: registry name.
        kind: ``"tm"`` (plain Turing machine), ``"oracle-tm"`` or ``"sat"``.
        description: one line.
        steps: the default number of steps T (``None`` where not applicable).
        build: factory returning the example's object (a program text, a machine, ...).
        facts: known facts used by tests (e.g. halting time, ones on the tape).
    """

    name: str
    kind: str
    description: str
    steps: int | None
    build: Callable[[], Any]
    facts: tuple[tuple[str, Any], ...] = ()


_EXAMPLES: NameRegistry[Example] = NameRegistry("example")


def register_example(example: Example) -> Example:
    """Add an example to the registry."""
    return _EXAMPLES.add(example.name, example)


def get_example(name: str) -> Example:
    """Look an example up by name."""
    return _EXAMPLES.get(name)


def example_names(kind: str | None = None) -> list[str]:
    """Registered example names, optionally of one kind."""
    return sorted(n for n, e in _EXAMPLES.items() if kind is None or e.kind == kind)


def _tm(
    name: str, text: str, steps: int, ones: int, window: tuple[int, int], description: str
) -> None:
    facts = (("halts_after", steps), ("ones", ones), ("window", window))
    register_example(Example(name, "tm", description, steps, lambda: text, facts))


# (name, program, halting step, ones left, cells visited (lowest, highest) relative to the
# start, description); the windows are re-measured by tests/machines/test_examples.py
_TM_CHAMPIONS = [
    ("bb2", "1RB1LB_1LA1RZ", 6, 4, (-2, 1), "2-state Busy Beaver champion: halts after 6 steps"),
    ("bb3", "1RB1RZ_1LB0RC_1LC1LA", 21, 5, (-1, 3),
     "3-state Busy Beaver (most steps): halts after 21"),
    ("bb4", "1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107, 13, (-10, 3),
     "4-state champion: halts after 107 steps"),
    ("bb5", "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 47_176_870, 4098, (-12_243, 45),
     "5-state champion (Marxen-Buntrock): halts after 47,176,870 steps"),
    ("bb2x3", "1RB2LB1RZ_2LA2RB1LB", 38, 9, (-6, 2),
     "2-state 3-symbol champion: halts after 38 steps"),
]  # fmt: skip
for _champion in _TM_CHAMPIONS:
    _tm(*_champion)


def recorded_window(program: str, steps: int) -> tuple[int, int] | None:
    """The cells a named plain-TM example's run of ``steps`` steps visits, if recorded.

    A record belongs to one program text, exactly, and its halting step: it holds for that
    text at every ``steps`` from the halting step on (a halted machine stays where it is),
    and for no other text.  ``None`` where there is no record: the run must be measured.

    Example:
        >>> recorded_window("1RB1LB_1LA1RZ", 6), recorded_window("1RB1LB_1LA1RZ", 100)
        ((-2, 1), (-2, 1))
        >>> recorded_window("1RB1LB_1LA1RZ", 5) is None  # not yet halted: not recorded
        True
    """
    for _, text, halts, _, window, _ in _TM_CHAMPIONS:
        if program == text and steps >= halts:
            return window
    return None
