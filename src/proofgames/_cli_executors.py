"""Command-line pieces shared by the commands that fan out: the executor options and the bar.

``--executor local|dask``, ``--scheduler tcp://HOST:PORT`` and one progress bar over the
whole sweep on stderr, shown only when stderr is a terminal (as every bar of the CLI), with
the Dask dashboard's address above it when a dashboard is running.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .executors import dashboard_link

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


class SweepBar:
    """Callbacks feeding one bar: ``advance`` by finished units, ``grow`` the total."""

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
    """One bar over a sweep on stderr, when stderr is a terminal (``--json`` goes to stdout)."""
    err = Console(stderr=True)
    if not err.is_terminal:
        yield SweepBar(None, total, label)
        return
    link = dashboard_link(executor)
    if link:
        err.print(f"Dask dashboard: {link}", soft_wrap=True)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        yield SweepBar(bar, total, label)
