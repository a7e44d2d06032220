"""The executor seam: keyed work items, the resumable store, local pools that lose a worker.

Dask itself is tested in ``test_dask.py``; here the local executors and the store.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.experiments.montecarlo import Cell, estimate_cells
from proofgames.sweeps._store import ResultStore, StoreError
from proofgames.sweeps.executors import (
    ExecutorError,
    InlineExecutor,
    check_executor,
    make_executor,
    map_items,
)

CELLS = [
    Cell("single-query:p=0.8", "lean", 1, "honest", "abort-at"),
    Cell("majority:n=3,p=0.38", "paper", 1, "shift:delta=0.1", "honest"),
]


def square(x: int) -> int:
    return x * x


def die_once(job: tuple[int, str]) -> int:
    """Kill the worker process the first time item 3 runs (a marker file remembers it)."""
    x, marker = job
    if x == 3 and not os.path.exists(marker):
        Path(marker).write_text("died")
        os._exit(1)
    return x * x


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def untimed(estimates) -> list[dict]:
    return [{k: v for k, v in e.to_dict().items() if k != "seconds"} for e in estimates]


def test_results_come_back_keyed_in_the_items_order_whatever_finishes_first():
    items = [(f"k{i}", i) for i in range(20)]
    with make_executor("local", 2) as pool:
        assert isinstance(pool, ProcessPoolExecutor)
        got = map_items(square, items, pool, window=3)
    assert list(got) == [k for k, _ in items]
    assert list(got.values()) == [i * i for i in range(20)]
    with pytest.raises(ExecutorError, match="unique keys"):
        map_items(square, [("a", 1), ("a", 2)])


def test_a_local_worker_that_dies_loses_nothing(tmp_path):
    marker = str(tmp_path / "died")
    items = [(f"k{i}", (i, marker)) for i in range(12)]
    store = ResultStore(tmp_path / "s.jsonl", {"test": "die"})
    seen: list[int] = []
    pool = ProcessPoolExecutor(2, mp_context=get_context("fork"))
    with pool:
        got = map_items(die_once, items, pool, store=store, progress=seen.append)
    assert Path(marker).exists()  # a worker did die mid-sweep
    assert got == {f"k{i}": i * i for i in range(12)}
    keys = [r["key"] for r in lines(tmp_path / "s.jsonl")[1:]]
    assert sorted(keys) == sorted(got) and len(seen) == 12  # each item once


def test_an_interrupted_sweep_continues_from_its_store(tmp_path):
    store = tmp_path / "sweep.jsonl"
    fresh = estimate_cells(CELLS, debates=3000, seed=7, chunk=500)

    class Stop(Exception):
        pass

    done = []

    def stop_after_four(n: int) -> None:
        done.append(n)
        if len(done) == 4:
            raise Stop

    with pytest.raises(Stop):
        estimate_cells(
            CELLS, debates=3000, seed=7, chunk=500, store=store, progress=stop_after_four
        )
    assert len(lines(store)) == 1 + 4  # the sweep's name, then four chunks
    with store.open("a") as f:
        f.write('{"key": "1/5", "res')  # a line cut short by the interruption
    counted = []
    resumed = estimate_cells(CELLS, debates=3000, seed=7, chunk=500, store=store,
                             progress=counted.append)  # fmt: skip
    assert untimed(resumed) == untimed(fresh)
    assert sum(counted) == 2 * 3000
    keys = [r["key"] for r in lines(store)[1:]]
    assert len(keys) == len(set(keys)) == 12


def test_a_store_of_another_sweep_is_refused(tmp_path):
    store = tmp_path / "sweep.jsonl"
    estimate_cells(CELLS[:1], debates=1000, seed=1, store=store)
    with pytest.raises(StoreError, match="another sweep"):
        estimate_cells(CELLS[:1], debates=1000, seed=2, store=store)
    (tmp_path / "junk.jsonl").write_text("hello\n")
    with pytest.raises(StoreError, match="not a sweep store"):
        ResultStore(tmp_path / "junk.jsonl", {})


def test_estimates_do_not_depend_on_the_local_executor():
    inline = estimate_cells(CELLS, debates=4000, seed=3, chunk=700)
    with make_executor("local", 2) as pool:
        pooled = estimate_cells(CELLS, debates=4000, seed=3, chunk=700, executor=pool)
    assert untimed(inline) == untimed(pooled)
    assert untimed(estimate_cells(CELLS, debates=4000, seed=3, chunk=700, workers=2)) == untimed(
        inline
    )


def test_a_parallel_executor_needs_machine_specs():
    from proofgames.stochastic.machines import make_stochastic_machine

    built = make_stochastic_machine("single-query:p=0.8")
    with (
        make_executor("local", 2) as pool,
        pytest.raises(Exception, match="registered spec string"),
    ):
        estimate_cells([Cell(built, "lean", 1, "honest", "honest")], debates=10, executor=pool)
    cell = Cell(built, "lean", 1, "honest", "honest")
    assert estimate_cells([cell], debates=10, executor=InlineExecutor())[0].debates == 10


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["estimate", "--executor", "spark"], "unknown executor 'spark'; choose local or dask"),
        (["estimate", "--executor", "dask", "--scheduler", "nowhere"], "bad scheduler address"),
        (["estimate", "--scheduler", "tcp://127.0.0.1:8786"], "needs the dask executor"),
        (["report", "--executor", "x", "--out", "r"], "unknown executor 'x'"),
        (["exhaustive", "bisection", "--executor", "x"], "unknown executor 'x'"),
        (["params", "report", "--executor", "x", "--out", "r"], "unknown executor 'x'"),
        (
            ["params", "report", "--scheduler", "tcp://127.0.0.1:8786", "--out", "r"],
            "needs the dask executor",
        ),
        (["pvg", "reproduce", "--executor", "x", "--profile", "smoke"], "unknown executor"),
        # issue 34: 100,000 local processes were started (the command never returned)
        (["estimate", "--workers", "100000"], "workers = 100,000 is over the limit"),
        (["report", "--workers", "100000", "--out", "r"], "workers = 100,000 is over the limit"),
    ],
)
def test_bad_executor_options_are_one_line_refusals(args, named, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and named in res.output
    assert not (tmp_path / "r").exists()  # refused before any work


def test_a_bad_address_in_the_environment_is_named(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "not an address")
    with pytest.raises(ExecutorError, match=r"from \$DASK_SCHEDULER_ADDRESS"):
        check_executor("dask")
    check_executor("local")  # the local executor never reads it


def test_exhaustive_searches_many_instances_in_order(tmp_path):
    args = ["exhaustive", "bisection", "-m", "bb2", "-m", "bb3", "-T", "6", "--json"]
    one = CliRunner().invoke(app, ["exhaustive", "bisection", "-m", "bb3", "-T", "6", "--json"])
    serial = CliRunner().invoke(app, args)
    parallel = CliRunner().invoke(app, [*args, "--workers", "2"])
    assert serial.exit_code == parallel.exit_code == one.exit_code == 0, serial.output

    def records(out: str) -> list[dict]:
        return [{k: v for k, v in json.loads(x).items() if k != "seconds"}
                for x in out.splitlines()]  # fmt: skip

    assert [r["machine"] for r in records(serial.output)] == ["bb2", "bb3"]
    assert records(serial.output) == records(parallel.output)
    assert records(serial.output)[1] == records(one.output)[0]


def test_inline_items_are_reported_and_stored_one_at_a_time(tmp_path):
    store = ResultStore(tmp_path / "s.jsonl", {"test": "inline"})
    computed: list[int] = []
    seen: list[tuple[int, int]] = []

    def work(x: int) -> int:
        computed.append(x)
        return x

    def progress(n: int) -> None:
        seen.append((len(computed), len(lines(tmp_path / "s.jsonl")) - 1))

    map_items(work, [(f"k{i}", i) for i in range(5)], InlineExecutor(), store=store,
              progress=progress)  # fmt: skip
    assert seen == [(i, i) for i in range(1, 6)]  # each stored before the next one ran


def test_an_interrupted_exhaustive_search_continues_from_its_store(tmp_path, monkeypatch):
    """Instances already in the store are not searched again; a machine given twice is
    searched once; a store of another T is refused before any search."""
    import proofgames.analysis._exhaustive_items as items

    store = tmp_path / "exhaustive.jsonl"
    first = CliRunner().invoke(app, ["exhaustive", "bisection", "-m", "bb2", "-T", "6",
                                     "--store", str(store), "--json"])  # fmt: skip
    assert first.exit_code == 0, first.output
    searched: list[str] = []
    real = items.instance_record

    def counted(job):
        searched.append(job[1])
        return real(job)

    monkeypatch.setattr(items, "instance_record", counted)
    args = ["exhaustive", "bisection", "-m", "bb2", "-m", "bb3", "-m", "bb2", "-T", "6",
            "--store", str(store), "--json"]  # fmt: skip
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert searched == ["bb3"]  # bb2 came from the store, and was not searched twice
    records = [json.loads(x) for x in again.output.splitlines()]
    assert [r["machine"] for r in records] == ["bb2", "bb3", "bb2"]
    assert records[0] == records[2] == json.loads(first.output)  # the stored record itself
    assert [r["key"] for r in lines(store)[1:]] == ["bb2", "bb3"]
    other = CliRunner().invoke(app, ["exhaustive", "bisection", "-m", "bb2", "-T", "5",
                                     "--store", str(store)])  # fmt: skip
    assert other.exit_code == 2 and "another sweep" in other.output, other.output
    assert searched == ["bb3"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["exhaustive", "bisection", "-m", "bb2", "-T", "6"],
        ["estimate", "-m", "majority:n=3,p=0.6", "--debates", "100"],
        ["report", "--out", "r", "--debates", "10"],
    ],
)
def test_a_store_path_the_system_cannot_name_is_a_one_line_refusal(command, tmp_path, monkeypatch):
    """A NUL in the path made pathlib raise ValueError (found by the fuzz suite). The command
    line refuses it before the command runs; the store's own refusal ("cannot read the
    store"), for callers of the library, is tested in tests/reporting/test_reading.py."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, [*command, "--store", "bad\x00name"])
    assert res.exit_code == 2, (res.output, res.exception)
    assert "contains a NUL character" in " ".join(res.output.split())
    assert "Traceback" not in res.output and list(tmp_path.iterdir()) == []


ORPHAN_SCRIPT = """
import os, sys, time
from proofgames.sweeps.executors import make_executor

def spin(path):
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(path + ".tmp", path)
    time.sleep(600)

if __name__ == "__main__":
    with make_executor("local", 2, start_method="spawn") as pool:
        pool.submit(spin, sys.argv[1]).result()
"""


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\\tZ" not in status.split("State:", 1)[1].split("\\n", 1)[0]  # a zombie is done


@pytest.mark.slow
def test_local_workers_stop_when_their_parent_is_killed(tmp_path):
    script, marker = tmp_path / "orphans.py", tmp_path / "worker.pid"
    script.write_text(ORPHAN_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), str(marker)])
    for _ in range(600):  # until the worker has started its item (at most a minute)
        if marker.exists() or parent.poll() is not None:
            break
        time.sleep(0.1)
    worker = int(marker.read_text())
    try:
        assert _running(worker)
        parent.kill()  # SIGKILL: the parent can do nothing about its workers
        parent.wait()
        for _ in range(300):  # the watch checks once a second
            if not _running(worker):
                break
            time.sleep(0.1)
        assert not _running(worker)
    finally:  # leave no sleeping worker behind, whatever happened
        parent.kill()
        if _running(worker):
            os.kill(worker, signal.SIGKILL)
