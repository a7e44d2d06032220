"""Exhaustive searches over many instances: one work item per instance.

Private to the CLI's ``exhaustive`` command (``-m`` given several times): each instance is
searched by :func:`instance_record` wherever the executor runs it
(:mod:`proofgames.executors`), and the records come back in the order the instances were
given.  With a store (``exhaustive --store FILE.jsonl``) each finished instance is kept, keyed
by its machine, so that an interrupted search continues with the instances not yet done.

Example:
    >>> [r["truth"] for r in search_instances("bisection", ["bb2", "bb2"], 6)]
    [1, 1]
"""

from __future__ import annotations

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
    for job in jobs.values():
        resolve(job)
    book = None
    if store is not None:
        sweep = {"sweep": "exhaustive", "protocol": protocol, "steps": steps, "space": space}
        book = ResultStore(store, sweep)
    done = map_items(instance_record, list(jobs.items()), executor, store=book, progress=progress)
    return [done[m] for m in machines]
