"""Dask distributed through the executor seam: same numbers as the local executor, nothing
lost when a worker is killed mid-sweep.

An in-process client (threads of this process) and a ``LocalCluster`` of 2 worker
processes of one thread each, shared by the module's tests.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from proofgames.analysis._exhaustive_items import search_instances  # noqa: E402
from proofgames.experiments.montecarlo import Cell, estimate_cells  # noqa: E402
from proofgames.sweeps.executors import dashboard_link, make_executor  # noqa: E402

pytestmark = pytest.mark.dask

CELLS = [
    Cell("single-query:p=0.8", "lean", 1, "honest", "abort-at"),
    Cell("majority:n=3,p=0.38", "paper", 1, "shift:delta=0.1", "honest"),
    Cell("long-computation:t=30,votes=3", "lean", 1, "honest", "honest"),
]


def untimed(estimates) -> list[dict]:
    return [{k: v for k, v in e.to_dict().items() if k != "seconds"} for e in estimates]


@pytest.fixture(scope="module")
def local_numbers() -> list[dict]:
    return untimed(estimate_cells(CELLS, debates=3000, seed=11, chunk=600))


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 worker processes (one thread each) and its client."""
    with make_executor("dask", workers=2) as executor:
        yield executor._client, executor


def test_an_in_process_client_gives_the_local_numbers(local_numbers):
    with distributed.Client(processes=False, dashboard_address=":0") as client:
        executor = client.get_executor(pure=False)
        got = estimate_cells(CELLS, debates=3000, seed=11, chunk=600, executor=executor)
    assert untimed(got) == local_numbers


@pytest.mark.slow
def test_two_worker_processes_give_the_local_numbers(cluster, local_numbers):
    client, executor = cluster
    assert len(client.scheduler_info()["workers"]) == 2
    got = estimate_cells(CELLS, debates=3000, seed=11, chunk=600, executor=executor)
    assert untimed(got) == local_numbers
    records = search_instances("bisection", ["bb2", "bb3"], 6, executor=executor)
    assert [r["truth"] for r in records] == [
        r["truth"] for r in search_instances("bisection", ["bb2", "bb3"], 6)
    ]
    assert dashboard_link(executor) is not None


@pytest.mark.slow
def test_a_worker_killed_mid_sweep_loses_nothing(cluster, tmp_path):
    client, executor = cluster
    cells = [Cell("long-computation:t=300,votes=3", "lean", 1, "honest", "honest")]
    kwargs = {"debates": 48_000, "seed": 5, "chunk": 3000}  # 16 chunks of ~0.3 s
    expected = untimed(estimate_cells(cells, **kwargs))
    pids = client.run(os.getpid)  # {worker address: process id}
    victim = sorted(pids.values())[0]
    finished: list[int] = []
    killed = threading.Event()

    def kill_after_three(n: int) -> None:
        finished.append(n)
        if len(finished) == 3 and not killed.is_set():
            os.kill(victim, signal.SIGKILL)  # mid-sweep: both workers hold a chunk
            killed.set()

    store = tmp_path / "sweep.jsonl"
    got = estimate_cells(cells, **kwargs, executor=executor, store=store, progress=kill_after_three)
    assert killed.is_set()
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)  # that worker process is gone
    assert untimed(got) == expected  # nothing lost, nothing counted twice
    keys = [json.loads(line)["key"] for line in store.read_text().splitlines()[1:]]
    assert sorted(keys) == sorted(f"0/{j}" for j in range(16))
    assert len(finished) == 16


@pytest.mark.slow
def test_the_cli_shows_one_bar_and_the_dashboard_on_a_terminal_only(tmp_path: Path, monkeypatch):
    """``estimate --executor dask``: the local numbers; on a terminal the bar and the
    dashboard's address, in a pipe nothing at all on stderr (no Dask logs either)."""
    from ..cli.test_progress_terminal import run

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    args = ["estimate", "-m", "majority:n=3,p=0.62", "--debates", "2000", "--chunk", "500",
            "--json"]  # fmt: skip
    dask = [*args, "--executor", "dask", "--workers", "2"]
    code, local, _ = run(args, terminal=False, cwd=tmp_path)
    shown = run(dask, terminal=True, cwd=tmp_path)
    piped = run(dask, terminal=False, cwd=tmp_path)
    assert code == shown[0] == piped[0] == 0, shown[2][-500:]
    assert b"Dask dashboard: " in shown[2] and b"/status" in shown[2]
    assert b"debates" in shown[2] and b"2000/2000" in shown[2]
    assert piped[2] == b""
    numbers = [json.loads(out) for out in (local, shown[1], piped[1])]
    for n in numbers:
        n.pop("seconds")
    assert numbers[0] == numbers[1] == numbers[2]


def test_an_existing_cluster_is_used_through_its_address(cluster, monkeypatch):
    client, _ = cluster
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", client.scheduler.address)
    with make_executor("dask") as executor:
        got = estimate_cells(CELLS[:1], debates=1000, seed=2, executor=executor)
    assert untimed(got) == untimed(estimate_cells(CELLS[:1], debates=1000, seed=2))


@pytest.mark.slow
def test_a_pvg_seed_continues_from_its_state_on_whichever_worker_picks_it_up(
    tmp_path, one_torch_thread
):
    """A worker died after its seed saved a training state: the seed, run again on a
    Dask worker, continues from that state to the uninterrupted result."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from proofgames.pvg.checkpoint import STATE_FILE
    from proofgames.pvg.reproduce._saved_runs import RUN_FILE
    from proofgames.pvg.reproduce.profiles import PROFILES
    from proofgames.pvg.reproduce.reproduce import _ftp_seed, reproduce, seed_jobs
    from proofgames.sweeps.executors import map_items

    smoke = PROFILES["smoke"]  # FindThePlus: 6 PVG steps
    cut_short = replace(smoke, ftp=tuple({**dict(smoke.ftp), "steps": 3}.items()))
    args = {"seeds": (0,), "tasks": ("find-the-plus",), "device": "cpu"}
    whole = reproduce(profile=smoke, **args)["find-the-plus"]
    runs = tmp_path / "runs"
    reproduce(profile=cut_short, runs_dir=runs, **args)  # the died worker's 3 of 6 steps
    pvg_run = runs / "find-the-plus-pvg-s0"
    (pvg_run / RUN_FILE).unlink()  # it died before finishing: only its state is there
    assert (pvg_run / STATE_FILE).is_file()
    jobs = seed_jobs((0,), smoke, "cpu", False, runs, False, 8.0)  # a call without resume
    with distributed.Client(processes=False, dashboard_address=":0") as client:
        done = map_items(_ftp_seed, jobs, client.get_executor(pure=False))
    (seed_runs, _, _) = done["seed-0"]
    timing = {"seconds", "train_seconds", "stress_seconds", "sound_seconds", "carried_over"}

    def measured(rs):
        return [{k: v for k, v in r.items() if k not in timing} for r in rs]

    assert measured(seed_runs) == measured(whole["runs"])
    assert seed_runs[0]["carried_over"]  # continued, not trained afresh


def test_an_unreachable_scheduler_is_one_line_refusal(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from proofgames.cli import app
    from proofgames.sweeps import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.chdir(tmp_path)
    args = ["estimate", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in res.output
    assert "Traceback" not in res.output


def test_the_dashboard_link_serves_the_dashboards_pages(cluster):
    """The link shown above the bar opens the real dashboard (its pages need bokeh, which
    the ``dask`` extra installs), not Dask's page asking for bokeh."""
    import urllib.request

    pytest.importorskip("bokeh")
    _, executor = cluster
    link = dashboard_link(executor)
    assert link is not None
    with urllib.request.urlopen(link, timeout=30) as page:
        html = page.read().decode()
    assert "bokeh" in html.lower()
    assert "pip install" not in html  # the page Dask serves when bokeh is missing


def test_local_cluster_workers_keep_glibcs_adaptive_malloc(cluster):
    """Dask's default MALLOC_TRIM_THRESHOLD_ slows NumPy-heavy chunks (measured 2.6x): the
    LocalCluster proofgames starts leaves it unset in its workers, and in this process."""
    client, _ = cluster
    seen = client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_")
    assert len(seen) == 2 and set(seen.values()) == {None}
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ
