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

import io
import os
from pathlib import Path
from typing import Any

from ...errors import PVGError
from ...reporting import markdown_table, replace_block, write_atomic, write_json
from .._files import read_json
from ..find_the_plus._report_heads import attack_anatomy_section, ftp_runs, gaze_source, prs
from ..stress import ALL_ATTACKS
from ._figures import plot_bec_dynamics, plot_formulations, plot_gaze, plot_learning
from .profiles import PAPER_TABLES

ATTACK_TITLES = {
    "prover": "optimized prover",
    "messages": "optimized messages",
    "exhaustive": "exhaustive search (exact; not in the paper)",
}
TASK_TITLES = {"bec": "Table 2: Binary Erasure Channel", "find-the-plus": "Table 3: FindThePlus"}
COMPARISON_COLUMNS = ("attack", "quantity", "PVG measured", "PVG paper",
                      "collaborative measured", "collaborative paper")  # fmt: skip
BEST_SEED_COLUMNS = ("training", "seed", "kept step", "selection score", "prover", "messages",
                     "exhaustive")  # fmt: skip
BEC_RUN_COLUMNS = ("training", "seed", "game steps", "sound at step", "train s to sound",
                   "prover P / R / spec", "messages P / R / spec")  # fmt: skip
FORMULATION_COLUMNS = ("formulation", "erasure fraction", "information (bits)",
                       "verifier accuracy", "seconds")  # fmt: skip


def write_report(
    results: dict[str, Any], out: Path, readme: Path | None = None, source: Path | None = None
) -> Path:
    """Write the report folder ``out``; return the path of ``report.md``.

    The report and figures are drawn in memory first, then each file is written
    atomically: results that cannot be drawn leave ``out`` (and ``readme``) as they were.
    ``results.json`` is strict JSON: a value that is not a finite number is ``null``; it
    is not written when it is ``source``, the file the results were read from (an input
    is never rewritten).
    """
    figures: dict[str, io.BytesIO] = {}

    def figure(name: str) -> io.BytesIO:
        figures[name] = io.BytesIO()
        return figures[name]

    sections = [_header(results)]
    if "bec" in results:
        bec = results["bec"]
        sections.append(_table_section("bec", bec))
        sections.append(_bec_runs(bec))
        plot_bec_dynamics(bec["dynamics"][0], figure("bec_dynamics.png"))
        sections.append(
            "### Figure 2: BEC training dynamics (seed "
            f"{bec['dynamics'][0]['seed']})\n\n![BEC dynamics](bec_dynamics.png)\n"
        )
        plot_formulations(bec["formulations"], figure("bec_formulations.png"))
        sections.append(_formulation_section(bec["formulations"]))
    if "find-the-plus" in results:
        ftp = results["find-the-plus"]
        sections.append(_table_section("find-the-plus", ftp))
        sections.append(ftp_runs(ftp))
        sections.append(attack_anatomy_section(ftp["runs"]))
        sections.append(_ftp_timing(ftp, results["machine"]))
        plot_learning(ftp["curves"], figure("ftp_learning.png"))
        sections.append("### FindThePlus learning curves\n\n![learning](ftp_learning.png)\n")
        plot_gaze(ftp["gaze"], figure("ftp_gaze.png"))
        sections.append(
            "### Figure 4: the verifier's gaze\n\n"
            f"{gaze_source(ftp['gaze'])}Top row: the inputs (a plus of 1-pixels, "
            "the label the prover defends, in the left half; a plus of 0-pixels in the "
            "right half; the black cross marks the plus), with each head's 5x5 glimpse "
            "outlined.  Below: what each head "
            "sees.\n\n![gaze](ftp_gaze.png)\n"
        )
    path = out / "report.md"
    summary = None
    if readme is not None:
        link = Path(os.path.relpath(path.resolve(), readme.resolve().parent)).as_posix()
        summary = summary_tables(results, path.as_posix(), link)
    target = out / "results.json"
    if source is None or not target.exists() or not target.samefile(source):
        write_json(target, results, indent=1, parents=True)
    for name, drawn in figures.items():
        write_atomic(out / name, drawn.getvalue())
    write_atomic(path, "\n".join(section for section in sections if section))
    if summary is not None and readme is not None:
        update_readme(readme, summary)
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


def best_seed(data: dict[str, Any]) -> str:
    """The paper's selection: per training, the seed whose kept checkpoint scored best.

    The choice uses only the score that chose the checkpoint during training (accuracy
    against the keep-best attack on its own batch); the figures shown are that
    checkpoint's fresh held-out attacks, so the selection does not see them.
    """
    rows: list[list[object]] = []
    for training in ("pvg", "collaborative"):
        runs = [r for r in data["runs"] if r["training"] == training]
        if not any(r.get("best_accuracy") is not None for r in runs):
            continue  # no checkpoint was selected (the last step was kept)
        run = max(runs, key=lambda r: (r.get("best_accuracy") or 0.0, -r["seed"]))
        score = run.get("best_accuracy")
        attacks = [
            prs(run["attacks"].get(a), intervals=True) for a in ("prover", "messages", "exhaustive")
        ]
        shown = "—" if score is None else f"{score:.3f}"
        seed = f"{run['seed']} of {len(runs)}"
        rows.append([training, seed, run.get("best_step"), shown, *attacks])
    if not rows:
        return ""
    return (
        "Best of the seeds, as the paper selects (the seed whose kept checkpoint scored "
        "best during training; its held-out attacks, P / R / spec, with precision's 95% "
        "Clopper-Pearson interval in brackets):\n\n"
    ) + markdown_table(BEST_SEED_COLUMNS, rows)


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
    rows: list[list[object]] = []
    cells = {(r["training"], r["attack"], r["quantity"]): r for r in data["table"]}
    for attack in ALL_ATTACKS:
        if not any(key[1] == attack for key in cells):
            continue
        for quantity in ("recall", "precision", "specificity"):
            row: list[object] = [ATTACK_TITLES[attack]]
            row.append(quantity)
            for training in ("pvg", "collaborative"):
                cell = cells.get((training, attack, quantity))
                row.append(_fmt_cell(cell) if cell else "—")
                value = paper.get((attack, quantity, training))
                row.append("—" if value is None else f"{value:g}")
            rows.append(row)
    return markdown_table(COMPARISON_COLUMNS, rows)


def _fmt_cell(cell: dict[str, Any]) -> str:
    if cell["min"] == cell["max"]:
        return f"{cell['mean']:.3f} " + (
            "(1 seed)" if cell["seeds"] == 1 else f"(all {cell['seeds']} seeds)"
        )
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
        f"{comparison_table(task, data)}\n{sound_seeds(data)}\n{best_seed(data)}"
        f"\nTraining settings: {settings}.\n"
        + (f"\nTask arguments: {task_args}.\n" if task_args else "")
    )


def _bec_runs(bec: dict[str, Any]) -> str:
    rows: list[list[object]] = []
    for run in bec["runs"]:
        sound_s = run["sound_seconds"]
        rows.append([
            run["training"], run["seed"], run["steps"],
            run["sound_at"] if run["sound_at"] is not None else "—",
            "—" if sound_s is None else f"{sound_s:.1f}",
            prs(run["attacks"]["prover"]), prs(run["attacks"]["messages"]),
        ])  # fmt: skip
    return "### Per seed\n\n" + markdown_table(BEC_RUN_COLUMNS, rows)


def _formulation_section(formulations: dict[str, list[dict[str, Any]]]) -> str:
    intro = (
        "## Theorems 4 vs 5: who moves first on BEC\n\n"
        "Final values after the same number of game steps (mean over seeds; the verifier's "
        "accuracy and the erasure fraction use the prover's sampled tokens).  Theorem 4: "
        "simultaneous play reaches the honest protocol -- token 1 exactly when x = 1, an "
        "erasure when x = 0 (the prover never volunteers token 0), so an erasure fraction "
        "of 1/2 and 1 bit of information; Theorem 5: prover-first play collapses to "
        "erasure tokens only (fraction 1, 0 bits).\n\n"
    )
    rows: list[list[object]] = []
    for name, runs in formulations.items():
        final = [{k: v[-1] for k, v in run["curve"].items()} for run in runs]
        rows.append([
            name, f"{_mean(final, 'sampled_erasure_fraction'):.3f}",
            f"{_mean(final, 'sampled_information_bits'):.3f}",
            f"{_mean(final, 'sampled_verifier_accuracy'):.3f}",
            f"{sum(r['seconds'] for r in runs) / len(runs):.1f}",
        ])  # fmt: skip
    table = markdown_table(FORMULATION_COLUMNS, rows)
    return intro + table + "\n![formulations](bec_formulations.png)\n"


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return sum(values) / len(values) if values else float("nan")


#: What the report reads of each part of a results file: key -> type.
_RESULTS_SHAPE: dict[str, dict[str, type | tuple[type, ...]]] = {
    "": {"profile": dict, "seeds": list, "seconds": (int, float), "machine": dict},
    "machine": {"platform": str, "torch": str, "threads": int},
    "bec": {"runs": list, "table": list, "dynamics": list, "formulations": dict, "settings": dict},
    "find-the-plus": {"runs": list, "table": list, "curves": list, "gaze": dict, "settings": dict},
}


def read_results(path: Path) -> dict[str, Any]:
    """The measurements in ``path`` (a ``results.json`` written by ``pvg reproduce``).

    The shape is checked here; a deeper flaw surfaces when the report is drawn (which
    writes nothing until everything is drawn).

    Raises:
        PVGError: the file is missing, unreadable, not JSON or not such results.
    """
    data = read_json(path, "results file")
    problem = _results_problem(data)
    if problem:
        raise PVGError(f"{path} is not a results.json written by `pvg reproduce`: {problem}")
    return dict(data)


def _results_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"it holds a JSON {type(data).__name__}, not an object"
    for part, shape in _RESULTS_SHAPE.items():
        if part in ("bec", "find-the-plus") and part not in data:
            continue
        section = data if not part else data.get(part)
        if not isinstance(section, dict):
            return f"{part} is not an object"
        for key, kind in shape.items():
            if not isinstance(section.get(key), kind):
                return f"{part + '.' if part else ''}{key} is missing or not {_kind(kind)}"
        if not part and not isinstance(data["profile"].get("name"), str):
            return "profile.name is missing"
        if part == "machine" and "bec" not in data and "find-the-plus" not in data:
            return "it holds neither bec nor find-the-plus results"
    return None


def _kind(kind: type | tuple[type, ...]) -> str:
    return (
        "number"
        if isinstance(kind, tuple)
        else {"dict": "object"}.get(kind.__name__, kind.__name__)
    )


def has_report_block(readme: Path) -> bool:
    """Whether ``readme`` is a file holding the ``report:pvg`` block's two markers."""
    if not readme.is_file():
        return False
    text = readme.read_text()
    return all(f"<!-- report:pvg:{end} -->" in text for end in ("start", "end"))


def update_readme(readme: Path, summary: str) -> bool:
    """Replace the ``report:pvg`` block of ``readme`` atomically; ``False`` if it has none."""
    return replace_block(readme, "report:pvg", summary)


__all__ = [
    "comparison_table",
    "has_report_block",
    "plot_bec_dynamics",
    "plot_formulations",
    "plot_gaze",
    "plot_learning",
    "read_results",
    "sound_seeds",
    "summary_tables",
    "update_readme",
    "write_report",
]
