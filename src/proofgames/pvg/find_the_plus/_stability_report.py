"""The stability experiment's figure and table (:mod:`proofgames.pvg.find_the_plus.stability`).

Private: :mod:`proofgames.pvg.find_the_plus.stability` re-exports :func:`plot_stability` and
:func:`stability_table`. Both read the JSON-able results, finished or partial.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from ...reporting import markdown_table
from ..reproduce._figures import _figure, save_figure
from ..tasks.find_the_plus import FindThePlus

#: The columns of :func:`stability_table`.
STABILITY_COLUMNS = ("pointing error at step 0 (px rms, set)", "formulation", "update",
                     "soundness lost at step", "last: exhaustive specificity",
                     "last: exhaustive recall", "last: pointing error (px)",
                     "last: on plus")  # fmt: skip


def plot_stability(results: dict[str, Any], path: Path | BinaryIO) -> None:
    """Exhaustive specificity and pointing error over game steps, a column per error."""
    errors = sorted({run["error_px"] for run in results["runs"]}, key=lambda e: e or 0.0)
    fig, axes = _figure(2, len(errors), (4 * len(errors), 6), sharex=True, squeeze=False)
    size = results["settings"]["certify_size"]
    trained_prover = _against_trained_prover(results["settings"])
    for col, error in enumerate(errors):
        for run in (r for r in results["runs"] if r["error_px"] == error):
            steps = [row["step"] for row in run["rows"]]
            name = run["formulation"] + ("" if run["update"] == "-" else f" / {run['update']}")
            if run["formulation"] == "verifier-first" and trained_prover:
                name += " (trained prover)"
            axes[0][col].plot(steps, [r["exhaustive_specificity"] for r in run["rows"]], label=name)
            axes[1][col].plot(steps, [r["pointing_error_px"] for r in run["rows"]], label=name)
        title = "trained start" if error is None else f"pointing error set to {error:g} px rms"
        axes[0][col].set_title(title, fontsize=10)
        axes[1][col].set_xlabel("game step")
    for ax in axes[0]:
        ax.set_ylim(-0.03, 1.03)  # a share: near 0 must look near 0
    axes[0][0].set_ylabel(f"exhaustive specificity\n(exact on {size} held-out images)")
    axes[1][0].set_ylabel("pointing error, px rms\n(measured, label-1 held-out images)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)


def stability_table(results: dict[str, Any]) -> str:
    """Markdown: per run, when soundness was lost and the last certification's figures."""
    settings = results["settings"]
    heads = settings["task"].get("heads", FindThePlus.heads)  # results saved before heads
    decay = settings.get("verifier_weight_decay", 0.0)
    extra = f", verifier weight decay {decay:g}" if decay else ""
    if _against_trained_prover(settings):
        extra += "; verifier-first play trains the verifier against the trained prover"
    start = results.get("started_from")
    who = f"Started from {start}" if start else "Hand-set sound verifier"
    intro = (
        f"{who} ({heads} head{'s' * (heads != 1)}{extra}), "
        f"{settings['steps']} game steps at batch "
        f"{settings['batch_size']}, seed {settings['seed']}; certified by exhaustive search "
        f"(exact) on {settings['certify_size']} held-out images every "
        f"{settings['certify_every']} steps. Pointing error: measured rms over the label-1 "
        "held-out images."
        + (
            ""
            if results.get("complete", True)
            else " **Partial results: not every run has finished.**"
        )
    )
    rows: list[list[object]] = []
    for run in results["runs"]:
        last = run["rows"][-1]
        lost = "kept" if run["lost_at"] is None else str(run["lost_at"])
        lost += " (not sound at the start)" if run["lost_at"] == 0 else ""
        if not run.get("finished", True):  # results saved before "finished" are complete
            lost += f" (unfinished: played to step {last['step']})"
        rows.append([
            "— (trained)" if run["error_px"] is None else format(run["error_px"], "g"),
            run["formulation"], run["update"], lost,
            f"{last['exhaustive_specificity']:.3f}", f"{last['exhaustive_recall']:.3f}",
            _shown(last["pointing_error_px"], ".2f"), _shown(last["on_plus"], ".3f"),
        ])  # fmt: skip
    return intro + "\n\n" + markdown_table(STABILITY_COLUMNS, rows)


def _against_trained_prover(settings: dict[str, Any]) -> bool:
    """Whether verifier-first play trained the verifier against the trained prover."""
    return bool(settings.get("best_response", "auto") == "trained")  # absent: before the option


def _shown(value: float | None, spec: str) -> str:
    """A pointing figure, or a dash where it is undefined (no label-1 image: null or NaN)."""
    return "—" if value is None or value != value else format(value, spec)
