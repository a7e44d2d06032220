"""The FindThePlus parts of the reproduction report: per-seed runs, heads and the attack.

Used by :mod:`proofgames.pvg.reproduce.report` only (kept apart to keep that module short).
"""

from __future__ import annotations

from typing import Any

from ...analysis.intervals import confusion_intervals
from ...reporting import markdown_table

#: The columns of :func:`ftp_runs`'s table.
RUN_COLUMNS = ("training", "seed", "game steps", "kept step", "train s", "prover P / R / spec",
               "messages P / R / spec", "exhaustive P / R / spec",
               "blind share per head (label 1 / label 0)", "on the plus",
               "detector on the plus", "plus shape")  # fmt: skip
#: The columns of :func:`attack_anatomy_section`'s table.
ANATOMY_COLUMNS = ("training", "seed", "bias", "term per head: mean (least)",
                   "label-0 accepted", "plus cells 4 / 5", "bias shift to sound",
                   "then: specificity / recall, own prover / recall, best message",
                   "centre missing: prover / attack")  # fmt: skip


def ftp_runs(ftp: dict[str, Any]) -> str:
    """The per-seed table of the FindThePlus runs, with what its columns mean."""
    intro = (
        "### Per seed\n\n"
        "*Blind share*: the fraction of images on which a verifier head's whole glimpse "
        "falls on zero padding outside the image (it then sees nothing and passes no "
        "gradient to its shift); one number per head, on label-1 and on label-0 images. "
        "*On the plus*: per head, the share of label-1 images whose glimpse is centred "
        "within half a pixel of the plus (the honest protocol points one head there). "
        "*Detector on the plus*: the share of label-1 images on which the prover aims the "
        "most plus-shaped head's detector (its glimpse centre moved by the detector's "
        "offset) within half a pixel of the plus, and that point's rms distance to the "
        "plus (`proofgames.pvg.find_the_plus.detectors.pointing`; — where not recorded). "
        "*Plus shape*: per head, the largest cosine between the verifier's classifier "
        "weights on its glimpse and a plus anywhere in it, means removed (1: a plus "
        "detector; near 0: weights blind to the plus's shape, such as a count of "
        "1-pixels), with that plus's offset from the glimpse's centre in pixels (row, "
        "column) where it is not centred; reports made before offsets were measured "
        "give the cosine with a centred plus.\n\n"
    )
    rows = [
        [run["training"], run["seed"], run["steps"], run["best_step"],
         f"{run['train_seconds']:.0f}", prs(run["attacks"]["prover"]),
         prs(run["attacks"]["messages"]), prs(run["attacks"].get("exhaustive")),
         _blind(run), _shares(run, "on_the_plus"), _aimed(run), _plus_shapes(run)]
        for run in ftp["runs"]
    ]  # fmt: skip
    return intro + markdown_table(RUN_COLUMNS, rows)


def _aimed(run: dict[str, Any]) -> str:
    """The prover's aim with the detector: share on the plus (rms px), or —."""
    aim = run.get("pointing", {})
    if "on_plus" not in aim or aim["on_plus"] != aim["on_plus"]:  # missing, skipped or NaN
        return "—"
    return f"{aim['on_plus']:.3f} ({aim['pointing_error_px']:.2f} px)"


def attack_anatomy_section(runs: list[dict[str, Any]]) -> str:
    """Per seed, how the exhaustive attack gets label-0 images accepted (when recorded)."""
    shown = [r for r in runs if "readout_bias" in r.get("attack", {})]
    if not shown:
        return ""
    intro = (
        "### How the exhaustive attack wins\n\n"
        "On 1,000 fresh images (seed 54321), the exact search places every head of the "
        "verifier the attacks above test where its logit term is largest, on each label-0 "
        "image. *Term*: "
        "per head, the mean (and least) of that term; the verifier accepts where bias + "
        "terms > 0. *Plus cells*: the share of label-0 images on which the most "
        "plus-shaped head, so placed, sees 4 (and 5) of the plus's five cells as "
        "1-pixels (none where the attack leaves that head outside the image). Measured "
        "(`proofgames.pvg.find_the_plus.diagnostics.attack_anatomy`). *Bias shift to "
        "sound*: the change of the bias that makes the verifier reject every label-0 "
        "image of that batch under the exact search; *then*: the shifted verifier on the "
        "next 1,000 images of that seed, its exhaustive specificity, its recall with its "
        "own prover and with the best message (exact) -- a diagnostic that uses the "
        "search, not a fix (`threshold_gap`). *Centre missing*: of the label-0 images on "
        "which the most plus-shaped head sees 4 of the 5 plus cells, the share lacking the "
        "centre cell, where the verifier's own prover places it and where the exact "
        "search does (`missing_cells`; a random 4-of-5 plus lacks it 1 time in 5).\n\n"
    )
    rows: list[list[object]] = []
    for run in shown:
        a = run["attack"]
        terms = ", ".join(
            f"{m:.2f} ({lo:.2f})"
            for m, lo in zip(a["attack_terms"], a["attack_terms_min"], strict=True)
        )
        cells = a["attack_plus_cells"]
        share = (
            f"{cells[4] / sum(cells):.3f} / {cells[5] / sum(cells):.3f}"
            if cells and sum(cells)
            else "—"
        )
        rows.append([
            run["training"], run["seed"], f"{a['readout_bias']:.2f}", terms,
            f"{a['attack_accepts_label0']:.3f}", share, *_threshold(run), _centre_missing(run),
        ])  # fmt: skip
    return intro + markdown_table(ANATOMY_COLUMNS, rows)


def _threshold(run: dict[str, Any]) -> tuple[str, str]:
    """Two cells: the bias shift to soundness and what it leaves, or dashes (not measured)."""
    t = run.get("threshold", {})
    if "sound_shift" not in t:  # older results, or skipped
        return "—", "—"
    return (
        f"{t['sound_shift']:+.2f}",
        f"{t['shifted_exhaustive_specificity']:.3f} / {t['shifted_recall']:.3f} / "
        f"{t['shifted_exhaustive_recall']:.3f}",
    )


def _centre_missing(run: dict[str, Any]) -> str:
    """The share of 4-of-5 placements lacking the centre: the prover's / the attack's."""
    m = run.get("missing_cells", {})
    if "attack" not in m:  # older results, or skipped
        return "—"
    return " / ".join(
        f"{m[k][0] / sum(m[k]):.3f}" if sum(m[k]) else "—" for k in ("prover", "attack")
    )


def gaze_source(gaze: dict[str, Any]) -> str:
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
        text += f" Plus shape, per head: {_plus_shapes(gaze)}."
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


def _plus_shapes(run: dict[str, Any]) -> str:
    """Per head, the plus detector's cosine and, where not centred, its offset."""
    detectors = run.get("plus_detectors")
    if not detectors:  # reports made before offsets were measured: centred cosines
        return _shares(run, "plus_alignment")
    return ", ".join(
        f"{d['alignment']:.2f}"
        + (" @ ({:+d}, {:+d})".format(*d["offset"]) if any(d["offset"]) else "")
        for d in detectors
    )


def prs(attack: dict[str, Any] | None, intervals: bool = False) -> str:
    """``P / R / spec`` of one attack; with ``intervals``, precision's 95% interval too.

    The interval is :func:`~proofgames.analysis.intervals.confusion_intervals`' (Clopper--Pearson),
    computed from the attack's counts, so results saved before ``to_dict`` recorded
    intervals get one as well; none where nothing was accepted.
    """
    if attack is None:
        return "—"
    precision = f"{attack['precision']:.3f}"
    if intervals:
        bounds = confusion_intervals(attack["tp"], attack["fp"], attack["fn"], attack["tn"])
        if bounds["precision"] is not None:
            precision += f" [{bounds['precision'][0]:.3f}, {bounds['precision'][1]:.3f}]"
    return f"{precision} / {attack['recall']:.3f} / {attack['specificity']:.3f}"
