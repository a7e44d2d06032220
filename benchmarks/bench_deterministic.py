"""Benchmark of the deterministic debate protocols (issue 2).

Measures, in one run on this machine:
  * the Turing-machine engine's steps per second on the 47,176,870-step 5-state champion,
    beside a tight C loop compiled here (when a C compiler is available);
  * for T = 10^3 .. 10^7 (the same machine, truncated): each protocol's verifier reads and
    oracle queries, each honest prover's simulated steps as a multiple of T, and the whole
    debate's wall time as a ratio to one plain simulation of the same T steps;
  * the witness protocol on planted 3-SAT formulas (T = the checker's transcript length).

Writes benchmarks/results/deterministic.{json,md} and the ``bench:deterministic`` block of
docs/performance.md.
Run:  .venv/bin/python benchmarks/bench_deterministic.py
"""

from __future__ import annotations

import platform
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from proofgames.machines import CNF, SatProblem, TableauTranscript, TuringMachine, planted_3sat
from proofgames.protocols import play_bisection, play_cross_examination
from proofgames.protocols.witness import play_witness
from proofgames.reporting import replace_block, write_atomic, write_json
from proofgames.strategies import make_strategy

BB5 = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA"
BB5_STEPS = 47_176_870
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"

C_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(void) {
  const char *s = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA";
  int W[10], M[10], N[10];
  for (int q = 0; q < 5; q++) for (int a = 0; a < 2; a++) {
    const char *t = s + q * 7 + a * 3;
    W[q*2+a] = t[0] - '0'; M[q*2+a] = t[1] == 'R' ? 1 : -1;
    N[q*2+a] = t[2] == 'Z' ? -1 : t[2] - 'A';
  }
  double best = 1e9; long steps = 0;
  for (int rep = 0; rep < 3; rep++) {
    unsigned char *tape = calloc(1 << 16, 1); long pos = 1 << 15; int q = 0; steps = 0;
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    while (q >= 0) { int i = q * 2 + tape[pos]; tape[pos] = W[i]; pos += M[i]; q = N[i]; steps++; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double dt = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    if (dt < best) best = dt; free(tape);
  }
  printf("%ld %.9f\n", steps, best);
  return 0;
}
"""


Run = tuple[float, float]  # (wall seconds, CPU seconds of the process and its children)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def c_loop() -> Iterator[Callable[[], Run] | None]:
    """Times one C run of bb5: (its own clock, its CPU); ``None`` without a C compiler."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "tm.c", Path(d) / "tm"
        src.write_text(C_LOOP.replace("rep < 3", "rep < 1"))  # one run of the loop, not 3
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)

        def run() -> Run:
            cpu = children_cpu()
            out = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
            steps, secs = out.stdout.split()
            assert int(steps) == BB5_STEPS, steps
            return float(secs), children_cpu() - cpu

        yield run


def c_loop_rate() -> float | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "tm.c", Path(d) / "tm"
        src.write_text(C_LOOP)
        subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True)
        steps, secs = subprocess.run(
            [str(exe)], capture_output=True, text=True, check=True
        ).stdout.split()
    return int(steps) / float(secs)


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def engine_rate() -> float:
    tm = TuringMachine.sized(BB5, BB5_STEPS)
    tm.run_steps(tm.initial(), 1000)  # compile
    secs = best_of(3, lambda: tm.run_steps(tm.initial(), BB5_STEPS))
    return BB5_STEPS / secs


def debate(protocol: str, tm: TuringMachine, steps: int, claim: int, a: str, b: str):
    pa, pb = make_strategy(protocol, "A", a), make_strategy(protocol, "B", b)
    if protocol == "bisection":
        return play_bisection(tm, steps, claim, pa, pb, seed=0)
    return play_cross_examination(TableauTranscript(tm, steps), claim, pa, pb, seed=0)


def scaling() -> list[dict]:
    rows = []
    for exp in range(3, 8):
        steps = 10**exp
        tm = TuringMachine.sized(BB5, steps)
        truth = tm.known_output
        plain = best_of(3, lambda tm=tm, steps=steps: tm.run_steps(tm.initial(), steps))
        for protocol in ("bisection", "cross-examination"):
            for label, claim, a, b in (
                ("true claim", truth, "honest", "honest"),
                ("false claim", 1 - truth, "flip-step", "honest"),
            ):
                outs = [debate(protocol, tm, steps, claim, a, b) for _ in range(3)]
                out = min(outs, key=lambda o: o.costs.seconds)
                c = out.costs
                rows.append(
                    {
                        "T": steps,
                        "protocol": protocol,
                        "scenario": label,
                        "A": a,
                        "B": b,
                        "winner": out.winner,
                        "rounds": c.rounds,
                        "verifier_reads": c.verifier_reads,
                        "unit": c.verifier_read_unit,
                        "verifier_bits": c.verifier_bits,
                        "verifier_queries": c.verifier_queries,
                        "A_steps_over_T": c.prover_steps["A"] / steps,
                        "B_steps_over_T": c.prover_steps["B"] / steps,
                        "debate_seconds": c.seconds,
                        "plain_seconds": plain,
                        "wall_ratio": c.seconds / plain,
                        "S": tm.size,
                    }
                )
    return rows


def witness_scaling() -> list[dict]:
    """Debate with a witness on planted 3-SAT (true claims) and the same formula made
    unsatisfiable by two contradictory unit clauses (false claims)."""
    rows = []
    for n in (40, 200, 1000):
        cnf = planted_3sat(n, int(3.5 * n), seed=n)
        for label, problem, a in (
            ("true claim", SatProblem(cnf, f"planted-{n}"), "honest"),
            (
                "false claim",
                SatProblem(CNF(n, (*cnf.clauses, (1,), (-1,))), f"unsat-{n}"),
                "flip-step",
            ),
        ):
            out = play_witness(
                problem,
                1,
                make_strategy("witness", "A", a),
                make_strategy("witness", "B", "honest"),
                seed=0,
            )
            c = out.costs
            rows.append(
                {
                    "T": out.steps,
                    "protocol": "witness",
                    "scenario": label,
                    "A": a,
                    "B": "honest",
                    "winner": out.winner,
                    "rounds": c.rounds,
                    "verifier_reads": c.verifier_reads,
                    "unit": c.verifier_read_unit,
                    "verifier_bits": c.verifier_bits,
                    "verifier_queries": c.verifier_queries,
                    "A_steps_over_T": c.prover_steps["A"] / out.steps,
                    "B_steps_over_T": c.prover_steps["B"] / out.steps,
                    "debate_seconds": c.seconds,
                    "plain_seconds": None,
                    "wall_ratio": None,
                    "S": None,
                    "variables": n,
                }
            )
    return rows


def markdown(result: dict) -> str:
    e = result["engine"]
    lines = [
        f"Measured {result['date']} on {result['machine']} "
        f"(`.venv/bin/python benchmarks/bench_deterministic.py`).",
        "",
        f"- TM engine, 5-state champion ({BB5_STEPS:,} steps): "
        f"**{e['steps_per_second'] / 1e6:.0f} M steps/s**"
        + (
            f"; a tight C loop (gcc -O2) on the same machine: {e['c_steps_per_second'] / 1e6:.0f} "
            f"M steps/s (ratio C / proofgames = {e['c_ratio']:.2f})"
            if e.get("c_ratio")
            else ""
        ),
        "",
        "| T | protocol | scenario (A vs B) | winner | rounds | V reads | V oracle queries "
        "| A steps / T | B steps / T | debate s | debate / plain run |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["scaling"] + result["witness"]:
        ratio = "—" if r["wall_ratio"] is None else f"{r['wall_ratio']:.2f}"
        lines.append(
            f"| {r['T']:.0e} | {r['protocol']} | {r['scenario']} ({r['A']} vs {r['B']}) "
            f"| {r['winner']} | {r['rounds']} | {r['verifier_reads']} {r['unit']} "
            f"| {r['verifier_queries']} | {r['A_steps_over_T']:.3f} | {r['B_steps_over_T']:.3f} "
            f"| {r['debate_seconds']:.3f} | {ratio} |"
        )
    return "\n".join(lines) + "\n"


def update_performance(md: str) -> None:
    replace_block(ROOT / "docs" / "performance.md", "bench:deterministic", md)


def main() -> None:
    rate = engine_rate()
    c_rate = c_loop_rate()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, 2 cores",
        "engine": {
            "steps_per_second": rate,
            "c_steps_per_second": c_rate,
            "c_ratio": (c_rate / rate) if c_rate else None,
        },
        "scaling": scaling(),
        "witness": witness_scaling(),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "deterministic.json", result, indent=2)
    md = markdown(result)
    write_atomic(OUT / "deterministic.md", md)
    update_performance(md)
    print(md)


if __name__ == "__main__":
    main()
