"""Benchmark of process isolation: what talking to provers over the wire costs.

Measures, in one run on this machine, as ratios isolated / in-process:
  * per-message overhead: V's call of a trivial move (cross-examination B ``first``: a
    challenge with no reads, and bisection B ``second`` on bb5's 12,289-cell
    configurations) through ``Party.call``, in-process vs to a prover's own process;
  * whole-debate wall time of the 47,176,870-step bb5, bisection and cross-examination,
    honest A vs honest B, in-process vs both provers isolated.  The isolated time
    includes starting both processes (each imports proofgames and builds bb5 from its
    description, without running it); the "debate only" column is the outcome's own
    clock, which starts once both processes are ready;
  * the standalone prover (``examples/standalone_bisection_prover.py``, no proofgames
    import) as A against isolated honest B.

Prints a markdown table, or one JSON object with ``--json``; with ``--publish`` it also
writes benchmarks/results/isolation.{json,md} and the ``bench:isolation`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_isolation.py [--json] [--repeat N] [--publish]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from proofgames.harness import play, resolve_instance
from proofgames.isolation import isolated_players
from proofgames.protocols._catalog import Options
from proofgames.protocols._common import Debate
from proofgames.protocols.bisection import BisectionState
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


def _message_case(protocol: str, spec: str, b: str, method: str, n_iso: int) -> dict[str, Any]:
    inst = resolve_instance(protocol, spec)
    machine = inst.target
    if protocol == "bisection":
        start = machine.initial()
        args: tuple[Any, ...] = (BisectionState(start, start, inst.steps), start)

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
    return {"in_process_s": inproc, "isolated_s": isolated, "ratio": isolated / inproc}


def _debate_case(protocol: str, a: Any, repeat: int) -> dict[str, Any]:
    inst = resolve_instance(protocol, "bb5")
    rows: dict[str, list[float]] = {"in-process": [], "process": [], "debate": []}
    for _ in range(repeat):
        for iso in ("in-process", "process") if a == "honest" else ("process",):
            start = time.perf_counter()
            out = play(protocol, inst, claim=1, a=a, b="honest", isolation=iso)
            rows[iso].append(time.perf_counter() - start)
            assert out.winner == "A" and out.forfeit is None, out.reason
            if iso == "process":
                rows["debate"].append(out.costs.seconds)
    med = {k: statistics.median(v) if v else None for k, v in rows.items()}
    ratio = med["process"] / med["in-process"] if med["in-process"] else None
    return {"in_process_s": med["in-process"], "isolated_s": med["process"],
            "isolated_debate_only_s": med["debate"], "ratio": ratio}  # fmt: skip


def measure(repeat: int, n_iso: int) -> dict[str, Any]:
    """Every figure of the benchmark."""
    play("bisection", "bb5", claim=1, a="honest", b="honest")  # warm the compiled engine
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(),
               "platform": platform.platform()}  # fmt: skip
    return {
        "machine": machine,
        "repeat": repeat,
        "messages": {
            "trivial call (cross-examination B first, bb2)": _message_case(
                "cross-examination", "bb2", "first", "challenge", n_iso
            ),
            "dispute with bb5 configurations (3 x 12,289 cells)": _message_case(
                "bisection", "bb5", "second", "dispute", n_iso
            ),
        },
        "debates": {
            "bisection bb5, honest A vs honest B": _debate_case("bisection", "honest", repeat),
            "cross-examination bb5, honest A vs honest B": _debate_case(
                "cross-examination", "honest", repeat
            ),
            "bisection bb5, standalone prover A vs honest B": _debate_case(
                "bisection", PROVER, repeat
            ),
        },
    }


def _fmt(x: float | None, unit: str = "s") -> str:
    if x is None:
        return "-"
    if unit == "us":
        return f"{x * 1e6:,.1f} µs"
    return f"{x:.2f} s"


def table(res: dict[str, Any]) -> str:
    """The results as markdown."""
    m = res["machine"]
    lines = [
        f"Process isolation on {m['cpus']} CPUs, Python {m['python']} "
        f"(medians of {res['repeat']} debates)",
        "",
        "| what | in-process | isolated | ratio |",
        "|---|---:|---:|---:|",
    ]
    for name, r in res["messages"].items():
        lines.append(
            f"| per message: {name} | {_fmt(r['in_process_s'], 'us')} | "
            f"{_fmt(r['isolated_s'], 'us')} | {r['ratio']:,.0f}x |"
        )
    for name, r in res["debates"].items():
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        lines.append(
            f"| whole debate: {name} | {_fmt(r['in_process_s'])} | "
            f"{_fmt(r['isolated_s'])} (debate only {_fmt(r['isolated_debate_only_s'])}) "
            f"| {ratio} |"
        )
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
    md = (
        f"Measured {day} on {platform.machine()}, CPython {platform.python_version()}, "
        f"{os.cpu_count()} cores (`.venv/bin/python benchmarks/bench_isolation.py --publish`)."
        "\n\n" + table(res)
    )
    write_atomic(results / "isolation.md", md + "\n")
    replace_block(ROOT / "docs" / "performance.md", "bench:isolation", md)


if __name__ == "__main__":
    main()
