"""One executor seam for every parallel workload: local processes or Dask distributed.

Every workload that fans out (``estimate`` and its sweeps, the stochastic report,
``exhaustive`` over many instances, ``pvg reproduce`` across seeds) cuts its work into
*keyed work items* and hands them to :func:`map_items` with a
:class:`concurrent.futures.Executor`:

* :class:`InlineExecutor` -- this process, one item after another (the default);
* a :class:`~concurrent.futures.ProcessPoolExecutor` -- local processes
  (``make_executor("local", workers)``);
* Dask distributed -- ``make_executor("dask", workers)`` starts a ``LocalCluster``;
  ``make_executor("dask", scheduler="tcp://HOST:PORT")`` (or the
  ``DASK_SCHEDULER_ADDRESS`` environment variable) joins an existing cluster; any
  ``Client(...).get_executor()`` works too.

Each item carries its own seed (from a ``SeedSequence``), and :func:`map_items` returns the
results in the items' order, so a run gives the same numbers whatever the executor, the
number of workers or the order in which items finish.  A worker that dies loses nothing:
Dask reschedules its items on the other workers; a broken local pool is replaced and its
unfinished items submitted again.  With a :class:`~proofgames._store.ResultStore` each
finished item is written down as it comes, and a sweep that was interrupted continues with
the items it had not finished.

Example:
    >>> with make_executor("local", workers=1) as pool:
    ...     map_items(abs, [("a", -1), ("b", 2), ("c", -3)], pool)
    {'a': 1, 'b': 2, 'c': 3}
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

from .. import interrupts, plugins
from ..errors import ProofgamesError
from ._store import ResultStore

__all__ = [
    "EXECUTORS",
    "ExecutorError",
    "InlineExecutor",
    "check_executor",
    "dashboard_link",
    "make_executor",
    "map_items",
]

EXECUTORS = ("local", "dask")
"""The names ``--executor`` takes."""

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
CONNECT_TIMEOUT = 10.0  # seconds to reach an existing scheduler
MAX_RESPAWNS = 3  # local pools replaced after a worker died, per call of map_items
_ADDRESS = re.compile(r"^(?:(tcp|tls|ws|wss|ucx|inproc)://)?([^\s:/]+|\[[0-9a-fA-F:]+\]):(\d+)$")

T = TypeVar("T")
R = TypeVar("R")


class ExecutorError(ProofgamesError, ValueError):
    """An executor cannot be made or used: unknown kind, bad address, no scheduler there."""


class InlineExecutor(Executor):
    """Runs each call when it is submitted, in this process (the serial default).

    Example:
        >>> InlineExecutor().submit(pow, 2, 10).result()
        1024
    """

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` now; its result or exception is in the future."""
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # the future holds it, as a pool's would
            future.set_exception(exc)
        return future


def scheduler_address(scheduler: str | None) -> str | None:
    """The scheduler given, else ``$DASK_SCHEDULER_ADDRESS``, else ``None`` (start one)."""
    return scheduler or os.environ.get(SCHEDULER_ENV) or None


def max_local_workers() -> int:
    """The most worker processes a local pool starts: 4 per core, and at least 8.

    Example:
        >>> max_local_workers() >= 8
        True
    """
    return max(8, 4 * (os.cpu_count() or 1))


def check_executor(kind: str, workers: int = 1, scheduler: str | None = None) -> None:
    """Refuse, before any work, an executor that cannot be made.

    Raises:
        ExecutorError: an unknown ``kind``, ``workers`` below 1, a scheduler address with
            the local executor or not of the form ``tcp://HOST:PORT``, or Dask missing.

    Example:
        >>> check_executor("threads")
        Traceback (most recent call last):
        ...
        proofgames.sweeps.executors.ExecutorError: unknown executor 'threads'; choose local or dask
    """
    if kind not in EXECUTORS:
        raise ExecutorError(f"unknown executor {kind!r}; choose {' or '.join(EXECUTORS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ExecutorError(f"workers must be a positive integer, got {workers!r}")
    if kind != "dask" and workers > (most := max_local_workers()):
        raise ExecutorError(
            f"workers = {workers:,} is over the limit of {most:,} local processes on this "
            f"machine ({os.cpu_count() or 1} cores); a cluster's workers come from its "
            "scheduler (--executor dask)"
        )
    if kind != "dask":
        if scheduler is not None:
            raise ExecutorError(
                f"a scheduler address ({scheduler}) needs the dask executor (--executor dask)"
            )
        return
    address = scheduler_address(scheduler)
    if address is not None and not _ADDRESS.match(address):
        source = "" if scheduler else f" (from ${SCHEDULER_ENV})"
        raise ExecutorError(f"bad scheduler address {address!r}{source}: expected tcp://HOST:PORT")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ExecutorError(
            "the dask executor needs Dask distributed: pip install 'proofgames[dask]'"
        ) from None


@contextmanager
def make_executor(
    kind: str = "local",
    workers: int = 1,
    scheduler: str | None = None,
    *,
    start_method: str | None = None,
    processes: bool = True,
) -> Iterator[Executor]:
    """An executor for :func:`map_items`, shut down (with its cluster) on leaving.

    Args:
        kind: ``"local"`` (one worker: :class:`InlineExecutor`; more: a process pool) or
            ``"dask"``.
        workers: local processes, or the workers of the Dask ``LocalCluster`` started when
            no scheduler is given (one thread each).
        scheduler: an existing Dask scheduler's address (default
            ``$DASK_SCHEDULER_ADDRESS``); ``workers`` is then the cluster's business.
        start_method: the local pool's ``multiprocessing`` start method (default: the
            platform's; PyTorch work wants ``"spawn"``).
        processes: the ``LocalCluster``'s workers in processes (else threads of this one).

    Raises:
        ExecutorError: as :func:`check_executor`, or no scheduler answering at the address.
    """
    check_executor(kind, workers, scheduler)
    if kind == "local":
        if workers == 1:
            yield InlineExecutor()
            return
        with _local_pool(workers, multiprocessing.get_context(start_method)) as pool:
            yield pool
        return
    with _dask_client(workers, scheduler_address(scheduler), processes) as client:
        yield client.get_executor(pure=False)


@contextmanager
def _local_pool(workers: int, context: Any) -> Iterator[ProcessPoolExecutor]:
    """A local process pool whose workers know the plugins and stop with the run.

    When the run is interrupted (:class:`~proofgames.interrupts.Interrupted`), each
    worker is sent SIGTERM before the pool is shut down: an item being played stops at
    once (and a training saves its state) rather than running on for nobody, and an
    idle worker exits (:func:`proofgames.interrupts.worker_mode`).
    """
    with ProcessPoolExecutor(workers, mp_context=context, **_worker_setup()) as pool:
        try:
            yield pool
        except interrupts.Interrupted:
            _signal_workers(pool, signal.SIGTERM)
            raise


def _worker_setup() -> dict[str, Any]:
    """The ``initializer`` of a local pool's workers, and its arguments."""
    return {"initializer": stop_with_parent, "initargs": (os.getpid(), *plugins.for_workers())}


def _signal_workers(pool: ProcessPoolExecutor, signum: int) -> None:
    """Send ``signum`` to every live worker process of ``pool``."""
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for pid in list(processes):
        with suppress(OSError):
            os.kill(pid, signum)


def stop_with_parent(
    parent: int,
    modules: Sequence[str] = (),
    folders: Sequence[str] = (),
    every: float = 1.0,
) -> None:
    """In a local pool's worker: the parent's plugins; SIGTERM to itself once it has gone.

    A pool's workers outlive a parent that is killed, and would finish their items
    (hours, for a training) for nobody, then wait on the pool's queues for ever. This
    watch (a daemon thread, checking every ``every`` seconds) stops them instead; a
    resumable training saves its state first (see :func:`proofgames.pvg.train`), and
    the worker exits once it has.
    """
    interrupts.worker_mode()  # a signal stops the item played, or the idle worker
    plugins.import_in_worker(modules, folders)  # a spawned worker knows no plugin yet

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)  # ends it, stops its item, or asks a training
        while signal.getsignal(signal.SIGTERM) is not interrupts.handler:  # to save
            time.sleep(every)
        os._exit(128 + signal.SIGTERM)  # the pool's queues would keep it waiting forever

    threading.Thread(target=watch, name="stop-with-parent", daemon=True).start()


WORKER_ENVIRONMENT: dict[str, Any] = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
}
"""Dask settings of the ``LocalCluster`` proofgames starts.

Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which turns off glibc's
adaptive mmap threshold: every large NumPy temporary is then mapped and unmapped afresh.
A Monte Carlo chunk ran 2.6x slower under it (1.74 s against 0.68 s for 100,000 debates
of ``long-computation:t=300,votes=3``), so the ``LocalCluster``'s workers start without it.
Workers of an existing cluster take their own configuration (docs/distributed.md).
"""


@contextmanager
def _dask_client(workers: int, address: str | None, processes: bool) -> Iterator[Any]:
    """A Dask client of the cluster at ``address``, or of a new ``LocalCluster``."""
    import distributed

    dist: Any = distributed  # untyped
    Client, LocalCluster = dist.Client, dist.LocalCluster
    if address is not None:
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(
                f"no Dask scheduler answers at {address} (waited {CONNECT_TIMEOUT:g} s): {exc}"
            ) from None
        try:
            yield client
        finally:
            client.close()
        return
    import dask

    with (
        dask.config.set(WORKER_ENVIRONMENT),
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def dashboard_link(executor: Executor) -> str | None:
    """The Dask dashboard's address, when the executor's scheduler serves one (else None)."""
    client = getattr(executor, "_client", None)
    if client is None:
        return None
    try:
        services = client.scheduler_info().get("services", {})
        link = client.dashboard_link if "dashboard" in services else None
    except Exception:  # no answer about a dashboard: nothing to show
        return None
    return str(link) if link else None


def _workers(pool: ProcessPoolExecutor) -> int:
    return int(getattr(pool, "_max_workers", 0) or os.cpu_count() or 1)


def map_items(
    fn: Callable[[T], R],
    items: Sequence[tuple[str, T]],
    executor: Executor | None = None,
    *,
    store: ResultStore | None = None,
    progress: Callable[[int], None] | None = None,
    weights: Sequence[int] | None = None,
    window: int = 4096,
) -> dict[str, R]:
    """``{key: fn(item)}`` for every keyed item, in the items' order, whatever ran them.

    Items already in ``store`` are not run again; each new result is written to it as it
    comes.  At most ``window`` items are in flight at once.

    Args:
        fn: a module-level function (it travels to the workers by reference).
        items: ``(key, argument)`` pairs; keys are unique.
        executor: where to run (default :class:`InlineExecutor`).
        store: finished items, kept across interrupted calls.
        progress: called with an item's weight each time one is finished (stored items
            count at once).
        weights: per item (default 1 each), e.g. the debates of a chunk.
        window: most items submitted and not yet finished.

    Raises:
        ExecutorError: the local pool broke more than ``MAX_RESPAWNS`` times, or Dask gave
            up on an item that killed its workers (``KilledWorker``).
        Exception: whatever ``fn`` raised for an item (the other items are cancelled).
    """
    keys = [key for key, _ in items]
    if len(set(keys)) != len(keys):
        raise ExecutorError("work items need unique keys")
    weight = dict(zip(keys, weights or [1] * len(keys), strict=True))
    done: dict[str, Any] = {}
    if store is not None:
        done = {k: store.done[k] for k in keys if k in store.done}
        if progress is not None and done:
            progress(sum(weight[k] for k in done))
    todo = deque((key, arg) for key, arg in items if key not in done)
    executor = executor or InlineExecutor()
    if isinstance(executor, InlineExecutor):
        window = 1  # it runs an item as it is submitted: one at a time, each reported
    run = _Run(fn, executor, window)
    try:
        for key, result in run.results(todo):
            done[key] = result
            if store is not None:
                store.add(key, result)
            if progress is not None:
                progress(weight[key])
    finally:
        run.close()
    return {key: done[key] for key in keys}


class _Run:
    """The futures of one :func:`map_items` call, resubmitted after a local pool broke."""

    def __init__(self, fn: Callable[[Any], Any], executor: Executor, window: int) -> None:
        self.fn, self.executor, self.window = fn, executor, max(1, window)
        self.owned: list[Executor] = []  # replacement pools, shut down by close()
        self.flight: dict[Future[Any], tuple[str, Any]] = {}

    def results(self, todo: deque[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
        """``(key, result)`` as items finish."""
        while todo or self.flight:
            while todo and len(self.flight) < self.window:
                key, arg = todo.popleft()
                self.flight[self.executor.submit(self.fn, arg)] = (key, arg)
            finished, _ = wait(list(self.flight), return_when=FIRST_COMPLETED)
            broken = False
            for future in finished:
                key, arg = self.flight.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    todo.appendleft((key, arg))
                    broken = True
                    continue
                except Exception as exc:
                    if type(exc).__name__ == "KilledWorker":
                        raise ExecutorError(
                            f"work item {key!r} was lost with every worker that ran it "
                            f"(Dask gave up: {exc})"
                        ) from None
                    raise
                yield key, result
            if broken:
                self._respawn(todo)

    def _respawn(self, todo: deque[tuple[str, Any]]) -> None:
        """A local worker died: a fresh pool, and every unfinished item submitted again."""
        if len(self.owned) >= MAX_RESPAWNS or not isinstance(self.executor, ProcessPoolExecutor):
            raise ExecutorError(
                f"the local process pool broke {len(self.owned) + 1} times (a worker "
                "process died); giving up"
            )
        todo.extendleft(reversed(list(self.flight.values())))
        self.flight.clear()
        old = self.executor
        context = getattr(old, "_mp_context", None)
        self.executor = ProcessPoolExecutor(_workers(old), mp_context=context, **_worker_setup())
        self.owned.append(self.executor)

    def close(self) -> None:
        """Cancel what is still in flight; shut down the pools made here."""
        for future in self.flight:
            future.cancel()
        for pool in self.owned:
            pool.shutdown(wait=True, cancel_futures=True)
