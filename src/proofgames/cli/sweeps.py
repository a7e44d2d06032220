"""What the long commands share: the executor options and the progress bars on stderr.

``--executor local|dask``, ``--scheduler tcp://HOST:PORT``, ``--workers N``; one bar
over a whole sweep (with the Dask dashboard's address above it when a dashboard is
running) and one bar over the simulated steps of a debate. Every bar shows only when
stderr is a terminal, so ``--json`` on stdout stays clean and a pipe or a log file gets
no bar.

Example:
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(1) as pool, sweep_bar("debates", 10, pool) as bar:
    ...     bar.advance(10)  # no terminal here: nothing is drawn
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import err_console

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from rich.progress import Progress

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="where the work items run: local (this machine's processes) or dask (a Dask "
        "cluster: a local one of --workers processes, or --scheduler's)",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        help="with --executor dask: an existing cluster's scheduler, tcp://HOST:PORT "
        "(default $DASK_SCHEDULER_ADDRESS)"
    ),
]
WorkersOption = Annotated[int, typer.Option(min=1, help="worker processes")]


class SweepBar:
    """Callbacks feeding one bar: ``advance`` by finished units, ``grow`` the total.

    Example:
        >>> bar = SweepBar(None, 4, "debates")  # no terminal: every callback does nothing
        >>> bar.advance(2); bar.grow(4); bar.stage("optimize", 1, 8)
    """

    def __init__(self, bar: Progress | None, total: int | None, label: str) -> None:
        self.bar = bar
        self.task = None if bar is None else bar.add_task(label, total=total)

    def advance(self, n: int) -> None:
        """``n`` more units finished."""
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task, n)

    def stage(self, name: str, done: int, total: int) -> None:
        """Show stage ``name`` of a sweep made of stages: ``done`` of ``total`` units."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=name, completed=done, total=total)

    def grow(self, n: int) -> None:
        """``n`` more units to do (a sweep whose size is known section by section)."""
        if self.bar is not None and self.task is not None:
            total = self.bar.tasks[self.task].total or 0
            self.bar.update(self.task, total=total + n)


@contextmanager
def sweep_bar(label: str, total: int | None, executor: Executor) -> Iterator[SweepBar]:
    """One bar over a sweep on stderr, when stderr is a terminal (``--json`` goes to stdout).

    Example:
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> with ThreadPoolExecutor(1) as pool, sweep_bar("instances", 2, pool) as bar:
        ...     bar.advance(1)
    """
    if not err_console.is_terminal:
        yield SweepBar(None, total, label)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from ..sweeps.executors import dashboard_link

    link = dashboard_link(executor)
    if link:
        err_console.print(f"Dask dashboard: {link}")
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        yield SweepBar(bar, total, label)


@contextmanager
def step_bar(label: str) -> Iterator[Callable[[int], None] | None]:
    """A bar on stderr fed with simulated steps, when stderr is a terminal (else ``None``).

    ``--json`` output goes to stdout, so the bar shows with it too (and never in a pipe
    or a log file).

    Example:
        >>> with step_bar("simulating") as progress:
        ...     if progress is not None:  # stderr is a terminal: the bar moves
        ...         progress(1_000)
    """
    if not err_console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

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
