"""Figures and markdown of the language report (see :mod:`.report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # not pyplot: a caller's backend stays as it was

from ..reporting import markdown_table, save_figure, write_atomic

COLOURS = {
    "cross-examination": "tab:blue", "bisection": "tab:green",
    "whole-transcript": "tab:red", "consultancy": "tab:purple",
}  # fmt: skip


def _tokens_figure(results: dict[str, Any], out: Path) -> None:
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for protocol in ("cross-examination", "bisection", "whole-transcript"):
        rows = [r for r in results["tokens"] if r["protocol"] == protocol]
        x = [r["steps"] for r in rows]
        y = [r["mean"] for r in rows]
        err = [[r["mean"] - r["min"] for r in rows], [r["max"] - r["mean"] for r in rows]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"{protocol} (measured)",
                    color=COLOURS[protocol])  # fmt: skip
    ax.set(xscale="log", yscale="log", xlabel="steps in the transcript",
           ylabel="judge input tokens per debate",
           title="What the judge reads (measured: mean, bars min-max)")  # fmt: skip
    ax.legend()
    fig.tight_layout()
    save_figure(fig, out / "tokens.png", dpi=120)


def _rate_panels(rows: list[dict[str, Any]], path: Path, title: str, exact: bool) -> None:
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    keys = (("completeness", "P[accept | honest A]"),
            ("soundness_error", "P[accept | dishonest A]"))  # fmt: skip
    for ax, (key, label) in zip(axes, keys, strict=True):
        for protocol in COLOURS:
            mine = [r for r in rows if r["protocol"] == protocol]
            if not mine:
                continue
            x = [r["rate"] for r in mine]
            y = [r[key] for r in mine]
            ci = [r[f"{key}_ci"] for r in mine]
            err = [[max(0.0, v - c[0]) for v, c in zip(y, ci, strict=True)],
                   [max(0.0, c[1] - v) for v, c in zip(y, ci, strict=True)]]  # fmt: skip
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color=COLOURS[protocol],
                        label=f"{protocol} (measured, 95% CI)")  # fmt: skip
            if exact:
                ax.plot(x, [r[f"exact_{key}"] for r in mine], "--", color=COLOURS[protocol],
                        label=f"{protocol} (exact)")  # fmt: skip
        ax.set(xlabel="judge error rate per step read", ylabel=label, ylim=(-0.03, 1.03))
        ax.set_title(label)
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def _gsm8k_figure(results: dict[str, Any], out: Path) -> None:
    rows = results["gsm8k"]
    if not rows:
        return
    fig = Figure(figsize=(9, 3.6))
    axes = fig.subplots(1, 2)
    names = [r["protocol"] for r in rows]
    acc = [r["accuracy"] for r in rows]
    err = [[max(0.0, a - r["accuracy_ci"][0]) for a, r in zip(acc, rows, strict=True)],
           [max(0.0, r["accuracy_ci"][1] - a) for a, r in zip(acc, rows, strict=True)]]  # fmt: skip
    colours = [COLOURS[n] for n in names]
    axes[0].bar(names, acc, yerr=err, capsize=4, color=colours)
    axes[0].set(ylabel="accuracy vs is_correct", ylim=(0, 1),
                title="Verdict accuracy (measured, 95% CI)")  # fmt: skip
    axes[1].bar(names, [r["judge_input_tokens"] for r in rows], color=colours)
    axes[1].set(ylabel="judge input tokens per solution", title="Tokens read (measured, mean)")
    fig.suptitle("GSM8K model solutions, calculator judge")
    fig.tight_layout()
    save_figure(fig, out / "gsm8k.png", dpi=120)


def write_figures(results: dict[str, Any], out: Path) -> None:
    """``tokens.png``, ``accuracy.png``, ``figure1.png``, ``gsm8k.png``."""
    _tokens_figure(results, out)
    t = results["accuracy_steps"]
    _rate_panels(
        results["accuracy"],
        out / "accuracy.png",
        f"Generated task, {t} steps, scripted judge (one judge call)",
        exact=True,
    )
    _rate_panels(
        results["figure1"],
        out / "figure1.png",
        f"Generated task, {t} steps: disputed step decided by Figure 1 (optimal liar)",
        exact=True,
    )
    _gsm8k_figure(results, out)  # fmt: skip


def _fmt_ci(r: dict[str, Any], key: str) -> str:
    lo, hi = r[f"{key}_ci"]
    return f"{r[key]:.3f} [{lo:.3f}, {hi:.3f}]"


TOKEN_COLUMNS = ("steps", "protocol", "judge tokens: mean (min-max), measured")
ACCURACY_COLUMNS = ("error rate", "protocol", "completeness (measured)", "exact",
                    "soundness error (measured)", "exact", "judge calls")  # fmt: skip
FIGURE1_COLUMNS = ("error rate", "protocol", "completeness (measured)", "exact",
                   "proven bound (>=)", "soundness error, optimal liar (measured)", "exact",
                   "proven bound (<=)", "judge calls per debate",
                   "judge tokens per debate")  # fmt: skip
GSM8K_COLUMNS = ("protocol", "solutions", "accuracy vs is_correct (measured)",
                 "P[accept given correct]", "P[accept given wrong]",
                 "judge tokens per solution")  # fmt: skip


def _tables(results: dict[str, Any]) -> str:
    """The report's tables, a blank line between two."""
    tokens = [[r["steps"], r["protocol"], f"{r['mean']:,.1f} ({r['min']:,}-{r['max']:,})"]
              for r in results["tokens"]]  # fmt: skip
    accuracy = [[r["rate"], r["protocol"], _fmt_ci(r, "completeness"),
                 f"{r['exact_completeness']:.3f}", _fmt_ci(r, "soundness_error"),
                 f"{r['exact_soundness_error']:.3f}", f"{r['judge_calls']:.1f}"]
                for r in results["accuracy"]]  # fmt: skip
    figure1 = [[r["rate"], r["protocol"], _fmt_ci(r, "completeness"),
                f"{r['exact_completeness']:.3f}", f"{r['bound_completeness']:.3f}",
                _fmt_ci(r, "soundness_error"), f"{r['exact_soundness_error']:.3f}",
                f"{r['bound_soundness_error']:.3f}", f"{r['judge_calls']:,.1f}",
                f"{r['judge_input_tokens']:,.0f}"]
               for r in results["figure1"]]  # fmt: skip
    tables = [markdown_table(TOKEN_COLUMNS, tokens), markdown_table(ACCURACY_COLUMNS, accuracy),
              markdown_table(FIGURE1_COLUMNS, figure1)]  # fmt: skip
    if results["gsm8k"]:
        gsm8k = [[r["protocol"], f"{r['debates']:,}", _fmt_ci(r, "accuracy"),
                  _fmt_ci(r, "completeness"), _fmt_ci(r, "soundness_error"),
                  f"{r['judge_input_tokens']:,.1f}"]
                 for r in results["gsm8k"]]  # fmt: skip
        tables.append(markdown_table(GSM8K_COLUMNS, gsm8k))
    if results.get("compare"):
        from .compare import table

        tables.append(table(results["compare"]))
    if results.get("crossplay"):
        tables += _crossplay_tables(results["crossplay"])
    return "\n".join(tables)


def _crossplay_tables(crossplay: dict[str, Any]) -> list[str]:
    """The cross-play cells, and each judge's Elo ratings (fitted, with standard errors)."""
    from .compare import table

    def order(kv: tuple[str, Any]) -> tuple[str, int]:
        return kv[0][0], int(kv[0].rsplit("-", 1)[1])  # side, then N

    ratings = [[judge, player, f"{r['rating']:.0f}", f"{r['se']:.0f}", r["games"]]
               for judge, players in crossplay["ratings"].items()
               for player, r in sorted(players.items(), key=order)]  # fmt: skip
    return [table(crossplay["cells"]),
            markdown_table(("judge", "debater", "Elo (fitted)", "standard error", "games"),
                           ratings)]  # fmt: skip


def write_markdown(results: dict[str, Any], out: Path) -> None:
    """The tables of ``results.json`` as ``tables.md`` (``report.md`` holds the discussion)."""
    header = f"<!-- generated by proofgames language report (seed {results['seed']}) -->\n\n"
    write_atomic(out / "tables.md", header + _tables(results))
