"""The self-play report: learned debaters and baselines, measured exactly as they learn.

:func:`write_report` trains, one after another in this process, A and B by self-play PPO
(:mod:`proofgames.selfplay.learn`) on

* **bisection** and **cross-examination** over small Turing machines (held-out machines
  by seed), where the theorem says the true claim wins with probability 1 and a false one
  never does;
* the **stochastic** protocol on the small machine zoo, where it says the honest side wins
  with probability >= 3/5 (a true claim) and a liar with <= 2/5;
* the baselines **consultancy** and **no debate** on cross-examination's tableau, where a
  prover assigned the false claim gains by lying;

then writes ``report.md`` (tables, the curves' figures, what each theorem predicts),
``results.json`` (every curve, strict JSON) and one figure per run, atomically.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:  # doctest: +SKIP
    ...     _ = write_report(Path(d), scale=0.01)
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # the object API: importing this sets no backend

from ..errors import ProofgamesError
from ..reporting import markdown_table, save_figure, write_atomic, write_json
from ..selfplay.family import StochasticFamily, TuringFamily
from ..selfplay.learn import LearnConfig, Run, train

__all__ = ["SPECS", "RunSpec", "write_report"]

COMMAND = "proofgames selfplay report --out reports/self-play --overwrite"


@dataclass(frozen=True)
class RunSpec:
    """One training run of the report.

    Attributes:
        name: the run's name (its figure's file name).
        family: where its instances come from.
        config: its training settings (``iterations`` and ``eval_every`` are scaled).
        predicts: what the theorem (or the baseline's rule) says of exact play.
        goal: issue 38's goal for this run, in words.

    """

    name: str
    family: TuringFamily | StochasticFamily
    config: LearnConfig
    predicts: str
    goal: str


TM_BISECTION = TuringFamily(space=2, max_steps=4, states=1, halt_share=0.5)
TM_TABLEAU = TuringFamily(space=2, max_steps=1, states=1, halt_share=0.5)
ZOO = StochasticFamily(grid=20)
DEBATE_GOAL = "truthful share >= 0.99, exploitability of A and of B <= 0.01"
BASELINE_GOAL = "more false claims accepted than under debate (Wilson intervals apart)"

SPECS = (
    RunSpec("bisection", TM_BISECTION,
            LearnConfig("bisection", iterations=800, eval_every=200, train_instances=200,
                        wilson_plays=1),
            "value 1 for the true claim, 0 for a false one (Theorem: bisection, Figure 3); "
            "so truthful share 1, acceptance 1, exploitability 0 at equilibrium", DEBATE_GOAL),
    RunSpec("cross-examination", TM_TABLEAU,
            LearnConfig("cross-examination", iterations=600, eval_every=150,
                        train_instances=80, wilson_plays=1),
            "value 1 for the true claim, 0 for a false one (Theorem: cross-examination, "
            "Figure 4)", DEBATE_GOAL),
    RunSpec("stochastic", ZOO,
            LearnConfig("stochastic", iterations=400, eval_every=100, wilson_plays=200,
                        explore=0.1, ent_coef=0.05, anneal_lr=True),
            ">= 3/5 for a true claim, <= 2/5 for a false one (Theorem: Figure 1); the exact "
            "equilibrium value of each game on the grid is the curve's target",
            "acceptance within 0.01 of the exact equilibrium value"),
    RunSpec("consultancy", TM_TABLEAU,
            LearnConfig("consultancy", iterations=400, eval_every=100, train_instances=80,
                        wilson_plays=50),
            "a liar with one wrong step of L is accepted with probability 1 - 1/L "
            "(L = 6 here: 5/6); the truth with probability 1", BASELINE_GOAL),
    RunSpec("no-debate", TM_TABLEAU,
            LearnConfig("no-debate", iterations=50, eval_every=25, train_instances=80,
                        wilson_plays=1),
            "every claim accepted: a false one with probability 1", BASELINE_GOAL),
)  # fmt: skip


def scaled(spec: RunSpec, scale: float, seed: int) -> LearnConfig:
    """The spec's settings with ``iterations`` and ``eval_every`` times ``scale``."""
    c = spec.config
    its = max(1, round(c.iterations * scale))
    return replace(c, seed=seed, iterations=its, eval_every=max(1, round(c.eval_every * scale)))


def write_report(
    out: Path, seed: int = 0, scale: float = 1.0, specs: tuple[RunSpec, ...] = SPECS
) -> Path:
    """Train every run of ``specs``, write ``out/report.md`` and the rest; return its path.

    ``scale`` multiplies every run's iterations (1: the committed report; tests use less).

    Raises:
        ProofgamesError: a bad argument, or a folder that cannot be made.
    """
    if not scale > 0 or seed < 0:
        raise ProofgamesError(f"scale must be positive and seed non-negative; got {scale}, {seed}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProofgamesError(f"cannot make the folder {out}: {exc.strerror or exc}") from None
    load_before, start, cpu = os.getloadavg(), time.perf_counter(), time.process_time()
    runs = [(spec, train(scaled(spec, scale, seed), spec.family)) for spec in specs]
    for spec, run in runs:
        save_figure(curve_figure(spec, run), out / f"{spec.name}.png")
    meta = {
        "command": COMMAND,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "seed": seed,
        "scale": scale,
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
        "wall_seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
    }
    write_json(out / "results.json", {"meta": meta, "runs": [
        {"name": s.name, "family": repr(s.family), "predicts": s.predicts, "goal": s.goal,
         **r.to_dict()} for s, r in runs]}, indent=1)  # fmt: skip
    path = out / "report.md"
    write_atomic(path, report_markdown(runs, meta))
    return path


def curve_figure(spec: RunSpec, run: Run) -> Figure:
    """Three panels against training games: truthful share, exploitability, acceptance."""
    fig = Figure(figsize=(11, 3.2), layout="constrained")
    axes = fig.subplots(1, 3)
    x = [r["episodes"] for r in run.curve]
    decisions = [("a_correct", "A's messages right", None), ("b_correct", "B's decisions right",
                  None)] if "a_correct" in run.curve[0] else []  # fmt: skip
    panels: list[tuple[str, list[tuple[str, str, float | None]]]] = [
        ("truthful share (A claims the truth)" + (", single decisions right" if decisions else ""),
         [("truthful_share", "learned A", 1.0), *decisions]),
        ("exploitability (exact best response)",
         [("exploit_a", "A (mean)", 0.0), ("exploit_a_max", "A (worst instance)", None)]
         + ([("exploit_b", "B (mean)", None), ("exploit_b_max", "B (worst instance)", None)]
            if "exploit_b" in run.curve[0] else [])),
        ("P[V accepts], learned play",
         [("acceptance", "A's claim free", None), ("false_acceptance", "false claim", None)]),
    ]  # fmt: skip
    for ax, (title, lines) in zip(axes, panels, strict=True):
        for key, label, _ in lines:
            ax.plot(x, [r[key] for r in run.curve], marker="o", ms=3, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training games")
        ax.set_ylim(-0.05, 1.05)
    axes[0].axhline(1.0, color="grey", ls="--", lw=1, label="all true: 1")
    axes[1].axhline(0.0, color="grey", ls="--", lw=1, label="equilibrium: 0")
    last = run.curve[-1]
    axes[2].axhline(last["value"], color="C0", ls="--", lw=1, label="exact value (claim free)")
    axes[2].axhline(last["false_value"], color="C1", ls="--", lw=1,
                    label="exact value (false claim)")  # fmt: skip
    for ax in axes:
        ax.legend(fontsize=7)
    fig.suptitle(f"{spec.name}: exact metrics of the greedy learned policies on held-out "
                 "instances (dashed: exact values)", fontsize=10)  # fmt: skip
    return fig


def _f(x: float) -> str:
    return f"{x:.3f}"


def _count(c: list[Any] | None) -> str:
    if not c:
        return "-"
    return f"{c[0]}/{c[1]} [{c[2]:.3f}, {c[3]:.3f}]"


def _goal_met(spec: RunSpec, final: dict[str, Any]) -> str:
    if spec.config.protocol in ("bisection", "cross-examination"):
        misses = [f"{k} {final[k]:.3f}" for k, bad in
                  (("truthful_share", final["truthful_share"] < 0.99),
                   ("exploit_a", final["exploit_a"] > 0.01),
                   ("exploit_b", final["exploit_b"] > 0.01)) if bad]  # fmt: skip
        return "met" if not misses else "not met: " + ", ".join(misses)
    if spec.config.protocol == "stochastic":
        gap = final["value_gap"]
        extra = f"; exploitability A {final['exploit_a']:.3f}, B {final['exploit_b']:.3f}"
        return ("met" if gap <= 0.01 else "not met") + f": |gap| {gap:.3f}" + extra
    return "see the comparison below"


def summary_rows(runs: list[tuple[RunSpec, Run]]) -> list[list[str]]:
    """One row per run: its final exact metrics, sampled counts and training time."""
    rows = []
    for spec, run in runs:
        f = run.final
        rows.append([
            spec.name, _count(f.get("truthful_count")), _f(f["acceptance"]),
            _f(f["false_acceptance"]), _count(f.get("false_accepted_count")),
            f"{_f(f['exploit_a'])} / {_f(f['exploit_a_max'])}",
            f"{_f(f['exploit_b'])} / {_f(f['exploit_b_max'])}" if "exploit_b" in f else "-",
            _f(f["value"]), _f(f["false_value"]), f"{run.train_seconds:.0f}",
            _goal_met(spec, f),
        ])  # fmt: skip
    return rows


SUMMARY_HEADERS = [
    "run", "A claims the truth (held-out, Wilson 95%)", "P[accept] learned (exact)",
    "P[accept false claim] learned (exact)", "false claims accepted, sampled (Wilson 95%)",
    "exploitability A mean / worst (exact)", "exploitability B mean / worst (exact)",
    "exact value, claim free", "exact value, false claim", "training CPU s", "goal",
]  # fmt: skip


def curve_table(run: Run) -> str:
    """A run's curve as a Markdown table (every evaluation, exact metrics)."""
    has_b, has_d = "exploit_b" in run.curve[0], "a_correct" in run.curve[0]
    headers = [
        "games",
        "training CPU s",
        "truthful share",
        "P[accept]",
        "P[accept false]",
        "exploit A (mean / worst)",
    ] + (["exploit B (mean / worst)"] if has_b else [])
    headers += ["A's messages right", "B's decisions right"] if has_d else []
    rows = []
    for r in run.curve:
        row = [
            f"{r['episodes']:,}",
            f"{r['train_seconds']:.1f}",
            _f(r["truthful_share"]),
            _f(r["acceptance"]),
            _f(r["false_acceptance"]),
            f"{_f(r['exploit_a'])} / {_f(r['exploit_a_max'])}",
        ]
        if has_b:
            row.append(f"{_f(r['exploit_b'])} / {_f(r['exploit_b_max'])}")
        if has_d:
            row += [_f(r["a_correct"]), _f(r["b_correct"])]
        rows.append(row)
    return markdown_table(headers, rows)  # fmt: skip


def stall_text(spec: RunSpec, run: Run) -> str:
    """Where a run that missed its goal stands, from its curve (empty if it met it)."""
    if spec.config.protocol not in ("bisection", "cross-examination", "stochastic"):
        return ""
    verdict = _goal_met(spec, run.final)
    if verdict.startswith("met"):
        return ""
    best = {k: min(r[k] for r in run.curve) for k in ("exploit_a", "exploit_b", "value_gap")}
    top = max(r["truthful_share"] for r in run.curve)
    text = (
        f"**Goal not reached ({verdict}).** Best along the curve: truthful share {top:.3f}, "
        f"exploitability A {best['exploit_a']:.3f}, B {best['exploit_b']:.3f}, value gap "
        f"{best['value_gap']:.3f}. "
    )
    f = run.final
    if "a_correct" in f:
        text += (
            f"Where it stalls: at the end {f['a_correct']:.3f} of honest A's messages are the "
            f"machine's truth (every one must be: one wrong message is a lost debate against "
            f"the best B) and {f['b_correct']:.3f} of B's decisions against random lies point "
            f"at a lie"
            + (" (a coin's rate for the two halves is 0.5)." if spec.name == "bisection" else ".")
        )
    return text + "\n"


INTRO = """\
Every number below is about the *greedy* learned policies (each network's most likely legal
action) on held-out instances, and is **exact** unless marked sampled: the exact
evaluator (`proofgames.selfplay.exploit`) walks the whole game tree, averaging chance
nodes with their exact probabilities, and finds each side's exact best response by
search (bisection, the stochastic protocol) or by enumerating every transcript A can
commit to (the tableau games). *Exploitability of A* is the game's exact value (A's
claim free) minus P[V accepts] when learned A meets its best-responding B; *of B*, over
both claims, the most by which a best-responding A lifts P[V accepts] above that claim's
exact value against learned B. Sampled figures are counts with 95% Wilson intervals.

Training: two networks (A, B; 2 tanh layers of 64), PPO in lockstep rollouts of 64 games
(`proofgames.selfplay.learn`), reward V's verdict (+1/-1). In half the games A chooses
its claim (the theorem's game), in the other half it must defend the false output, so
that B keeps meeting liars. Training instances and held-out instances are disjoint seeds'
draws of the family (the stochastic zoo has five machines: it trains and is evaluated on
all five). The stochastic run also explores and settles (`LearnConfig`'s `explore`,
`ent_coef`, `anneal_lr`; every setting is in `results.json`): a tenth of A's moves are
uniform over the legal ones, so that B meets lies learned A does not tell (B learns from
those games, A does not), the entropy bonus is 0.05, and the learning rates decay
linearly to 0 over the run.
"""

WHY = """\
**Why training stalls where it does.** Two causes, measured in the columns *A's messages
right* and *B's decisions right* (`proofgames.selfplay.decisions`). An honest A must
*compute* each configuration or tableau entry from the program, the start and the times
in its observation -- a simulation it learns from win/loss alone, one reward per game --
and every message must be right, because the best B finds the one that is not. B must
tell from the program alone which half, or which step, holds a lie; self-play shows it
the lies *learned A* tells, while exploitability is measured against the best liar, who
searches every configuration or transcript. Where both columns sit far below 1, neither
network has learned to simulate the machine at this budget.
"""


def report_markdown(runs: list[tuple[RunSpec, Run]], meta: dict[str, Any]) -> str:
    """The report's Markdown."""
    lb, la = meta["load_average_before"][0], meta["load_average_after"][0]
    parts = [
        "# Self-play: learned debaters against exact best responses (issue 38)\n",
        f"Generated by `{COMMAND}` on {meta['date']} ({meta['machine']}, one process; "
        f"`taskset -c 0` for one core), seed {meta['seed']}, scale {meta['scale']}: "
        f"{meta['wall_seconds']:.0f} s wall, {meta['cpu_seconds']:.0f} s CPU, training "
        f"itself {sum(r.train_seconds for _, r in runs):.0f} CPU s (the rest is the exact "
        f"evaluations); load average {lb:.2f} before, {la:.2f} after (1-minute).\n",
        INTRO,
        "## Summary (final evaluation)\n",
        markdown_table(SUMMARY_HEADERS, summary_rows(runs)),
        "",
        WHY,
        "## The runs\n",
    ]
    for spec, run in runs:
        c = run.config
        parts += [
            f"### {spec.name}\n",
            f"Family: `{spec.family!r}`; {c.iterations} iterations x {c.episodes} games "
            f"({c.iterations * c.episodes:,} games), {len(run.curve)} evaluations, "
            f"{run.train_seconds:.1f} CPU s of training; forfeits (illegal actions) "
            f"A {run.forfeits['A']}, B {run.forfeits['B']}.\n",
            f"**What the theorem predicts:** {spec.predicts}. **Goal:** {spec.goal}.\n",
            f"![{spec.name}]({spec.name}.png)\n",
            curve_table(run),
            "",
            stall_text(spec, run),
        ]
    parts += [baseline_text(runs)]
    return "\n".join(p for p in parts if p) + "\n"


def baseline_text(runs: list[tuple[RunSpec, Run]]) -> str:
    """Whether a learned prover lies under the baselines, and by how much, beside debate."""
    rows = []
    for spec, run in runs:
        f = run.final
        rows.append(
            [
                spec.name,
                _f(f["false_acceptance"]),
                _count(f.get("false_accepted_count")),
                _f(f["false_value"]),
                _f(f["exploit_b"]) if "exploit_b" in f else "-",
            ]
        )
    return "## Do learned provers lie?\n\n" + (
        "The prover assigned the false claim gains by lying under consultancy (one spot "
        "check) and no debate. P[V accepts the false claim] under learned play, exact and "
        "sampled (Wilson 95%), beside what the best liar gets against the best opponent "
        "(exact), and how far a best-responding liar gets against *learned* B (B's "
        "exploitability, exact):\n\n"
    ) + markdown_table(
        ["protocol", "learned, exact", "learned, sampled", "best liar vs best opponent, exact",
         "exploitability of learned B, exact"], rows
    ) + "\n" + findings(runs)  # fmt: skip


def _interval(run: Run) -> list[Any] | None:
    c: list[Any] | None = run.final.get("false_accepted_count")
    return c


def findings(runs: list[tuple[RunSpec, Run]]) -> str:
    """What the final numbers say, written from them (no figure here is typed by hand)."""
    by = {spec.name: run for spec, run in runs}
    out = []
    debates = [n for n in ("bisection", "cross-examination") if n in by]
    bases = [n for n in ("consultancy", "no-debate") if n in by]
    for b in bases:
        cb = _interval(by[b])
        apart = [d for d in debates if (cd := _interval(by[d])) and cb and cd[3] < cb[2]]
        if cb:
            out.append(
                f"* Under {b} the learned prover assigned the false claim is accepted with "
                f"probability {by[b].final['false_acceptance']:.3f} (exact; sampled "
                f"{_count(cb)}), against a best liar's {by[b].final['false_value']:.3f}: "
                + (
                    "V accepts it whatever the prover writes. "
                    if b == "no-debate"
                    else "it lies, and gains by it. "
                    if by[b].final["false_acceptance"] > 0.5
                    else "it lies less than it could. "
                )
                + (f"Its interval lies above those of {', '.join(apart)} (no overlap)."
                   if apart else "Its interval overlaps the debates'.")
            )  # fmt: skip
    for d in debates:
        f = by[d].final
        out.append(
            f"* Under {d} the learned liar is accepted with probability "
            f"{f['false_acceptance']:.3f} (exact), but learned B is exploitable: against it a "
            f"best-responding liar lifts P[V accepts] by {f['exploit_b']:.3f} on average "
            f"(worst instance {f['exploit_b_max']:.3f})."
            + (
                " The low acceptance of false claims in learned play reflects weak learned "
                "liars, not a B that would stop the best one; the theorem's guarantee (value "
                "0 for a false claim) is about the best B."
                if f["exploit_b"] > f["false_acceptance"] + 0.01
                else ""
            )
        )
    if "stochastic" in by:
        f = by["stochastic"].final
        out.append(
            f"* Stochastic: learned play is accepted with probability {f['acceptance']:.3f} "
            f"against the exact equilibrium value {f['value']:.3f} (gap {f['value_gap']:.3f}); "
            f"learned A is unexploitable to {f['exploit_a']:.3f}, but learned B's "
            f"exploitability is {f['exploit_b']:.3f}: it does not abort every lie V would "
            f"catch. Learned liars are accepted with probability {f['false_acceptance']:.3f}, "
            f"against {f['false_value']:.3f} at equilibrium."
        )
    return "\n".join(out) + "\n"
