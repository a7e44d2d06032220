"""Exhaustive searches over many instances: one work item per instance.

Private to the CLI's ``exhaustive`` command (``-m`` given several times): each instance is
searched by :func:`instance_record` wherever the executor runs it
(:mod:`proofgames.executors`), and the records come back in the order the instances were
given.  With a store (``exhaustive --store FILE.jsonl``) each finished instance is kept, keyed
by its machine, so that an interrupted search continues with the instances not yet done; a
stored record is used only if it is one of this search's (:func:`record_check`).

Example:
    >>> [r["truth"] for r in search_instances("bisection", ["bb2", "bb2"], 6)]
    [1, 1]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from ..errors import ProofgamesError
from ..instances import turing_machine
from ..machines import TableauTranscript, TuringMachine
from ..sweeps._store import ResultStore
from ..sweeps.executors import map_items

MAX_SPACE = 4096  # tape cells an exhaustive search's window may have

Job = tuple[str, str, int | None, int | None]


def resolve(job: Job) -> tuple[TuringMachine, int]:
    """The machine (in its tape window) and T of one instance, checked before any search."""
    _, machine, steps, space = job
    tm, t = turing_machine(machine, steps)
    if space is not None:
        if not 0 < space <= MAX_SPACE:
            raise ProofgamesError(
                f"--space must be a number of cells in 1..{MAX_SPACE} (exhaustive search "
                f"covers small instances only), got {space}"
            )
        tm = TuringMachine(tm.program, space, min(tm.origin, space - 1), name=tm.name)
    return tm, t


def instance_record(job: Job) -> dict[str, Any]:
    """Exact completeness and soundness of one instance, as the CLI reports them."""
    from . import exhaustive as ex

    protocol = job[0]
    tm, t = resolve(job)
    target = TableauTranscript(tm, t) if protocol == "cross-examination" else tm
    g = ex.exact_completeness_soundness(target, t)
    return {
        "protocol": protocol,
        "machine": tm.name,
        "steps": t,
        "space": tm.size,
        "truth": g.honest.truth,
        "completeness": g.completeness,
        "soundness": g.soundness,
        "candidates": g.honest.candidates,
        "strategies_searched": {
            "A": g.honest.strategies_searched[0] + g.dishonest.strategies_searched[0],
            "B": g.honest.strategies_searched[1] + g.dishonest.strategies_searched[1],
        },
        "seconds": g.honest.seconds + g.dishonest.seconds,
    }


RECORD_FIELDS = frozenset(
    {"protocol", "machine", "steps", "space", "truth", "completeness", "soundness",
     "candidates", "strategies_searched", "seconds"}
)  # fmt: skip


def _natural(value: object, name: str, low: int = 0, high: int | None = None) -> int:
    """``value``, refused unless an integer (not a bool) in ``low..high``."""
    if type(value) is not int or value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}"[:200])
    return value


def _real(value: object, name: str, high: float | None = None) -> None:
    """Refuse ``value`` unless a finite number (not a bool) in ``0..high``."""
    number = value if type(value) in (int, float) else math.nan  # not a bool
    assert isinstance(number, (int, float))
    if not 0 <= number <= (math.inf if high is None else high):  # NaN fails it too
        bound = "a finite number >= 0" if high is None else f"a number in 0..{high}"
        raise ValueError(f"{name} must be {bound}, got {value!r}"[:200])


def check_record(record: object, protocol: str) -> None:
    """Refuse anything but an :func:`instance_record` of ``protocol``.

    Raises:
        ValueError: saying which field is wrong.

    Example:
        >>> check_record({"protocol": "bisection"}, "bisection")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: an instance's record has exactly the fields ['candidates', ...
    """
    if not isinstance(record, dict) or set(record) != RECORD_FIELDS:
        raise ValueError(f"an instance's record has exactly the fields {sorted(RECORD_FIELDS)}")
    if record["protocol"] != protocol:
        raise ValueError(f"it is a record of {record['protocol']!r}, not {protocol!r}"[:200])
    if not isinstance(record["machine"], str):
        raise ValueError("machine must be a name")
    _natural(record["steps"], "steps")
    _natural(record["space"], "space", 1, MAX_SPACE)
    _natural(record["truth"], "truth", 0, 1)
    _real(record["completeness"], "completeness", 1)
    _real(record["soundness"], "soundness", 1)
    _natural(record["candidates"], "candidates")
    searched = record["strategies_searched"]
    if not isinstance(searched, dict) or set(searched) != {"A", "B"}:
        raise ValueError("strategies_searched must map A and B to counts")
    for party in ("A", "B"):
        _natural(searched[party], f"strategies searched by {party}")
    _real(record["seconds"], "seconds")


def record_check(
    protocol: str, steps: int | None, space: int | None,
    expected: dict[str, tuple[str, int, int]],
) -> Callable[[str, Any], None]:  # fmt: skip
    """The store's check of a search's records (:func:`check_record`).

    A record of a machine of this search must also name the machine, T and window that
    ``expected`` gives for it; ``steps`` and ``space``, when given, bind every record.

    Example:
        >>> record = instance_record(("bisection", "bb2", 6, None))
        >>> check = record_check("bisection", 6, None, {"bb2": ("bb2", 6, 4)})
        >>> check("bb2", record)
        >>> check("bb2", {**record, "steps": 5})
        Traceback (most recent call last):
        ...
        ValueError: its steps is 5, the search's 6
    """

    def check(key: str, record: Any) -> None:
        check_record(record, protocol)
        found = (record["machine"], record["steps"], record["space"])
        for name, given, got in (("steps", steps, found[1]), ("space", space, found[2])):
            if given is not None and got != given:
                raise ValueError(f"its {name} is {got}, the search's {given}")
        if key in expected and found != expected[key]:
            raise ValueError(f"it is a record of (machine, T, space) {found}, not {expected[key]}")

    return check


def search_instances(
    protocol: str,
    machines: Sequence[str],
    steps: int | None = None,
    space: int | None = None,
    executor: Executor | None = None,
    progress: Callable[[int], None] | None = None,
    store: Path | None = None,
) -> list[dict[str, Any]]:
    """:func:`instance_record` of every machine, fanned out; every instance checked first.

    A machine given twice is searched once.  With ``store``, instances already stored for
    the same protocol, T and window are not searched again (their records, ``seconds``
    included, are the stored ones); a store of other settings is refused.
    """
    jobs = {m: (protocol, m, steps, space) for m in machines}  # one search per machine
    resolved = {m: resolve(job) for m, job in jobs.items()}
    book = None
    if store is not None:  # bound to every argument but the machines, which are the keys
        sweep = {"sweep": "exhaustive", "protocol": protocol, "steps": steps, "space": space}
        expected = {m: (tm.name, t, tm.size) for m, (tm, t) in resolved.items()}
        book = ResultStore(store, sweep, record_check(protocol, steps, space, expected))
    done = map_items(instance_record, list(jobs.items()), executor, store=book, progress=progress)
    return [done[m] for m in machines]
