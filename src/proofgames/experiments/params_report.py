"""The parameter report: how few human judgements a stochastic debate needs, and at what cost.

:func:`write_params_report` regenerates ``report.md`` and two figures in one folder:

1. **Costs.**  V's worst-case oracle queries (its samples on an abort) and A's and B's
   samples per round for four sets -- the paper's, the Lean defaults, optimized-Hoeffding
   and optimized-exact (:mod:`.optimize`) -- over K in {1, 2, 5, 10} and T in {10, 10^3,
   10^6}.  These counts are exact (the formulas evaluated, certified where Hoeffding).
2. **Guarantees at the optimized sets.**  The exact optimal adversaries' acceptance
   (:mod:`.optimal`: optimal B against honest A on true claims, optimal A against honest B
   on false ones), a Monte Carlo measurement of the same adversaries with its 95%
   Clopper--Pearson interval, and the bound with what backs it (:data:`BACKING`).
3. **Non-monotonicity** of the exact-tail condition at the optimized V.
4. **Figures**: V's queries against K, and V's queries against the cap on prover samples.
5. **A sequential V**: the curtailed V's exact expected queries (:mod:`.sequential`).

The optimizations and the Monte Carlo chunks are work items of :mod:`proofgames.sweeps.executors`:
given an executor (``params report --workers N`` or ``--executor dask``) they run there,
with the numbers of a run in this process.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:  # doctest: +SKIP
    ...     _ = write_params_report(Path(d), debates=2000)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from fractions import Fraction
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from ..errors import ProofgamesError
from ..reporting import replace_block, save_figure, write_atomic
from ..stochastic.hypothesis import guarantee, machine_params
from ..stochastic.machines import make_stochastic_machine
from ..stochastic.optimal import optimal_disputer, optimal_liar
from ..stochastic.optimize import METHOD, optimize_params
from ..stochastic.params import StochasticParams, lean_params, paper_params
from ..stochastic.sequential import curtailed_queries
from ..stochastic.tails import EXACT_LABEL, TIER_BACKING, exact_tail_samples
from ..stochastic.tight import optimize_tight
from ..sweeps.executors import map_items
from ._params_tiers import tiers_section
from ._report_text import check_report_args, table
from .montecarlo import Cell, estimate_cells

KS = (1.0, 2.0, 5.0, 10.0)
TS = (10, 1000, 10**6)
FIGURE_KS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0)
CAPS = tuple(10**e for e in range(4, 11))
SETS = ("paper", "lean", "optimized", "optimized-exact")
TIGHT = "optimized-tight"
TIER_KS, TIER_TS = (1.0, 2.0, 5.0), (10, 1000)
BACKING = {"paper": "the paper's written proof (not machine-checked)",
           "lean": TIER_BACKING["hoeffding"], "optimized": TIER_BACKING["hoeffding"],
           "optimized-exact": TIER_BACKING["exact"], TIGHT: TIER_BACKING["tight"]}  # fmt: skip
"""What backs each set's guarantee, as the report labels it."""
TAIL_OF = {"optimized": "hoeffding", "optimized-exact": "exact"}
MEASURED = (("padded-query:t=10,p=0.67", True), ("padded-query:t=10,p=0.33", False),
            ("single-query:p=0.67", True), ("single-query:p=0.33", False),
            ("majority:n=3,p=0.62", True), ("majority:n=3,p=0.38", False))  # fmt: skip


Key = tuple[str, float, int, int]  # (set, K, T, cap on prover samples)
DEFAULT_CAP = 10**8


def report_keys() -> list[Key]:
    """Every optimized set the report reads: the tables', the figures' and the headline's."""
    keys: list[Key] = []
    for name in ("optimized", "optimized-exact"):
        keys += [(name, k, t, DEFAULT_CAP) for k in KS for t in TS]
        keys += [(name, k, 10, DEFAULT_CAP) for k in FIGURE_KS]
        keys += [(name, 1.0, 10, cap) for cap in CAPS]
    keys += [(TIGHT, k, t, DEFAULT_CAP) for k in TIER_KS for t in TIER_TS]
    return list(dict.fromkeys(keys))


def _optimized(key: Key) -> tuple[StochasticParams, float]:
    """One optimization (a work item): the set and the seconds it took."""
    name, k, t, cap = key
    if name == TIGHT:
        r = optimize_tight(k, t, max_prover_samples=cap)
    else:
        r = optimize_params(k, t, max_prover_samples=cap, tail=TAIL_OF[name])
    return r.params, r.seconds


class _Sets:
    """The four parameter sets at each (K, T, cap), each optimization run once."""

    def __init__(self) -> None:
        self.cache: dict[Key, StochasticParams] = {}
        self.seconds: dict[str, float] = {}

    def prefetch(
        self,
        keys: Iterable[Key],
        executor: Executor | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Run the optimizations of ``keys`` not yet cached, fanned out on ``executor``."""
        todo = [key for key in dict.fromkeys(keys) if key not in self.cache]
        done = map_items(_optimized, [(repr(key), key) for key in todo], executor,
                         progress=progress)  # fmt: skip
        for key in todo:
            params, seconds = done[repr(key)]
            self._keep(key, params, seconds)

    def _keep(self, key: Key, params: StochasticParams, seconds: float) -> None:
        name, k, t, cap = key
        self.cache[key] = params
        self.seconds[f"{name} K={k:g} T={t} cap={cap:.0e}"] = seconds

    def get(self, name: str, k: float, t: int, cap: int = 10**8) -> StochasticParams:
        key = (name, k, t, cap)
        if key not in self.cache:
            if name == "paper":
                self.cache[key] = paper_params(k, t)
            elif name == "lean":
                self.cache[key] = lean_params(k, t)
            else:
                self._keep(key, *_optimized(key))
        return self.cache[key]


def _v_label(p: StochasticParams) -> str:
    """V's count, marked when an exact-tier count fell back to Hoeffding's."""
    fallback = p.tails is not None and p.tails["V"].startswith("hoeffding")
    return f"{p.v_samples:,}" + (" (H)" if fallback else "")


def cost_rows(sets: _Sets) -> list[dict[str, Any]]:
    """Section 1: V's worst-case queries, A's and B's samples per round, for every set."""
    rows = []
    for k in KS:
        for t in TS:
            row: dict[str, Any] = {"K": f"{k:g}", "T": f"{t:,}"}
            for name in SETS:
                p = sets.get(name, k, t)
                row[f"V {name}"] = _v_label(p)
                row[f"A / B {name}"] = f"{p.a_samples:.2e} / {p.b_samples:.2e}"
            rows.append(row)
    return rows


def measured_rows(
    sets: _Sets,
    debates: int,
    seed: int,
    executor: Executor | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Section 2: exact optimal adversaries and Monte Carlo at the optimized sets.

    The Monte Carlo cells are measured together (:func:`.estimate_cells`), each with the
    numbers it gives alone.
    """
    rows, cells = [], []
    for spec, true_claim in MEASURED:
        m = make_stochastic_machine(spec)
        assert m.p_accept is not None
        for name in ("optimized", "optimized-exact", TIGHT):
            params = machine_params(name, m)
            theorem = guarantee(m, params, 1)
            if true_claim:
                best, (a, b) = optimal_disputer(m, params, 1), ("honest", "optimal")
                holds = best.value >= (theorem.proven or 0.0) - 1e-12
            else:
                best, (a, b) = optimal_liar(m, params, 1), ("optimal", "honest")
                holds = best.value <= (theorem.proven or 1.0) + 1e-12
            cells.append(Cell(spec, params, 1, a, b))
            target = 3 / 5 if true_claim else 2 / 5
            rows.append({
                "machine": spec, "T": m.length, "K (every step)": f"{params.k:.4g}",
                "set": name, "V queries": _v_label(params),
                "claim": "true" if true_claim else "false",
                "adversary": "optimal B" if true_claim else "optimal A",
                "optimal (exact)": best.value,
                "bound": theorem.proven if theorem.proven is not None else "none",
                "backed by": BACKING[name],
                "within bound": bool(holds),
                "meets 3/5, 2/5": bool((best.value - target) * (1 if true_claim else -1) >= 0),
            })  # fmt: skip
    estimates = estimate_cells(cells, debates=debates, seed=seed, executor=executor,
                               progress=progress)  # fmt: skip
    for row, e in zip(rows, estimates, strict=True):
        row["measured"], row["95% CI"] = e.acceptance, f"[{e.ci_low:.4f}, {e.ci_high:.4f}]"
    return rows


def _figure_v_against_k(sets: _Sets, out: Path) -> Path:
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    for name, style in zip(SETS, ("s-", "^-", "o-", "D-"), strict=True):
        ps = [sets.get(name, k, 10) for k in FIGURE_KS]
        ax.plot(FIGURE_KS, [p.v_samples for p in ps], style, label=name)
        if name == "optimized-exact":
            fall = [(k, p.v_samples) for k, p in zip(FIGURE_KS, ps, strict=True)
                    if p.tails is not None and p.tails["V"] != EXACT_LABEL]  # fmt: skip
            if fall:
                ax.plot(*zip(*fall, strict=True), "kx", ms=9,
                        label="exact tier above its scan limit: Hoeffding count")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Lipschitz constant K (T = 10)")
    ax.set_ylabel("V's oracle queries on an abort (exact count)")
    ax.set_title("Human judgements per debate, worst case")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "v_queries_vs_k.png"
    save_figure(fig, path)
    return path


def tradeoff_rows(sets: _Sets) -> list[dict[str, Any]]:
    """V's queries against the cap on prover samples per round, K = 1, T = 10."""
    rows = []
    for cap in CAPS:
        h, x = sets.get("optimized", 1.0, 10, cap), sets.get("optimized-exact", 1.0, 10, cap)
        rows.append({"cap": f"{cap:.0e}", "prover samples (A)": f"{h.a_samples:,}",
                     "V optimized": f"{h.v_samples:,}", "V optimized-exact": _v_label(x),
                     "v_hoeffding": h.v_samples, "v_exact": x.v_samples})  # fmt: skip
    return rows


def _figure_tradeoff(rows: list[dict[str, Any]], out: Path) -> Path:
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    caps = list(CAPS)
    ax.plot(caps, [r["v_hoeffding"] for r in rows], "o-", label="optimized (Hoeffding)")
    ax.plot(caps, [r["v_exact"] for r in rows], "D-", label=f"optimized-exact ({EXACT_LABEL})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cap on A's and B's oracle samples per round")
    ax.set_ylabel("V's oracle queries on an abort (exact count)")
    ax.set_title("Trade-off at K = 1, T = 10 (grid optima)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "v_queries_vs_prover_samples.png"
    save_figure(fig, path)
    return path


def sequential_rows(sets: _Sets) -> list[dict[str, Any]]:
    """Section 5: the curtailed V's exact expected queries at K = 1, T = 10."""
    rows = []
    for name in ("optimized", "optimized-exact"):
        p = sets.get(name, 1.0, 10)
        assert p.lean is not None
        theta = p.v_threshold
        for a in (0.5, 0.67):
            for what, delta in (("honest (p = a)", 0.0), ("honest, A's error c", p.lean["c"]),
                                ("p = a - theta", -theta), ("p = a - 2 theta", -2 * theta),
                                ("p = a - 0.3", -0.3)):  # fmt: skip
                r = curtailed_queries(p.v_samples, a, theta, min(1.0, max(0.0, a + delta)))
                rows.append({"set": name, "announced a": a, "true p": what,
                             "expected queries (exact)": f"{r.expected:,.0f}",
                             "worst case": f"{r.worst_case:,}",
                             "saved": f"{1 - r.expected / r.worst_case:.1%}",
                             "P[V accepts] (exact)": r.accept})  # fmt: skip
    return rows


def tier_rows(sets: _Sets) -> list[dict[str, Any]]:
    """V's worst case per tier at K in :data:`TIER_KS`, T in :data:`TIER_TS`."""
    names = ("lean", "optimized", "optimized-exact", TIGHT)
    return [{"K": f"{k:g}", "T": f"{t:,}",
             **{f"V {name}": f"{sets.get(name, k, t).v_samples:,}" for name in names}}
            for k in TIER_KS for t in TIER_TS]  # fmt: skip


def headline(sets: _Sets) -> dict[str, Any]:
    """The K = 1, T = 10 figures: every set's counts and the exact tail's non-monotonicity."""
    ps = {name: sets.get(name, 1.0, 10) for name in (*SETS, TIGHT)}
    exact = ps["optimized-exact"]
    assert exact.lean is not None
    eps = (Fraction(exact.lean["s"]) - Fraction(exact.lean["c"])) / 2
    tail = exact_tail_samples(eps, Fraction(exact.lean["v"]), smallest=True)
    return {"sets": ps, "tail": tail, "eps": float(eps), "delta": exact.lean["v"]}


def _headline_markdown(h: dict[str, Any]) -> list[str]:
    ps, tail = h["sets"], h["tail"]
    lean_v = ps["lean"].v_samples
    rows = [{"set": name, "V queries (worst case)": f"{p.v_samples:,}",
             "fewer than Lean's": f"{lean_v / p.v_samples:.3g}x",
             "A samples / round": f"{p.a_samples:,}", "B samples / round": f"{p.b_samples:,}",
             "backed by": BACKING[name]}
            for name, p in ps.items()]  # fmt: skip
    o, x = ps["optimized"].lean, ps["optimized-exact"].lean
    assert o is not None and x is not None
    values = ", ".join(f"{key} = {o[key]:g}" for key in ("v", "q", "c", "s", "b"))
    values_x = ", ".join(f"{key} = {x[key]:g}" for key in ("v", "q", "c", "s", "b"))
    return [
        "## 1. At K = 1, T = 10", "",
        table(rows, list(rows[0])), "",
        f"optimized: {values}. optimized-exact: {values_x} (w = 2/3, d = 3/5; at most "
        "10^8 samples per round for each prover). Both are **grid optima** "
        f"({METHOD}), accepted only through `lean_params`, which checks every condition in "
        "exact rational arithmetic; the Hoeffding counts are certified (rational bounds on "
        "the logarithm).", "",
        f"The exact tail at V's (eps, delta) = ({h['eps']:.5g}, {h['delta']:g}) is not "
        f"monotone in n: the smallest n that meets it is {tail.smallest:,}, but "
        f"{tail.failing_above_smallest} n between it and {tail.n0:,} fail, so V takes "
        f"n0 = {tail.n0:,} (every n >= n0 meets it); Hoeffding's count is "
        f"{tail.hoeffding:,}.", "",
        f"optimized-tight: {_tight_values(ps[TIGHT])} (`docs/stochastic-tight.md`: V's "
        "completeness error v_c (a two-sided tail) and soundness error v_s (a one-sided tail) "
        "bounded separately, V's threshold free between c and s; every condition checked in "
        "exact rational arithmetic).", "",
        "These are what each proof technique certifies, not what the problem needs: at "
        "K = 1 only the machine's last query can move its output, so compare K = 2 and "
        "K = 5 too (section 2).", "",
    ]  # fmt: skip


def _tight_values(p: StochasticParams) -> str:
    assert p.tight is not None
    keys = ("v_c", "v_s", "q_a", "q_b", "c", "s", "b")
    return ", ".join([f"{key} = {p.tight[key]:g}" for key in keys]
                     + [f"theta_V = {p.v_threshold:g}"])  # fmt: skip


def params_markdown(
    h: dict[str, Any], costs: list[dict[str, Any]], measured: list[dict[str, Any]],
    trade: list[dict[str, Any]], figures: list[Path], out: Path, debates: int, seed: int,
    seq: list[dict[str, Any]], tiers: list[dict[str, Any]],
) -> str:  # fmt: skip
    """The whole ``report.md`` (``{secs}`` left for the caller to fill in)."""
    broken = [r for r in measured if not (r["within bound"] and r["meets 3/5, 2/5"])]
    cost_cols = ["K", "T"] + [f"V {n}" for n in SETS] + [f"A / B {n}" for n in SETS]
    lines = [
        "# Fewer human judgements: optimized stochastic-debate parameters", "",
        f"Regenerate with `proofgames params report --out {out} --overwrite` "
        f"({debates:,} debates per measured row, seed {seed}; took {{secs}} s).", "",
        "V's oracle queries are the human judgements; every count is the most a debate "
        "uses under a guarantee, labelled by what backs the guarantee. The Lean theorem "
        "holds for any `Params` meeting its conditions; `proofgames params optimize` picks "
        "the set with the fewest V queries under a cap on the provers' samples. Three tiers: "
        f"**optimized** ({TIER_BACKING['hoeffding']}), **optimized-exact** "
        f"({TIER_BACKING['exact']}: the smallest n from which every n meets "
        "P[|p^ - p| >= eps] <= delta for every p, evaluated at the breakpoints of the tail in "
        "double precision with a relative margin of 1e-9; `stochastic.tails`) and "
        f"**optimized-tight** ({TIER_BACKING['tight']}).",
        "",
        *_headline_markdown(h),
        "## 2. Costs over K and T", "",
        "Exact counts from each set's formulas. V: worst-case queries (samples on an abort). "
        "A / B: samples per round. (H): the exact tier's scan is above its limit, so the "
        "count is Hoeffding's.", "",
        table(costs, cost_cols), "",
        "V's worst case per tier, with the tight tier (its optimization and exact check "
        "take minutes at K = 5, so it is tabled only here):", "",
        table(tiers, list(tiers[0])), "",
        "Backing: " + "; ".join(f"{n}: {BACKING[n]}" for n in ("lean", "optimized",
                                                             "optimized-exact", TIGHT)) + ".",
        "",
        "## 3. Guarantees at the optimized sets", "",
        "*optimal (exact)*: the exact optimal adversary's acceptance probability (backward "
        "induction, `stochastic.optimal`). *measured*: the same adversary over "
        f"{debates:,} debates, 95% Clopper-Pearson interval. *bound*: the set's formula at "
        "the every-step K (lower bound for true claims, upper for false), *backed by* what "
        "it says: only the optimized rows' bound is machine-checked. "
        "`padded-query:t=10` is nine constant steps and one query (K = 1, T = 10).", "",
        table(measured, ["machine", "T", "K (every step)", "set", "V queries", "claim",
                         "adversary", "optimal (exact)", "measured", "95% CI", "bound", "backed by",
                         "within bound", "meets 3/5, 2/5"]), "",
        ("Every exact optimal value is within its bound and meets 3/5 and 2/5."
         if not broken else f"**{len(broken)} row(s) break a bound or a target: a finding.**"),
        "",
        "## 4. Figures", "",
        f"![V's queries against K]({figures[0].name})", "",
        f"![V's queries against prover samples]({figures[1].name})", "",
        table(trade, ["cap", "prover samples (A)", "V optimized", "V optimized-exact"]), "",
        "## 5. A sequential V (curtailed sampling)", "",
        "V draws its samples one at a time and stops once the remaining ones cannot change "
        "its verdict (`stochastic.sequential`). Every path gets the fixed-n V's verdict, so "
        "the guarantees above are unchanged (an argument, not machine-checked) and the worst "
        "case is still n. Expected queries are exact (dynamic programming over the paths), "
        "not simulated; `debate` and `estimate` still count the fixed n. An honest "
        "announcement is accepted only after about n (1 - 2 theta) samples, so the worst "
        "case that matters -- honest A against a B that always aborts -- barely moves; far-off "
        "announcements are rejected sooner. A V whose verdict may differ from the fixed-n "
        "one, with its own proof: section 6.", "",
        table(seq, list(seq[0])), "",
    ]  # fmt: skip
    return "\n".join(lines)


README_BLOCK = "report:params"
"""The README block that :func:`write_params_report` fills with :func:`summary_line`."""


def check_params_report_args(
    out: Path, debates: int, seed: int, readme: Path | None = None
) -> None:
    """Refuse, before any work, arguments :func:`write_params_report` cannot use.

    Raises:
        ProofgamesError: as :func:`~._report_text.check_report_args`, for the
            ``report:params`` block.
    """
    check_report_args(out, debates, seed, readme, README_BLOCK)


def write_params_report(
    out: Path,
    debates: int = 20_000,
    seed: int = 0,
    readme: Path | None = None,
    executor: Executor | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Regenerate ``out/report.md`` and its figures; return the Markdown file's path.

    With ``readme``, also writes :func:`summary_line` between its ``report:params`` markers.
    With ``executor``, the optimizations and the Monte Carlo chunks run there (the same
    numbers).  ``progress(stage, done, total)`` follows the two fanned-out stages,
    ``"optimizations"`` and ``"debates"``.

    Raises:
        ProofgamesError: a bad argument, a folder that cannot be written, or a README
            without the markers (checked before any computation).
    """
    check_params_report_args(out, debates, seed, readme)
    start = time.perf_counter()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProofgamesError(f"cannot make the folder {out}: {exc.strerror or exc}") from None
    sets = _Sets()
    keys = report_keys()
    sets.prefetch(keys, executor, _stage(progress, "optimizations", len(keys)))
    h = headline(sets)
    costs = cost_rows(sets)
    total = debates * len(MEASURED) * 2
    measured = measured_rows(sets, debates, seed, executor, _stage(progress, "debates", total))
    trade = tradeoff_rows(sets)
    figures = [_figure_v_against_k(sets, out), _figure_tradeoff(trade, out)]
    seq = sequential_rows(sets)
    body = params_markdown(h, costs, measured, trade, figures, out, debates, seed, seq,
                           tier_rows(sets))  # fmt: skip
    body += "\n".join(["", *tiers_section(sets, out)])
    path = out / "report.md"
    write_atomic(path, body.replace("{secs}", f"{time.perf_counter() - start:.0f}"))
    if readme is not None:
        link = f" ([parameter report]({out.as_posix()}/report.md))"
        replace_block(readme, README_BLOCK, summary_line(h) + link + "\n", required=True)
    return path


def _stage(
    progress: Callable[[str, int, int], None] | None, stage: str, total: int
) -> Callable[[int], None] | None:
    """``progress`` of one stage as ``map_items`` calls it (by finished units)."""
    if progress is None:
        return None
    done = [0]
    progress(stage, 0, total)

    def advance(n: int) -> None:
        done[0] += n
        progress(stage, done[0], total)

    return advance


def summary_line(h: dict[str, Any]) -> str:
    """One sentence for the README: how many fewer human judgements, on what guarantee."""
    ps = h["sets"]
    lean_v, o, x = ps["lean"].v_samples, ps["optimized"].v_samples, ps["optimized-exact"].v_samples
    tight = ps[TIGHT].v_samples
    return (
        f"At K = 1, T = 10 a stochastic debate uses at most {o:,} human judgements (V's worst "
        f"case) instead of the Lean defaults' {lean_v:,}, {lean_v / o:.0f}x fewer, with the "
        "same machine-checked guarantee (true claims accepted w.p. >= 3/5, false ones <= 2/5; "
        f"the Lean theorem); at most {x:,} ({lean_v / x:.0f}x fewer) with Lean's argument and "
        f"an exact binomial tail (not machine-checked), and at most {tight:,} "
        f"({lean_v / tight:.0f}x fewer) with a written proof checked numerically "
        "(docs/stochastic-tight.md; not machine-checked). These count what each proof "
        "technique certifies, not what the problem needs. The provers pay with about "
        f"10^{round(math.log10(ps['optimized'].a_samples))} samples per round each, simulated "
        "at no extra cost."
    )
