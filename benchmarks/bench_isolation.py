"""Benchmark of process isolation: what talking to provers over the wire costs.

Measures, in one run on this machine, as ratios isolated / in-process:
  * per-message overhead: V's call of a trivial move (cross-examination B ``first``: a
    challenge with no reads, and bisection B ``second`` on bb5's 12,289-cell
    configurations) through ``Party.call``, in-process vs to a prover's own process;
  * whole debates of the 47,176,870-step bb5, bisection and cross-examination, honest A
    vs honest B, in-process vs both provers isolated, each prover's process either
    started (it imports proofgames, loads the compiled kernels and builds bb5 from its
    description, without running it) or forked by a party server started here
    (:mod:`proofgames.isolation.server`, warm).  Wall time and CPU time (V's and every
    prover's), modes taken round-robin; isolated provers simulate at set-up at once
    (``prepare``), so on two free cores the wall time of honest A vs honest B drops
    towards one run, while on one core it cannot;
  * the standalone prover (``examples/standalone_bisection_prover.py``, no proofgames
    import) as A against isolated honest B (a program: always started);
  * two floors written here: for each message, a minimal ping-pong of the same encoded
    line with a Python process that parses it (``json.loads``) and answers a constant
    line over pipes; for the debates, one run of bb5 by the C loop of
    ``bench_deterministic.py`` (``gcc -O2``, its own clock), taken in the same rounds.

The load average and the CPUs this process may use are recorded; run it pinned (``taskset
-c 0``) on a machine whose other core is busy, and the figures are one core's.

Prints a markdown table, or one JSON object with ``--json``; with ``--publish`` it also
writes benchmarks/results/isolation.{json,md} and the ``bench:isolation`` block of
docs/performance.md.
Run:  taskset -c 0 .venv/bin/python benchmarks/bench_isolation.py [--json] [--repeat N] [--publish]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_deterministic import c_loop

from proofgames import wire
from proofgames.harness import play, resolve_instance
from proofgames.isolation import isolated_players
from proofgames.isolation._served import ENV
from proofgames.isolation.server import busy_children, children_cpu, serving
from proofgames.protocols import get_protocol
from proofgames.protocols._catalog import Options
from proofgames.protocols._common import Debate
from proofgames.protocols.bisection import BisectionState
from proofgames.protocols.roles import wire_arguments
from proofgames.reporting import write_atomic, write_json
from proofgames.strategies import make_strategy
from proofgames.wire import as_choice, as_int

ROOT = Path(__file__).resolve().parent.parent
PROVER = [sys.executable, str(ROOT / "examples" / "standalone_bisection_prover.py")]


def _per_call(party: Any, args: tuple[Any, ...], method: str, parse: Any, n: int) -> float:
    """Median seconds of one ``Party.call`` over ``n`` calls (in batches of 10)."""
    times = []
    for _ in range(max(1, n // 10)):
        start = time.perf_counter()
        for _ in range(10):
            party.call(method, method, *args, parse=parse)
        times.append((time.perf_counter() - start) / 10)
    return statistics.median(times)


FLOOR_CHILD = """
import os, sys, json
out = os.fdopen(1, "wb", buffering=0)
for line in sys.stdin.buffer:
    json.loads(line)
    out.write(b'{"type":"result","value":"second","work":0,"queries":0}\\n')
"""


def pipe_floor(line: bytes, n: int) -> float:
    """Median seconds of a minimal round trip of ``line``: a child parses it and answers."""
    proc = subprocess.Popen([sys.executable, "-c", FLOOR_CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    fd, times = proc.stdin.fileno(), []
    try:
        for _ in range(max(1, n // 10)):
            start = time.perf_counter()
            for _ in range(10):
                os.write(fd, line)
                proc.stdout.readline()
            times.append((time.perf_counter() - start) / 10)
    finally:
        proc.stdin.close()
        proc.wait()
    return statistics.median(times)


def _message_case(protocol: str, spec: str, b: str, method: str, n_iso: int) -> dict[str, Any]:
    inst = resolve_instance(protocol, spec)
    machine = inst.target
    if protocol == "bisection":  # configurations of the real run, a dispute of round 2
        t = inst.steps // 4
        start, mid, end = (machine.advance(machine.initial(), k * t) for k in (1, 2, 3))
        args: tuple[Any, ...] = (BisectionState(start, end, 2 * t, t, 1), mid)

        def parse(r: object) -> object:
            return as_choice(r, ("first", "second"), "dispute")
    else:
        args = (lambda positions: None,)

        def parse(r: object) -> object:
            return as_int(r, "challenge")

    honest_a = make_strategy(protocol, "A", "honest")
    d = Debate(protocol, honest_a, make_strategy(protocol, "B", b), None, 0)
    ctx = d.context("B", machine, inst.steps, 1, None)
    inproc = _per_call(d.parties["B"], (ctx, *args), method, parse, 20 * n_iso)
    with isolated_players(protocol, inst, 1, "honest", b, Options()) as (xa, xb):
        d = Debate(protocol, xa, xb, None, 0)
        isolated = _per_call(d.parties["B"], (ctx, *args), method, parse, n_iso)
    plain, _ = wire_arguments(get_protocol(protocol).roles["B"].method(method), (ctx, *args))
    line = wire.encode({"type": "call", "method": method, "args": plain}, compress=True)
    floor = pipe_floor(line, n_iso)
    return {"in_process_s": inproc, "isolated_s": isolated, "ratio": isolated / inproc,
            "floor_s": floor, "line_bytes": len(line), "over_floor": isolated / floor}  # fmt: skip


MODES = ("in-process", "process", "served")  # served: forked by the party server


def _cpu() -> float:
    """CPU seconds of this process and the children it has reaped."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def served_cpu(server: int) -> float:
    """CPU of the server's reaped children, once it has reaped every prover (V let them go).

    A prover the server had forked ahead as a spare counts its warm-up too; idle spares,
    not yet reaped, count nothing.
    """
    end = time.monotonic() + 10
    while busy_children(server) and time.monotonic() < end:
        time.sleep(0.005)
    return children_cpu(server)


def _one(protocol: str, inst: Any, a: Any, mode: str, server: int) -> tuple[float, float, float]:
    """(wall, CPU, debate-only clock) of one debate; CPU includes every prover's process."""
    iso = "in-process" if mode == "in-process" else "process"
    env = {ENV: os.environ.pop(ENV, "")}
    if mode == "served":
        os.environ[ENV] = env[ENV]
    cpu, served, start = _cpu(), served_cpu(server), time.perf_counter()
    try:
        out = play(protocol, inst, claim=1, a=a, b="honest", isolation=iso)
    finally:
        os.environ[ENV] = env[ENV]
    wall = time.perf_counter() - start
    cpu = _cpu() - cpu + served_cpu(server) - served
    assert out.winner == "A" and out.forfeit is None, out.reason
    return wall, cpu, out.costs.seconds


def _debate_case(
    protocol: str, a: Any, repeat: int, server: int, c_run: Any = None
) -> dict[str, Any]:
    """Each mode once per round, round-robin, ``repeat`` rounds: medians and ratios.

    With ``c_run``, one C run of bb5 per round too: ``c_wall_s`` and each mode's wall / C.
    """
    inst = resolve_instance(protocol, "bb5")
    modes = MODES if a == "honest" else MODES[1:]
    runs: dict[str, list[tuple[float, float, float]]] = {m: [] for m in modes}
    c_walls = []
    for _ in range(repeat):
        for mode in modes:
            runs[mode].append(_one(protocol, inst, a, mode, server))
        if c_run is not None:
            c_walls.append(c_run()[0])
    out: dict[str, Any] = {"runs": runs}
    if c_walls:
        out["c_walls"], out["c_wall_s"] = c_walls, statistics.median(c_walls)
        for mode in modes:
            out[f"{mode}_over_c_wall"] = (
                statistics.median(r[0] for r in runs[mode]) / out["c_wall_s"]
            )
    for mode, rs in runs.items():
        for i, what in enumerate(("wall", "cpu", "debate_only")):
            out[f"{mode}_{what}_s"] = statistics.median(r[i] for r in rs)
    for mode in modes[1:] if a == "honest" else ():
        for what in ("wall", "cpu"):
            out[f"{mode}_over_in_process_{what}"] = (
                out[f"{mode}_{what}_s"] / out[f"in-process_{what}_s"]
            )
    return out


def measure(repeat: int, n_iso: int) -> dict[str, Any]:
    """Every figure of the benchmark (the party server started here for the served rows)."""
    play("bisection", "bb5", claim=1, a="honest", b="honest")  # warm the compiled engine
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(),
               "platform": platform.platform(),
               "cpu_affinity": sorted(os.sched_getaffinity(0))}  # fmt: skip
    load_before = os.getloadavg()
    with (
        c_loop() as c_run,
        tempfile.TemporaryDirectory() as d,
        serving(Path(d) / "party.sock") as server,
    ):
        os.environ[ENV] = str(Path(d) / "party.sock")  # read by _one's served mode only
        try:
            messages = {
                "trivial call (cross-examination B first, bb2)": _message_case(
                    "cross-examination", "bb2", "first", "challenge", n_iso
                ),
                "dispute with bb5 configurations (3 x 12,289 cells)": _message_case(
                    "bisection", "bb5", "second", "dispute", n_iso
                ),
            }
            debates = {
                "bisection bb5, honest A vs honest B": _debate_case(
                    "bisection", "honest", repeat, server.pid, c_run
                ),
                "cross-examination bb5, honest A vs honest B": _debate_case(
                    "cross-examination", "honest", repeat, server.pid
                ),
                "bisection bb5, standalone prover A vs honest B": _debate_case(
                    "bisection", PROVER, repeat, server.pid
                ),
            }
        finally:
            os.environ.pop(ENV, None)
    return {
        "machine": machine, "repeat": repeat, "load_average_before": load_before,
        "load_average_after": os.getloadavg(), "messages": messages, "debates": debates,
    }  # fmt: skip


def _fmt(x: float | None, unit: str = "s") -> str:
    if x is None:
        return "-"
    if unit == "us":
        return f"{x * 1e6:,.1f} µs"
    return f"{x:.2f} s"


def table(res: dict[str, Any]) -> str:
    """The results as markdown."""
    m, la, lb = res["machine"], res["load_average_before"], res["load_average_after"]
    lines = [
        f"Process isolation on CPUs {m['cpu_affinity']} of {m['cpus']}, Python {m['python']}; "
        f"medians of {res['repeat']} debates per mode, taken round-robin; load average "
        f"{la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} before, {lb[0]:.2f} / {lb[1]:.2f} / "
        f"{lb[2]:.2f} after. CPU: V's process and every prover's (started: V's reaped "
        "children; served: the party server's reaped children).",
        "",
        "| per message | in-process | isolated | ratio | floor: the same line, pipe ping-pong "
        "| isolated / floor |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in res["messages"].items():
        lines.append(
            f"| {name} | {_fmt(r['in_process_s'], 'us')} | "
            f"{_fmt(r['isolated_s'], 'us')} | {r['ratio']:,.0f}x | "
            f"{_fmt(r['floor_s'], 'us')} ({r['line_bytes']:,} bytes) | {r['over_floor']:.1f}x |"
        )
    lines += [
        "",
        "| whole debate (wall / CPU) | in-process | isolated, started | isolated, party server "
        "| started / in-process | server / in-process |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in res["debates"].items():
        cells = [
            "-" if f"{mode}_wall_s" not in r else
            f"{r[f'{mode}_wall_s']:.2f} / {r[f'{mode}_cpu_s']:.2f} s"
            for mode in MODES
        ]  # fmt: skip
        ratios = [
            "-" if f"{mode}_over_in_process_wall" not in r else
            f"{r[f'{mode}_over_in_process_wall']:.2f}x / {r[f'{mode}_over_in_process_cpu']:.2f}x"
            for mode in MODES[1:]
        ]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    for name, r in res["debates"].items():
        if "c_wall_s" in r:
            shown = ", ".join(
                f"{mode} {r[f'{mode}_wall_s']:.3f} s ({r[f'{mode}_over_c_wall']:.2f}x)"
                for mode in MODES
            )
            lines += ["", f"{name}, wall medians against one C run of bb5 in the same rounds "
                      f"({r['c_wall_s']:.3f} s, gcc -O2, its own clock): {shown}."]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=3, help="debates per configuration")
    parser.add_argument("--calls", type=int, default=2000, help="isolated calls per message")
    parser.add_argument("--publish", action="store_true", help="write results and docs block")
    args = parser.parse_args()
    res = measure(args.repeat, args.calls)
    print(json.dumps(res, indent=2) if args.json else table(res))
    if args.publish:
        publish(res)


def publish(res: dict[str, Any]) -> None:
    """results/isolation.{json,md} and the docs/performance.md block."""
    from proofgames.reporting import replace_block

    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    write_json(results / "isolation.json", res, indent=2)
    day = time.strftime("%Y-%m-%d")
    cpus = sorted(os.sched_getaffinity(0))
    pinned = f"taskset -c {','.join(map(str, cpus))} " if len(cpus) < (os.cpu_count() or 1) else ""
    md = (
        f"Measured {day} on {platform.machine()}, CPython {platform.python_version()}, "
        f"{os.cpu_count()} cores (`{pinned}.venv/bin/python benchmarks/bench_isolation.py "
        f"--publish`: {len(cpus)} of them)."
        "\n\n" + table(res)
    )
    write_atomic(results / "isolation.md", md + "\n")
    replace_block(ROOT / "docs" / "performance.md", "bench:isolation", md)


if __name__ == "__main__":
    main()
