"""The Markdown of the stochastic-debate report (:mod:`.report` computes the rows)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._seeds import check_seed
from ..errors import ProofgamesError
from ..reporting import check_block
from ..reporting.tables import markdown_table
from ..stochastic.hypothesis import K_DEFINITIONS, ORACLE, STEP

Rows = list[dict[str, Any]]

BACKING = {
    "paper": "the paper's proof (written; not machine-checked)",
    "lean": "the Lean theorem (machine-checked)",
}
"""What backs the bound of each parameter set the report's guarantees use."""

LEGEND = [
    "How to read the figures. *exact*: computed, not sampled -- the optimal adversaries'",
    "values, by backward induction over A's histories (the liar's maximum over every",
    "floating-point announcement, the disputer's expectation over every estimate of honest",
    "A), up to floating-point rounding and Binomial tails below 1e-18. *bound*: the",
    "theorem's bound at a K that meets its hypothesis; *backed by*: the Lean theorem",
    "(machine-checked) for the Lean constants, the paper's written proof (not",
    "machine-checked) for the paper's. *bound formula*: the same formula at",
    "a K that does not (`hypothesis: fails`), or is not known to -- not a theorem.",
    "*measured*: a Monte Carlo fraction with its 95% Clopper-Pearson interval",
    "[ci_low, ci_high]. *K (every step)*: a sound upper bound on the Lipschitz constant",
    "over every step's conditional probability (the hypothesis of the proofs and of the",
    "Lean formalization), within 1e-6 of a ratio some perturbation attains -- except where",
    "a machine has too many states, where it is the step-count bound (an upper bound only).",
    "*oracle-only K*: the paper's Definition 6.1 (`machine.lipschitz`).",
]


@dataclass(frozen=True)
class Sections:
    """The report's computed sections (rows, and figure paths)."""

    guarantees: Rows
    k_definitions: Rows
    deterministic: Rows
    costs: tuple[Rows, list[Path]]
    looseness: tuple[Rows, Path]

    def first_break(self, family: str) -> Any:
        """The largest knob of ``family`` at which an exact optimal adversary breaks 3/5, 2/5."""
        broken = [r["knob"] for r in self.looseness[0]
                  if r["family"] == family and not r["holds"]]  # fmt: skip
        return max(broken, default=None)


def table(rows: Rows, cols: list[str]) -> str:
    """A Markdown table of ``rows`` (booleans as yes / **NO**, floats to 4 digits)."""

    def fmt(v: Any) -> str:
        if isinstance(v, bool):
            return "yes" if v else "**NO**"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    return markdown_table(cols, [[fmt(r[c]) for c in cols] for r in rows])


def _k_sections(s: Sections) -> list[str]:
    """Section 1's two subsections: which K the proofs need; shading deterministic steps."""
    return [
        "### Which K the proofs need", "",
        "The paper defines K through the oracle's answers only. But a dishonest A may also",
        "shade *deterministic* steps and internal coins by just under B's abort threshold (V",
        "would reject only larger lies, and honest B aborts only at the threshold), and the",
        "proofs (and the Lean formalization, whose oracle is the whole next-bit distribution)",
        "cover this only if K bounds P[M=1]'s sensitivity to every step's conditional",
        "probability. With the oracle-only K the hypothesis fails, the bound formula is no",
        "theorem, and the exact optimal liar can exceed it; with K over every step",
        "(`proofgames.stochastic.hypothesis`) it is proven and holds.", "",
        table(s.k_definitions, ["machine", "T", "P[M=1]", "K", "K value", "params",
                                "optimal liar (exact)", "bound formula", "hypothesis",
                                "within formula"]),
        "### Deterministic steps: shading below the threshold", "",
        "On `copy-chain` (one question, then t - 1 copies of the answer; P[M=1] = 0.3,",
        "oracle-only K = 1, K over every step 1 + 0.7 (t - 1)) a liar that shades every copy",
        "just under B's threshold turns the false claim into a likely win as t grows when the",
        "parameters use K = 1. Requiring exact announcements at known steps",
        "(`--params paper:strict` / `lean:strict`: B aborts on, and V rejects, any difference",
        "there; our variant, outside the formalization, so its bound stays a formula) closes",
        "the gap with K = 1; so do parameters from K over every step (the theorem's",
        "hypothesis), at the price of samples growing as K^2. Honest provers are unaffected",
        "(they announce known steps exactly). Rows up to t = 12 are exact; longer chains are",
        "measured (`evade`), `within formula` then meaning the interval does not exclude it.", "",
        table(s.deterministic, ["machine", "params", "K", "K value", "adversary", "acceptance",
                                "bound formula", "hypothesis", "within formula"]),
    ]  # fmt: skip


def report_markdown(s: Sections, summary: str, out: Path, debates: int, seed: int) -> str:
    """The whole ``report.md`` (``{secs}`` left for the caller to fill in)."""
    cost_rows, cost_figs = s.costs
    loose_rows, loose_fig = s.looseness
    text = [
        "# Stochastic debate: measured guarantees and costs beside the theorems", "",
        f"Regenerate with `proofgames report --out {out} --overwrite` "
        f"({debates:,} debates per cell, seed {seed}; took {{secs}} s).", "",
        summary, *LEGEND, "",
        "## 1. Completeness and soundness near the 2/3 and 1/3 thresholds", "",
        "Parameters derived from K over every step, so the theorem's hypothesis holds and its",
        "bound is proven. True claims (P[M=1] >= 2/3): honest A against every B; the bound is",
        "3/5 (paper) or the Lean formula (1-v)(P1 - Kc - (1-(1-q)^T)), a lower bound. False",
        "claims (P[M=1] <= 1/3): every A against honest B; the bound is 2/5 (paper) or",
        "1 - (1-v)(1-q)^T (P0 - Kb) (Lean), an upper bound. `optimal within`: the exact",
        "optimal adversary respects the bound; `interval consistent`: the measured 95%",
        "interval does not exclude it (over many cells a few misses would be chance).",
        "`forfeits A/B`: debates each party lost by misbehaving (raising, a malformed or",
        "out-of-range message); they count in `measured` as V decided them.", "",
        table(s.guarantees, ["machine", "P[M=1]", "K (every step)", "params", "claim", "A",
                             "B", "measured", "ci_low", "ci_high", "optimal (exact)",
                             "bound", "backed by", "optimal within", "interval consistent",
                             "forfeits A/B"]),
        *_k_sections(s),
        "## 2. Oracle samples per party", "",
        "A and B: honest against honest (mean samples per debate, measured); V: honest A",
        "against a B that aborts at the first oracle query (the most V ever pays). Lines: the",
        "theorems' bounds T(R_A + 1), T(R_B + 1), r + 1 -- charged for every step, while only",
        "oracle steps cost samples (the long computation asks 3 questions; majority asks n).",
        "**K here is the oracle-only K**: the figures show how the cost formulas scale in",
        "the K they are given, and these parameters do *not* meet the theorem's hypothesis.",
        "`K (every step)` is the K that does; every sample count grows as its square (on",
        "`long-computation` it grows with T, since every checksum step can be shaded).", "",
        *(f"![{p.stem}]({p.name})" for p in cost_figs), "",
        table(cost_rows, ["machine", "params", "T", "K", "K (every step)", "measured_A",
                          "formula_A", "measured_B", "formula_B", "measured_V", "formula_V"]),
        "## 3. How far the constants can shrink", "",
        "Exact optimal-adversary values on majority-of-3 machines just above 2/3 and just",
        "below 1/3 (K over every step), as the paper's 150 (in d = ceil(150 K)) and the Lean",
        "sample counts shrink. First paper scale that breaks a guarantee: "
        f"{s.first_break('paper')}; first Lean factor: {s.first_break('lean')}.", "",
        f"![looseness]({loose_fig.name})", "",
        table(loose_rows, ["family", "knob", "machine", "samples_A", "samples_V",
                           "optimal (exact)", "target", "holds"]),
    ]  # fmt: skip
    return "\n".join(text)


def _pick(
    rows: Rows, machine: str, params: str, k_definition: str, key: str = "acceptance"
) -> float:
    return float(next(r[key] for r in rows if r["machine"] == machine
                      and r["params"] == params and r["K"] == k_definition))  # fmt: skip


def _summary_rows(s: Sections) -> Rows:
    """Worst measured adversary per machine and constants, beside the exact and proven."""
    groups: dict[tuple[str, str], Rows] = {}
    for r in s.guarantees:
        groups.setdefault((r["machine"], r["params"]), []).append(r)
    rows = []
    for (spec, pname), group in groups.items():
        true_claim = group[0]["claim"] == "true"
        worst = (min if true_claim else max)(group, key=lambda r: r["measured"])
        rows.append({
            "machine": spec, "params": pname, "claim": group[0]["claim"],
            "worst measured adversary [95% CI]": f"{'B' if true_claim else 'A'} = "
            f"{worst['B'] if true_claim else worst['A']}: {worst['measured']:.3f} "
            f"[{worst['ci_low']:.3f}, {worst['ci_high']:.3f}]",
            "optimal adversary (exact)": group[0]["optimal (exact)"],
            "bound": f"{'>=' if true_claim else '<='} {group[0]['bound']:.3f}",
            "backed by": group[0]["backed by"],
            "holds": all(r["optimal within"] and r["interval consistent"] for r in group),
        })  # fmt: skip
    return rows


def summary_markdown(s: Sections, link: str | None = None) -> str:
    """The key table (worst case per machine and constants, beside the theorem's bound).

    ``link``: the full report's address as seen from the page that shows the summary (the
    README); ``None`` inside the report itself.
    """
    o, st = K_DEFINITIONS[ORACLE], K_DEFINITIONS[STEP]
    oracle = [r for r in s.k_definitions if r["K"] == o]
    broken = sum(1 for r in oracle if not r["within formula"])
    step_broken = sum(1 for r in s.k_definitions if r["K"] == st and not r["within formula"])
    chain, det = "copy-chain:t=1000,p=0.3", s.deterministic
    cols = ["machine", "params", "claim", "worst measured adversary [95% CI]",
            "optimal adversary (exact)", "bound", "backed by", "holds"]  # fmt: skip
    return (
        "**Summary** (honest opponent throughout; parameters from K over every step, which "
        "meets the theorem's hypothesis, so the bounds hold as far as their backing goes; "
        "optimal values exact; "
        "measured values with 95% intervals):\n\n"
        + table(_summary_rows(s), cols)
        + f"\nWith the paper's oracle-only K (Definition 6.1) the hypothesis fails, and the "
        f"exact optimal liar exceeds the bound formula in {broken} of {len(oracle)} cases "
        f"(see 'Which K the proofs need'); with K over every step in {step_broken}. On "
        f"`{chain}` with K = 1 a liar shading deterministic steps is accepted with "
        f"probability {_pick(det, chain, 'paper', o):.2f} under the paper's constants and "
        f"{_pick(det, chain, 'lean', o):.2f} under Lean's (measured; formula "
        f"{_pick(det, chain, 'paper', o, 'bound formula'):.2f} and "
        f"{_pick(det, chain, 'lean', o, 'bound formula'):.2f}); checking known steps exactly "
        f"(`paper:strict`: {_pick(det, chain, 'paper:strict', o):.2f}) or deriving the "
        f"parameters from K over every step (paper: {_pick(det, chain, 'paper', st):.2f}) "
        f"restores the bound. Shrinking the constants, an exact optimal adversary first "
        f"breaks a guarantee at the paper's 150 -> {s.first_break('paper')} and at "
        f"{s.first_break('lean')} x the Lean sample counts (section 3"
        + (f"; [full report]({link})" if link else "")
        + ").\n"
    )


def check_report_args(out: Path, debates: int, seed: int, readme: Path | None, block: str) -> None:
    """Refuse, before any measurement, arguments a report writer cannot use.

    Raises:
        ProofgamesError: ``debates`` not a positive integer, ``seed`` not a non-negative
            integer, ``out`` not a folder that can be made, or (:class:`ReadmeError`)
            ``readme`` unreadable or without the ``block`` markers.
    """
    if isinstance(debates, bool) or not isinstance(debates, int) or debates <= 0:
        raise ProofgamesError(f"debates must be a positive integer, got {debates!r}")
    check_seed(seed, optional=False)
    if readme is not None:
        check_block(readme, block)
    if "\x00" in str(out):
        raise ProofgamesError(f"{str(out)!r} cannot name a folder: it holds a NUL byte")
    if out.exists() and not out.is_dir():
        raise ProofgamesError(f"{out} exists and is not a folder: cannot write the report there")
