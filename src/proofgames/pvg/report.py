"""Write the Prover-Verifier Games reproduction report: ``report.md``, figures, JSON.

:func:`write_report` takes the measurements of :func:`~proofgames.pvg.reproduce.reproduce`
and writes, into one folder, ``results.json`` (everything measured), ``report.md``
(Tables 2 and 3 beside the paper's numbers, per-seed runs, Theorems 4 vs 5) and the
figures ``bec_dynamics.png`` (Figure 2), ``bec_formulations.png`` (Theorems 4 vs 5),
``ftp_learning.png`` (learning curves) and ``ftp_gaze.png`` (Figure 4).  With
``readme=`` (the project keeps the block in ``docs/pvg.md``) it also replaces the block
between ``<!-- report:pvg:start -->`` and ``<!-- report:pvg:end -->`` in that file with the
summary tables, linking to ``report.md`` relative to that file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._readme import replace_block
from .profiles import PAPER_TABLES
from .stress import ALL_ATTACKS

ATTACK_TITLES = {
    "prover": "optimized prover",
    "messages": "optimized messages",
    "exhaustive": "exhaustive search (exact; not in the paper)",
}
TASK_TITLES = {"bec": "Table 2: Binary Erasure Channel", "find-the-plus": "Table 3: FindThePlus"}


def write_report(results: dict[str, Any], out: Path, readme: Path | None = None) -> Path:
    """Write the report folder ``out``; return the path of ``report.md``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    sections = [_header(results)]
    if "bec" in results:
        bec = results["bec"]
        sections.append(_table_section("bec", bec))
        sections.append(_bec_runs(bec))
        plot_bec_dynamics(bec["dynamics"][0], out / "bec_dynamics.png")
        sections.append(
            "### Figure 2: BEC training dynamics (seed "
            f"{bec['dynamics'][0]['seed']})\n\n![BEC dynamics](bec_dynamics.png)\n"
        )
        plot_formulations(bec["formulations"], out / "bec_formulations.png")
        sections.append(_formulation_section(bec["formulations"]))
    if "find-the-plus" in results:
        ftp = results["find-the-plus"]
        sections.append(_table_section("find-the-plus", ftp))
        sections.append(_ftp_runs(ftp))
        sections.append(_ftp_timing(ftp, results["machine"]))
        plot_learning(ftp["curves"], out / "ftp_learning.png")
        sections.append("### FindThePlus learning curves\n\n![learning](ftp_learning.png)\n")
        plot_gaze(ftp["gaze"], out / "ftp_gaze.png")
        sections.append(
            "### Figure 4: the verifier's gaze\n\n"
            f"{_gaze_source(ftp['gaze'])}Top row: the inputs (a plus of 1-pixels, "
            "the label the prover defends, in the left half; a plus of 0-pixels in the "
            "right half; the black cross marks the plus), with each head's 5x5 glimpse "
            "outlined.  Below: what each head "
            "sees.\n\n![gaze](ftp_gaze.png)\n"
        )
    path = out / "report.md"
    path.write_text("\n".join(sections))
    if readme is not None:
        link = Path(os.path.relpath(path.resolve(), readme.resolve().parent)).as_posix()
        update_readme(readme, summary_tables(results, path.as_posix(), link))
    return path


def summary_tables(
    results: dict[str, Any], report: str = "reports/pvg/report.md", link: str | None = None
) -> str:
    """The Markdown docs/pvg.md shows: the reproduced tables beside the paper's.

    ``report`` names the full report; ``link`` is its address relative to the page that
    shows the tables (``report`` itself by default).
    """
    parts = [
        f"Measured by `proofgames pvg reproduce` (profile `{results['profile']['name']}`, "
        f"seeds {results['seeds']}, {results['seconds'] / 60:.1f} min on "
        f"{results['machine']['threads']} CPU threads{_resumed(results)}); full report in "
        f"[{report}]({link or report}).\n"
    ]
    for task in ("bec", "find-the-plus"):
        if task in results:
            parts.append(f"**{TASK_TITLES[task]}**\n\n{comparison_table(task, results[task])}")
            parts.append(sound_seeds(results[task]))
    if "bec" in results:
        parts.append(_bec_timing(results["bec"]))
    if "find-the-plus" in results:
        parts.append(_ftp_timing(results["find-the-plus"], results["machine"]))
    return "\n".join(parts)


def sound_seeds(data: dict[str, Any]) -> str:
    """How many seeds' frozen verifiers are complete and sound against every attack."""
    lines = []
    for training in ("pvg", "collaborative"):
        runs = [r for r in data["runs"] if r["training"] == training]
        sound = sum(all(a["fp"] == 0 and a["fn"] == 0 for a in r["attacks"].values()) for r in runs)
        lines.append(f"{sound}/{len(runs)} {training} seeds")
    return (
        "Frozen verifiers with precision = recall = 1 against every attack (held-out "
        f"batch): {', '.join(lines)}.\n"
    )


def _bec_timing(bec: dict[str, Any]) -> str:
    sound = [r["sound_seconds"] for r in bec["runs"] if r["training"] == "pvg"]
    reached = [s for s in sound if s is not None]
    if not reached:
        return (
            f"BEC: no seed reached a sound protocol within {bec['settings']['max_steps']} steps.\n"
        )
    reached.sort()
    return (
        f"BEC: {len(reached)}/{len(sound)} seeds reached precision = recall = 1 against "
        f"both attacks during training, after {reached[len(reached) // 2]:.1f} s (median; "
        f"max {reached[-1]:.1f} s) of training.\n"
    )


def _ftp_timing(ftp: dict[str, Any], machine: dict[str, Any]) -> str:
    settings = ftp["settings"]
    pvg = [r for r in ftp["runs"] if r["training"] == "pvg"]
    per_run = sum(r["train_seconds"] for r in pvg) / len(pvg)
    wall = ftp.get("seconds")
    wall_text = f"{wall / 60:.1f} min wall time" if wall is not None else "wall time not recorded"
    return (
        f"FindThePlus: {wall_text} for {len(pvg)} seeds (PVG and collaborative runs, "
        f"stress tests included) with {machine.get('workers', 1)} worker process(es); a "
        f"PVG run of {settings['steps']} game steps at batch {settings['batch_size']} "
        f"trains in {per_run / 60:.1f} min on average (model-selection stress tests "
        "excluded)." + (f" ({ftp['seconds_note']}.)" if "seconds_note" in ftp else "") + "\n"
    )


def comparison_table(task: str, data: dict[str, Any]) -> str:
    """Measured mean ± std [min, max] over seeds beside the paper's figure."""
    paper = PAPER_TABLES[task]
    lines = [
        "| attack | quantity | PVG measured | PVG paper | collaborative measured "
        "| collaborative paper |",
        "|---|---|---|---|---|---|",
    ]
    cells = {(r["training"], r["attack"], r["quantity"]): r for r in data["table"]}
    for attack in ALL_ATTACKS:
        if not any(key[1] == attack for key in cells):
            continue
        for quantity in ("recall", "precision", "specificity"):
            row = [ATTACK_TITLES[attack]]
            row.append(quantity)
            for training in ("pvg", "collaborative"):
                cell = cells.get((training, attack, quantity))
                row.append(_fmt_cell(cell) if cell else "—")
                value = paper.get((attack, quantity, training))
                row.append("—" if value is None else f"{value:g}")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _fmt_cell(cell: dict[str, Any]) -> str:
    if cell["min"] == cell["max"]:
        return f"{cell['mean']:.3f} (all {cell['seeds']} seeds)"
    return f"{cell['mean']:.3f} ± {cell['std']:.3f} [{cell['min']:.3f}, {cell['max']:.3f}]"


def _header(results: dict[str, Any]) -> str:
    prof = results["profile"]
    return (
        "# Prover-Verifier Games: reproduction report\n\n"
        "Generated by `proofgames pvg reproduce` (Anil et al. 2021, Section 5 and Appendix "
        f"E).  Profile `{prof['name']}`; seeds {results['seeds']}; total "
        f"{results['seconds']:.0f} s on {results['machine']['platform']} with torch "
        f"{results['machine']['torch']} on {results['machine']['threads']} threads"
        f"{_resumed(results)}.\n\n"
        "Every table figure is measured on a verifier frozen after training and attacked "
        "afresh: a new evaluation batch and new attack seeds, not the ones used to decide "
        "when to stop or which checkpoint to keep.  *Precision* is TP / accepted and "
        "*specificity* TN / negatives, with the attacker arguing for label 1 on every "
        "instance.  The paper's tables print 0.0 in the collaborative *precision* column; "
        "with recall 1 on balanced labels a precision cannot fall below about 1/2, and "
        "the paper's captions call that column specificity, so its figure is shown on "
        "the specificity row here.\n"
    )


def _resumed(results: dict[str, Any]) -> str:
    """A caveat on the total time of a reproduction that resumed an earlier one."""
    resumed = "seconds_note" in results.get("find-the-plus", {})
    return " in this call, which resumed an earlier one" if resumed else ""


def _table_section(task: str, data: dict[str, Any]) -> str:
    settings = ", ".join(f"{k}={v}" for k, v in sorted(data["settings"].items()))
    task_args = ", ".join(f"{k}={v}" for k, v in sorted(data.get("task_args", {}).items()))
    return (
        f"## {TASK_TITLES[task]}\n\nMean ± standard deviation [min, max] over seeds.\n\n"
        f"{comparison_table(task, data)}\n{sound_seeds(data)}\nTraining settings: "
        f"{settings}.\n" + (f"\nTask arguments: {task_args}.\n" if task_args else "")
    )


def _bec_runs(bec: dict[str, Any]) -> str:
    lines = [
        "### Per seed\n",
        "| training | seed | game steps | sound at step | train s to sound | "
        "prover P / R / spec | messages P / R / spec |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in bec["runs"]:
        sound_s = run["sound_seconds"]
        lines.append(
            f"| {run['training']} | {run['seed']} | {run['steps']} | "
            f"{run['sound_at'] if run['sound_at'] is not None else '—'} | "
            f"{'—' if sound_s is None else f'{sound_s:.1f}'} | "
            f"{_prs(run['attacks']['prover'])} | {_prs(run['attacks']['messages'])} |"
        )
    return "\n".join(lines) + "\n"


def _ftp_runs(ftp: dict[str, Any]) -> str:
    lines = [
        "### Per seed\n",
        "*Blind share*: the fraction of images on which a verifier head's whole glimpse "
        "falls on zero padding outside the image (it then sees nothing and passes no "
        "gradient to its shift); one number per head, on label-1 and on label-0 images. "
        "*On the plus*: per head, the share of label-1 images whose glimpse is centred "
        "within half a pixel of the plus (the honest protocol points one head there). "
        "*Plus shape*: per head, the cosine between the verifier's classifier weights on "
        "its glimpse and a centred plus, means removed (1: a plus detector; near 0: "
        "weights blind to the plus's shape, such as a count of 1-pixels).\n",
        "| training | seed | game steps | kept step | train s | prover P / R / spec | "
        "messages P / R / spec | exhaustive P / R / spec | blind share per head (label 1 / "
        "label 0) | on the plus | plus shape |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in ftp["runs"]:
        lines.append(
            f"| {run['training']} | {run['seed']} | {run['steps']} | {run['best_step']} | "
            f"{run['train_seconds']:.0f} | {_prs(run['attacks']['prover'])} | "
            f"{_prs(run['attacks']['messages'])} | {_prs(run['attacks'].get('exhaustive'))} | "
            f"{_blind(run)} | {_shares(run, 'on_the_plus')} | "
            f"{_shares(run, 'plus_alignment')} |"
        )
    return "\n".join(lines) + "\n"


def _gaze_source(gaze: dict[str, Any]) -> str:
    if "seed" not in gaze:
        return ""
    text = (
        f"The PVG verifier of seed {gaze['seed']}, the best frozen accuracy against "
        f"optimized messages during training ({gaze['selection_accuracy']:.3f})."
    )
    if "blind_heads" in gaze:
        text += f" Blind share per head (label 1 / label 0): {_blind(gaze)}."
    if "on_the_plus" in gaze:
        text += f" On the plus, per head: {_shares(gaze, 'on_the_plus')}."
    if "plus_alignment" in gaze:
        text += f" Plus shape, per head: {_shares(gaze, 'plus_alignment')}."
    return text + "  "


def _blind(run: dict[str, Any]) -> str:
    blind = run.get("blind_heads")
    if not blind:
        return "—"
    return " / ".join(
        ", ".join(f"{v:.2f}" for v in blind[label]) for label in ("label 1", "label 0")
    )


def _shares(run: dict[str, Any], key: str) -> str:
    values = run.get(key)
    return ", ".join(f"{v:.2f}" for v in values) if values else "—"


def _prs(attack: dict[str, Any] | None) -> str:
    if attack is None:
        return "—"
    return f"{attack['precision']:.3f} / {attack['recall']:.3f} / {attack['specificity']:.3f}"


def _formulation_section(formulations: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "## Theorems 4 vs 5: who moves first on BEC\n",
        "Final values after the same number of game steps (mean over seeds; the verifier's "
        "accuracy and the erasure fraction use the prover's sampled tokens).  Theorem 4: "
        "simultaneous play reaches the honest protocol -- token 1 exactly when x = 1, an "
        "erasure when x = 0 (the prover never volunteers token 0), so an erasure fraction "
        "of 1/2 and 1 bit of information; Theorem 5: prover-first play collapses to "
        "erasure tokens only (fraction 1, 0 bits).\n",
        "| formulation | erasure fraction | information (bits) | verifier accuracy | seconds |",
        "|---|---|---|---|---|",
    ]
    for name, runs in formulations.items():
        final = [{k: v[-1] for k, v in run["curve"].items()} for run in runs]
        lines.append(
            f"| {name} | {_mean(final, 'sampled_erasure_fraction'):.3f} | "
            f"{_mean(final, 'sampled_information_bits'):.3f} | "
            f"{_mean(final, 'sampled_verifier_accuracy'):.3f} | "
            f"{sum(r['seconds'] for r in runs) / len(runs):.1f} |"
        )
    lines.append("\n![formulations](bec_formulations.png)\n")
    return "\n".join(lines)


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return sum(values) / len(values) if values else float("nan")


def _figure(rows: int, cols: int, size: tuple[float, float], **kwargs: Any) -> tuple[Figure, Any]:
    """A figure and its axes, drawn by Agg when saved.

    Built with the object API rather than :mod:`matplotlib.pyplot`, so that neither the
    backend nor pyplot's list of open figures changes: importing or plotting leaves the
    caller's matplotlib as it was.
    """
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, cols, **kwargs)


def plot_bec_dynamics(trace: dict[str, Any], path: Path) -> None:
    """Figure 2: prover log-probabilities, verifier logits per token, verifier accuracy."""
    steps = trace["steps"]
    fig, axes = _figure(3, 1, (8, 9), sharex=True)
    tokens = len(trace["verifier_logits"][0])
    for bit, style in ((0, "--"), (1, "-")):
        for token in range(tokens):
            series = [row[bit][token] for row in trace["prover_logprobs"]]
            if all(v is None for v in series):
                continue  # forbidden by the channel
            special = token in (0, 1)
            axes[0].plot(
                steps,
                [float("nan") if v is None else v for v in series],
                style,
                color=("C0" if token == 0 else "C1") if special else "0.7",
                linewidth=2.2 if special else 0.7,
                label=f"x={bit}, token {token}" if special else None,
            )
    axes[0].set_ylabel("prover log P(token | x)")
    axes[0].legend(loc="lower left", fontsize=8)
    for token in range(tokens):
        special = token in (0, 1)
        axes[1].plot(
            steps,
            [row[token] for row in trace["verifier_logits"]],
            color=("C0" if token == 0 else "C1") if special else "0.7",
            linewidth=2.2 if special else 0.7,
            label=f"token {token}" if special else None,
        )
    axes[1].axhline(0.0, color="k", linewidth=0.5)
    axes[1].set_ylabel("verifier logit P(label 1 | token)")
    axes[1].legend(loc="lower left", fontsize=8)
    accuracy = [float("nan") if a is None else a for a in trace["verifier_accuracy"]]
    axes[2].plot(steps, accuracy, color="k")
    axes[2].set_ylabel("verifier accuracy")
    axes[2].set_xlabel("game step (erasure tokens in grey)")
    axes[2].set_ylim(0.4, 1.02)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_formulations(formulations: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """Erasure fraction and information bits over training, per formulation and seed."""
    fig, axes = _figure(1, 2, (10, 3.8))
    for index, (name, runs) in enumerate(formulations.items()):
        for j, run in enumerate(runs):
            curve = run["curve"]
            for ax, key in zip(
                axes, ("sampled_erasure_fraction", "sampled_information_bits"), strict=True
            ):
                ax.plot(
                    curve["step"],
                    curve[key],
                    color=f"C{index}",
                    alpha=0.8,
                    label=name if j == 0 else None,
                    linewidth=1,
                )
    axes[0].set_ylabel("erasure fraction")
    axes[1].set_ylabel("I(x; token) in bits")
    for ax in axes:
        ax.set_xlabel("game step")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_learning(curves: list[dict[str, Any]], path: Path) -> None:
    """FindThePlus: verifier accuracy and frozen accuracy against optimized messages."""
    fig, axes = _figure(1, 2, (10, 3.8))
    for curve in curves:
        color = "C0" if curve["training"] == "pvg" else "C3"
        label = f"{curve['training']} seed {curve['seed']}"
        axes[0].plot(
            curve["step"],
            curve["verifier_accuracy"],
            color=color,
            alpha=0.7,
            linewidth=1,
            label=label,
        )
        points = [
            (s, a)
            for s, a in zip(curve["step"], curve.get("messages_accuracy", []), strict=False)
            if a is not None
        ]
        if points:
            axes[1].plot(
                *zip(*points, strict=True),
                "o-",
                color=color,
                alpha=0.7,
                markersize=3,
                linewidth=1,
                label=label,
            )
    axes[0].set_ylabel("verifier accuracy (training prover)")
    axes[1].set_ylabel("frozen accuracy vs optimized messages")
    for ax in axes:
        ax.set_xlabel("game step")
        ax.set_ylim(0.0, 1.02)
    axes[1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_gaze(gaze: dict[str, Any], path: Path) -> None:
    """Figure 4: inputs with each head's glimpse outlined, then each head's glimpse."""
    images, glimpses, centres = gaze["images"], gaze["glimpses"], gaze["centres"]
    n, heads = len(images), len(glimpses[0])
    size, side = len(images[0]), len(glimpses[0][0])
    fig, axes = _figure(heads + 1, n, (1.7 * n, 1.7 * (heads + 1)))
    for i in range(n):
        ax = axes[0][i]
        ax.imshow(images[i], cmap="coolwarm", vmin=0, vmax=1)
        ax.set_title(f"label {int(gaze['labels'][i])}, logit {gaze['logits'][i]:.1f}", fontsize=7)
        for h in range(heads):
            row, col = centres[i][h]
            ax.add_patch(
                Rectangle(
                    (col - side / 2, row - side / 2),
                    side,
                    side,
                    fill=False,
                    edgecolor=f"C{h + 2}",
                    linewidth=1.2,
                )
            )
        if "plus_centres" in gaze:
            row, col = gaze["plus_centres"][i]
            ax.plot([col], [row], marker="+", color="k", markersize=14, markeredgewidth=2)
        ax.set_xlim(-0.5, size - 0.5)
        ax.set_ylim(size - 0.5, -0.5)
        for h in range(heads):
            axes[h + 1][i].imshow(glimpses[i][h], cmap="coolwarm", vmin=0, vmax=1)
            if i == 0:
                axes[h + 1][i].set_ylabel(f"head {h + 1}", color=f"C{h + 2}")
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def update_readme(readme: Path, summary: str) -> bool:
    """Replace the ``report:pvg`` block of ``readme``; ``False`` if it has no markers."""
    return replace_block(readme, "report:pvg", summary)


__all__ = [
    "comparison_table",
    "sound_seeds",
    "summary_tables",
    "update_readme",
    "write_report",
]
