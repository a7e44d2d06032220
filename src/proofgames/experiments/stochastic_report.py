"""The stochastic-debate report: measured guarantees and costs beside the theorems.

:func:`write_report` regenerates ``report.md`` and its figures in one directory:

1. **Guarantees near the thresholds.**  Machines with P[M=1] just above 2/3 (true claims:
   honest A against every registered B and the optimal B) and just below 1/3 (false
   claims: every registered A and the optimal A against honest B), with the paper's and the
   Lean constants derived from the every-step K (the theorem's hypothesis); measured
   acceptance with 95% Clopper--Pearson intervals, the exact optimal-adversary value
   (:mod:`.optimal`), and the theorem's bound.  Then the oracle-only K beside the every-step K,
   and a liar shading deterministic steps.
2. **Costs.**  Oracle samples per party per debate against T and against K, paper vs Lean
   constants, with the theorems' cost formulas drawn.
3. **Looseness.**  The constants shrunk (the paper's 150 in d = ceil(150 K); the Lean
   sample counts scaled down) until the exact optimal adversaries break 3/5 or 2/5.

Every figure is labelled as what it is: exact, a bound (and which side), or measured with
its interval.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:  # doctest: +SKIP
    ...     _ = write_report(Path(d), debates=2000)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # the object API: importing this sets no backend

from ..errors import ProofgamesError
from ..reporting import replace_block, save_figure, write_atomic
from ..stochastic.hypothesis import (
    K_DEFINITIONS,
    ORACLE,
    STEP,
    guarantee,
    hypothesis_lipschitz,
    machine_params,
    step_bounds,
)
from ..stochastic.machines import make_stochastic_machine
from ..stochastic.optimal import optimal_disputer, optimal_liar
from ..stochastic.params import StochasticParams, lean_params, paper_params
from ..strategies import strategy_names
from ._report_text import BACKING, Sections, report_markdown, summary_markdown
from ._report_text import check_report_args as check_args
from .montecarlo import Cell, Estimate, estimate_cells

TRUE_CLAIMS = ("single-query:p=0.67", "majority:n=3,p=0.62")
FALSE_CLAIMS = ("single-query:p=0.33", "majority:n=3,p=0.38")
PAPER_SCALES = (150, 50, 20, 10, 5, 3, 2, 1, 0.5, 0.25)
LEAN_FACTORS = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003)


Measure = Callable[[str, list[Cell], int, int], list[Estimate]]
"""Runs a section's cells: ``measure(section, cells, debates, seed)`` (see :func:`measurer`)."""


def measurer(
    executor: Executor | None = None,
    store: Path | None = None,
    progress: Callable[[int], None] | None = None,
    grow: Callable[[int], None] | None = None,
) -> Measure:
    """A :data:`Measure` running every section's cells through ``executor``.

    Args:
        executor: where the chunks run (default: this process).
        store: a folder keeping each section's finished chunks (``SECTION.jsonl``); a
            report interrupted and started again with the same arguments continues there.
        progress: called with the debates finished.
        grow: called with the debates a section adds to the whole report, before it runs.
    """

    def measure(section: str, cells: list[Cell], debates: int, seed: int) -> list[Estimate]:
        if grow is not None:
            grow(debates * len(cells))
        return estimate_cells(
            cells, debates=debates, seed=seed, executor=executor, progress=progress,
            store=None if store is None else store / f"{section}.jsonl",
        )  # fmt: skip

    return measure


def guarantees(debates: int, seed: int, measure: Measure | None = None) -> list[dict[str, Any]]:
    """Section 1's rows: every adversary against the honest opponent, K over every step."""
    rows: list[dict[str, Any]] = []
    cells: list[Cell] = []
    for spec in (*TRUE_CLAIMS, *FALSE_CLAIMS):
        m = make_stochastic_machine(spec)
        assert m.p_accept is not None
        true_claim = m.p_accept >= 2 / 3
        for pname in ("paper", "lean"):
            params = machine_params(pname, m)
            theorem = guarantee(m, params, 1)
            assert theorem.proven is not None, theorem  # the hypothesis holds: a proof
            if true_claim:
                pairs = [("honest", b) for b in strategy_names("stochastic", "B")]
                best = optimal_disputer(m, params, 1)
            else:
                pairs = [(a, "honest") for a in strategy_names("stochastic", "A")]
                best = optimal_liar(m, params, 1)
            sign = 1.0 if true_claim else -1.0
            for a, b in pairs:
                cells.append(Cell(spec, params, 1, a, b))
                rows.append({
                    "machine": spec, "P[M=1]": m.p_accept, "K (every step)": params.k,
                    "params": pname, "claim": "true" if true_claim else "false", "A": a,
                    "B": b, "measured": None, "ci_low": None, "ci_high": None,
                    "optimal (exact)": best.value, "bound": theorem.proven,
                    "backed by": BACKING[pname],
                    "optimal within": sign * (best.value - theorem.proven) >= -1e-12,
                    "interval consistent": None, "forfeits A/B": None,
                })  # fmt: skip
    for row, e in zip(rows, (measure or measurer())("guarantees", cells, debates, seed),
                      strict=True):  # fmt: skip
        proven, true_claim = row["bound"], row["claim"] == "true"
        row.update({
            "measured": e.acceptance, "ci_low": e.ci_low, "ci_high": e.ci_high,
            "interval consistent": bool(e.ci_high >= proven if true_claim else e.ci_low <= proven),
            "forfeits A/B": f"{e.forfeited['A']}/{e.forfeited['B']}",
        })  # fmt: skip
    return rows


def oracle_k_versus_step_k() -> list[dict[str, Any]]:
    """The exact optimal liar when K counts the oracle only vs every step (see report)."""
    rows: list[dict[str, Any]] = []
    for spec in (*FALSE_CLAIMS, "majority:n=3,p=0.3", "parity:n=3,p=0.1", "all-pass:n=3,p=0.6",
                 "screening:n=3,k=1,p=0.3", "audit:n=4,r=1,p=0.3,spread=0.3,seed=3"):  # fmt: skip
        m = make_stochastic_machine(spec)
        assert m.p_accept is not None
        for definition in (ORACLE, STEP):
            for pname in ("paper", "lean"):
                params = machine_params(pname, m, definition)
                theorem = guarantee(m, params, 1)
                assert theorem.formula is not None
                value = optimal_liar(m, params, 1).value
                rows.append({
                    "machine": spec, "T": m.length, "P[M=1]": m.p_accept,
                    "K": K_DEFINITIONS[definition], "K value": params.k, "params": pname,
                    "optimal liar (exact)": value, "bound formula": theorem.formula,
                    "hypothesis": theorem.hypothesis,
                    "within formula": value <= theorem.formula + 1e-12,
                })  # fmt: skip
    return rows


def deterministic_steps(
    debates: int, seed: int, measure: Measure | None = None
) -> list[dict[str, Any]]:
    """A liar that shades deterministic steps: K = 1 (oracle-only), strict checks, every step."""
    rows: list[dict[str, Any]] = []
    cells: list[Cell] = []
    measured: list[dict[str, Any]] = []
    for t in (4, 8, 12, 100, 1000):
        spec = f"copy-chain:t={t},p=0.3"
        m = make_stochastic_machine(spec)
        runs = [(name, machine_params(name, m, ORACLE)) for name in
                ("paper", "paper:strict", "lean", "lean:strict")]  # fmt: skip
        runs += [(name, machine_params(name, m, STEP)) for name in ("paper", "lean")]
        for name, params in runs:
            theorem = guarantee(m, params, 1)
            assert theorem.formula is not None
            row: dict[str, Any] = {"machine": m.name, "params": name, "K": params.k_definition,
                   "K value": params.k, "adversary": None, "acceptance": None,
                   "bound formula": theorem.formula, "hypothesis": theorem.hypothesis,
                   "within formula": None}  # fmt: skip
            if t <= 12:
                value = optimal_liar(m, params, 1).value
                row.update({"adversary": "optimal liar (exact)", "acceptance": value,
                            "within formula": bool(value <= theorem.formula + 1e-12)})  # fmt: skip
            else:
                cells.append(Cell(spec, params, 1, "evade", "honest"))
                measured.append(row)
            rows.append(row)
    for row, e in zip(measured, (measure or measurer())("deterministic", cells, debates, seed),
                      strict=True):  # fmt: skip
        row.update({"adversary": f"evade, measured over {debates:,} debates",
                    "acceptance": e.acceptance,
                    "within formula": bool(e.ci_low <= row["bound formula"])})  # fmt: skip
    return rows


def costs(
    out: Path, debates: int, seed: int, measure: Measure | None = None
) -> tuple[list[dict[str, Any]], list[Path]]:
    """Section 2: samples per party against T and K; two figures."""
    points: list[tuple[str, str, float]] = []
    for t in (10, 30, 100, 300, 1000):
        points.append((f"long-computation:t={t},votes=3", "T", t))
    for n in (1, 3, 7, 15, 31):
        spec = f"majority:n={n},p=0.5"
        points.append((spec, "K", make_stochastic_machine(spec).lipschitz or 0.0))
    rows = _cost_rows(points, debates, seed, measure or measurer())
    figs = []
    for axis in ("T", "K"):
        fig = Figure(figsize=(6.4, 4.2))
        ax = fig.subplots()
        for pname, style in (("paper", "-"), ("lean", "--")):
            pts = sorted((r[axis], r) for r in rows if r["axis"] == axis and r["params"] == pname)
            xs = [x for x, _ in pts]
            for party, colour in (("A", "tab:blue"), ("B", "tab:orange"), ("V", "tab:green")):
                ax.plot(
                    xs,
                    [r[f"measured_{party}"] for _, r in pts],
                    "o",
                    color=colour,
                    label=f"{pname} {party} measured",
                )
                ax.plot(
                    xs,
                    [r[f"formula_{party}"] for _, r in pts],
                    style,
                    color=colour,
                    label=f"{pname} {party} bound",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("T (steps)" if axis == "T" else "Lipschitz constant K")
        ax.set_ylabel("oracle samples per debate")
        ax.set_title(f"Oracle samples against {axis} (A, B: honest; V: when B aborts)")
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        path = out / f"costs_vs_{axis}.png"
        save_figure(fig, path)
        figs.append(path)
    return rows, figs


def _cost_rows(
    points: list[tuple[str, str, float]], debates: int, seed: int, measure: Measure
) -> list[dict[str, Any]]:
    """Per machine and parameter set: honest samples, and V's when B aborts."""
    rows, cells = [], []
    for spec, axis, x in points:
        m = make_stochastic_machine(spec)
        bounds = step_bounds(m)
        k_step = f"{bounds.upper:.4g}" + (
            " (step-count bound)" if bounds.upper_method == "step-count" else ""
        )
        for pname in ("paper", "lean"):
            params = machine_params(pname, m, ORACLE)
            cells += [Cell(spec, params, 1, "honest", b) for b in ("honest", "abort-at")]
            bound = params.expected_queries_bound()
            rows.append({
                "axis": axis, axis: x, "machine": m.name, "params": pname, "T": m.length,
                "K": m.lipschitz, "K (every step)": k_step, "measured_A": None,
                "measured_B": None, "measured_V": None, "formula_A": bound["A"],
                "formula_B": bound["B"], "formula_V": bound["V"],
            })  # fmt: skip
    found = measure("costs", cells, debates, seed)
    for row, honest, abort in zip(rows, found[::2], found[1::2], strict=True):
        row["measured_A"] = honest.queries["A"]["mean"]
        row["measured_B"] = honest.queries["B"]["mean"]
        row["measured_V"] = abort.queries["V"]["mean"]
    return rows


def _shrunk(params: StochasticParams, factor: float) -> StochasticParams:
    return replace(params, name=f"lean(samples x {factor:g})",
                   a_samples=max(1, math.ceil(params.a_samples * factor)),
                   b_samples=max(1, math.ceil(params.b_samples * factor)),
                   v_samples=max(1, math.ceil(params.v_samples * factor)))  # fmt: skip


def looseness(out: Path) -> tuple[list[dict[str, Any]], Path]:
    """Section 3: exact optimal values as the constants shrink; one figure."""
    rows: list[dict[str, Any]] = []
    for family, knobs in (("paper", PAPER_SCALES), ("lean", LEAN_FACTORS)):
        for knob in knobs:
            for spec in ("majority:n=3,p=0.62", "majority:n=3,p=0.38"):
                m = make_stochastic_machine(spec)
                assert m.p_accept is not None
                k = hypothesis_lipschitz(m)
                if family == "paper":
                    params = paper_params(k, m.length, scale=knob)
                else:
                    params = _shrunk(lean_params(k, m.length), knob)
                if m.p_accept >= 2 / 3:
                    value, target = optimal_disputer(m, params, 1).value, 3 / 5
                    ok = bool(value >= target)
                else:
                    value, target = optimal_liar(m, params, 1).value, 2 / 5
                    ok = bool(value <= target)
                rows.append({"family": family, "knob": knob, "machine": spec,
                             "samples_A": params.a_samples, "samples_V": params.v_samples,
                             "optimal (exact)": value, "target": target, "holds": ok})  # fmt: skip
    fig = Figure(figsize=(9, 3.8))
    axes = fig.subplots(1, 2)
    for ax, family in zip(axes, ("paper", "lean"), strict=True):
        for spec, colour in (("majority:n=3,p=0.62", "tab:blue"),
                             ("majority:n=3,p=0.38", "tab:red")):  # fmt: skip
            pts = [(r["knob"], r["optimal (exact)"]) for r in rows
                   if r["family"] == family and r["machine"] == spec]  # fmt: skip
            ax.plot(
                [k for k, _ in pts],
                [v for _, v in pts],
                "o-",
                color=colour,
                label=f"{spec} ({'optimal B' if '0.62' in spec else 'optimal A'})",
            )
        ax.axhline(3 / 5, color="tab:blue", ls=":", lw=1)
        ax.axhline(2 / 5, color="tab:red", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("the 150 in d = ceil(150 K)" if family == "paper"
                      else "factor on every Lean sample count")  # fmt: skip
        ax.set_ylabel("P[V accepts], optimal adversary (exact)")
        ax.set_title(f"{family} constants shrunk")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "looseness.png"
    save_figure(fig, path)
    return rows, path


README_BLOCK = "report:stochastic"
"""The block of the README that :func:`write_report` fills with the summary table."""


def check_report_args(out: Path, debates: int, seed: int, readme: Path | None = None) -> None:
    """Refuse, before any measurement, arguments :func:`write_report` cannot use.

    Raises:
        ProofgamesError: as :func:`~._report_text.check_report_args`, for the
            ``report:stochastic`` block.
    """
    check_args(out, debates, seed, readme, README_BLOCK)


def write_report(
    out: Path,
    debates: int = 20_000,
    seed: int = 0,
    readme: Path | None = None,
    measure: Measure | None = None,
) -> Path:
    """Regenerate ``out/report.md`` and its figures; return the Markdown file's path.

    The Monte Carlo cells of a section run together through ``measure`` (default: this
    process; :func:`measurer` makes one for any executor, with a resumable store).
    If ``readme`` is given, the summary table is written between its ``report:stochastic``
    markers.  Arguments are checked (:func:`check_report_args`: the README's markers too)
    before any measurement; every file is written atomically.

    Raises:
        ProofgamesError: a bad argument, or a README without its markers
            (:class:`~proofgames.reporting.ReadmeError`, naming the file and the marker).
    """
    check_report_args(out, debates, seed, readme)
    start = time.perf_counter()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProofgamesError(f"cannot make the folder {out}: {exc.strerror or exc}") from None
    measure = measure or measurer()
    sections = Sections(
        guarantees=guarantees(debates, seed, measure),
        k_definitions=oracle_k_versus_step_k(),
        deterministic=deterministic_steps(max(1000, debates // 5), seed, measure),
        costs=costs(out, max(200, debates // 20), seed, measure),
        looseness=looseness(out),
    )
    body = report_markdown(sections, summary_markdown(sections), out, debates, seed)
    path = out / "report.md"
    write_atomic(path, body.replace("{secs}", f"{time.perf_counter() - start:.0f}"))
    if readme is not None:
        link = Path(os.path.relpath(path.resolve(), readme.resolve().parent)).as_posix()
        replace_block(readme, README_BLOCK, summary_markdown(sections, link), required=True)
    return path
