"""Load benchmark of the judge server: answers per second with concurrent raters.

Seeds a fresh database with one study, R raters and enough open questions (k = 1),
starts ``proofgames judge serve`` in its own process (one uvicorn worker) on
127.0.0.1, and runs R simulated raters as asyncio tasks, each with its own HTTP client
and session: fetch the next assignment, answer it, repeat, for ``--seconds``. Every
answer is committed (SQLite: WAL, synchronous=FULL) before it is acknowledged.

Reports sustained answers per second and the latency of the answer request (p50,
p95, p99), plus the whole fetch+answer cycle. Client and server share this machine.

The floor (``judge_floor.py``), measured in the same run with the same raters and
seconds: a minimal FastAPI + SQLite pair of endpoints doing the same durable work
(hand out a question, insert the answer, commit with ``synchronous=FULL``) and nothing
else. The ratio of the two throughputs is the cost of sessions, CSRF, validation, the
audit log and the study logic.

Run:  .venv/bin/python benchmarks/bench_judge_load.py [--raters 50] [--seconds 30]
      [--db postgresql+psycopg://user@host:port/db] [--json] [--publish]
(``--publish`` writes benchmarks/results/judge_load.{json,md}.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from proofgames.judge import accounts, service
from proofgames.judge.app import create_app
from proofgames.judge.models import Membership, Question
from proofgames.judge.web import Settings
from proofgames.judges import StepQuestion
from proofgames.reporting import write_atomic, write_json

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge_floor

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a long password"


def seed(url: str, raters: int, questions: int) -> None:
    """A study with ``raters`` raters and ``questions`` open questions (k = 1)."""
    app = create_app(Settings(database_url=url))
    with app.state.runtime.sessions() as db:
        study = service.create_study(db, "load", 1)
        for i in range(raters):
            user = accounts.create_user(db, f"r{i}@example.org", "rater", PASSWORD)
            db.add(Membership(study_id=study.id, user_id=user.id))
        for i in range(questions):
            q = StepQuestion(
                task="Compute (3 + 4) * 5.", premises=("3 + 4 = 7",), step=f"7 * 5 = {i}"
            )
            db.add(
                Question(
                    study_id=study.id,
                    debate_id=f"load-{i}",
                    question_id=q.question_id,
                    payload=q.to_dict(),
                    k=1,
                    n_answers=0,
                    closed=False,
                )
            )
        db.commit()
    app.state.engine.dispose()


async def login(client: httpx.AsyncClient, i: int) -> dict[str, str]:
    """Log rater ``i`` in; returns the headers of its requests (session cookie, CSRF token)."""
    body = {"email": f"r{i}@example.org", "password": PASSWORD}
    r = await client.post("/api/v1/login", json=body)
    if r.status_code != 200:
        raise SystemExit(f"rater {i} could not log in: {r.status_code} {r.text[:300]}")
    # the session cookie sent as a plain header: httpx's cookie jar costs the clients,
    # which share this machine with the server, about 0.2 ms of CPU a request
    session = client.cookies.get("pg_session")
    client.cookies.clear()
    return {"x-csrf-token": r.json()["csrf_token"], "cookie": f"pg_session={session}"}


async def rater(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    i: int,
    stop: float,
    lat: dict[str, list[float]],
) -> int:
    """One simulated rater; returns how many answers it got acknowledged."""
    done = 0
    floor = not headers
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        path = "/next" if floor else "/api/v1/assignments/next"
        nxt = (await client.get(path, headers=headers)).json()
        if (nxt["id"] if floor else nxt["assignment"]) is None:
            break
        if floor:
            body: dict[str, Any] = {"yes": i % 2 == 0, "confidence": 3}
            url = f"/answer/{nxt['id']}"
        else:
            body = {"yes": i % 2 == 0, "confidence": 3, "shown_sha256": nxt["shown_sha256"]}
            url = f"/api/v1/assignments/{nxt['assignment']}/answer"
        t1 = time.perf_counter()
        r = await client.post(url, json=body, headers=headers)
        t2 = time.perf_counter()
        if r.status_code == 200 and r.json()["status"] == "recorded":
            done += 1
            lat["answer"].append(t2 - t1)
            lat["cycle"].append(t2 - t0)
        else:
            lat["refused"].append(t2 - t1)
    return done


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000.0


async def drive(
    url: str, raters: int, seconds: float, floor: bool = False, pid: int | None = None
) -> dict[str, Any]:
    """Log every rater in (not on the floor), then let them answer for ``seconds``.

    With the server's ``pid``, the CPU time the server and the clients spent per
    acknowledged answer, from the end of the logins (a login's password hash costs
    tens of milliseconds, which is not the cost of an answer) to the end.
    """
    lat: dict[str, list[float]] = {"answer": [], "cycle": [], "refused": []}
    # idle connections closed before the server's 5 s keep-alive timeout: otherwise a
    # request sent as the server closes one fails ("disconnected without a response")
    limits = httpx.Limits(keepalive_expiry=2.0)
    clients = [httpx.AsyncClient(base_url=url, timeout=60, limits=limits) for _ in range(raters)]
    if floor:
        headers: list[dict[str, str]] = [{} for _ in clients]
    else:
        # at most 10 at once: the login limit counts each check in flight as a failure
        # until it succeeds, so 50 at once from one address would pass its 30 per address
        gate = asyncio.Semaphore(10)

        async def gated(c: httpx.AsyncClient, i: int) -> dict[str, str]:
            async with gate:
                return await login(c, i)

        headers = list(await asyncio.gather(*(gated(c, i) for i, c in enumerate(clients))))
    server0 = None if pid is None else cpu_seconds(pid)
    client0 = time.process_time()
    start = time.perf_counter()
    stop = start + seconds
    counts = await asyncio.gather(
        *(rater(c, h, i, stop, lat) for i, (c, h) in enumerate(zip(clients, headers, strict=True)))
    )
    wall = time.perf_counter() - start
    server1 = None if pid is None else cpu_seconds(pid)
    client1 = time.process_time()
    for c in clients:
        await c.aclose()
    answers = sum(counts)
    n = max(answers, 1)
    cpu: dict[str, float] = {"client_cpu_ms_per_answer": round(1000 * (client1 - client0) / n, 2)}
    if server0 is not None and server1 is not None:
        cpu["server_cpu_ms_per_answer"] = round(1000 * (server1 - server0) / n, 2)
    return {
        **cpu,
        "answers": answers,
        "refused": len(lat["refused"]),
        "wall_s": round(wall, 2),
        "answers_per_s": round(answers / wall, 1),
        "answer_ms": {
            q: round(pct(lat["answer"], v), 1)
            for q, v in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
        },
        "cycle_ms": {q: round(pct(lat["cycle"], v), 1) for q, v in (("p50", 0.5), ("p95", 0.95))},
        "answer_ms_mean": round(statistics.mean(lat["answer"]) * 1000, 1),
    }


def serve(url: str, port: int, floor: bool = False, workers: int = 1) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "proofgames", "judge", "serve", "--db", url]
    cmd += ["--port", str(port), "--no-demo", "--workers", str(workers)]
    if floor:
        script = str(ROOT / "benchmarks" / "judge_floor.py")
        cmd = [sys.executable, script, url, str(port), str(workers)]
    log = open(Path(tempfile.gettempdir()) / "bench_judge_server.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            probe = "/docs" if floor else "/login"
            if httpx.get(f"http://127.0.0.1:{port}{probe}", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the judge server did not start")


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` and its live children so far.

    Linux ``/proc`` (else None). The children are the worker processes of a server
    started with several; a child's time is counted while it runs (the benchmark reads
    it before the server stops).
    """
    fields = _stat(pid)
    if fields is None:
        return None
    ticks = int(fields[11]) + int(fields[12])
    for entry in Path("/proc").iterdir():
        child = _stat(int(entry.name)) if entry.name.isdigit() else None
        if child is not None and child[1] == str(pid):
            ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def run(
    url: str, port: int, raters: int, seconds: float, floor: bool = False, workers: int = 1
) -> dict[str, Any]:
    """Serve ``url`` (the judge server, or the floor) and drive it; the measurements.

    Besides throughput and latency: the CPU time the server and the clients spent per
    acknowledged answer, which other load on the machine does not change.
    """
    proc = serve(url, port, floor, workers)
    try:
        return asyncio.run(drive(f"http://127.0.0.1:{port}", raters, seconds, floor, proc.pid))
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--publish", action="store_true")
    parser.add_argument("--no-floor", action="store_true", help="skip the minimal endpoint")
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes (the judge's and the floor's)"
    )
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'load.db'}"
        seed(url, args.raters, args.questions)
        result = run(url, args.port, args.raters, args.seconds, workers=args.workers)
        if not args.no_floor:
            floor_db = str(Path(tmp) / "floor.db")
            judge_floor.seed(floor_db, args.questions)
            floor = run(
                floor_db, args.port + 1, args.raters, args.seconds, floor=True, workers=args.workers
            )
            result["floor"] = floor
            result["ratio_to_floor"] = round(floor["answers_per_s"] / result["answers_per_s"], 2)
    result["load_average_1min_after"] = round(os.getloadavg()[0], 1)
    result["conditions"] = {
        "raters": args.raters,
        "seconds": args.seconds,
        "database": url.split(":")[0]
        + (" (WAL, synchronous=FULL)" if url.startswith("sqlite") else ""),
        "server": f"{args.workers} uvicorn worker process(es) each, same machine as the clients",
        "cpus": os.cpu_count(),
        "load_average_1min_before": round(load_before, 1),
        "python": platform.python_version(),
    }
    if args.publish:
        out = ROOT / "benchmarks" / "results"
        write_json(out / "judge_load.json", result, indent=2)
        write_atomic(out / "judge_load.md", markdown(result))
    print(json.dumps(result, indent=2) if args.json else markdown(result))


def markdown(r: dict[str, Any]) -> str:
    c = r["conditions"]
    rows = [("judge server", r)] + (
        [("floor: FastAPI + SQLite", r["floor"])] if "floor" in r else []
    )
    lines = [
        "| server | raters | database | answers | answers/s | answer p50 | answer p95 "
        "| answer p99 | cycle p95 | server CPU an answer | clients' CPU an answer |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in rows:
        lines.append(
            f"| {name} | {c['raters']} | {c['database']} | {m['answers']:,} in {m['wall_s']} s "
            f"| {m['answers_per_s']} | {m['answer_ms']['p50']} ms | {m['answer_ms']['p95']} ms "
            f"| {m['answer_ms']['p99']} ms | {m['cycle_ms']['p95']} ms "
            f"| {m.get('server_cpu_ms_per_answer', '-')} ms "
            f"| {m['client_cpu_ms_per_answer']} ms |"
        )
    tail = f"\nFloor / judge server throughput: {r['ratio_to_floor']}x. " if "floor" in r else "\n"
    tail += (
        f"Load average (1 min) {c['load_average_1min_before']} before, "
        f"{r['load_average_1min_after']} after; {c['cpus']} CPUs.\n"
    )
    return "\n".join(lines) + "\n" + tail


if __name__ == "__main__":
    main()
