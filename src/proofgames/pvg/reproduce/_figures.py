"""The figures of the Prover-Verifier Games report, drawn without pyplot.

Private to :mod:`proofgames.pvg.reproduce.report`, which re-exports the ``plot_*`` functions. Each
draws one figure into a PNG file (written atomically) or a binary stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ...reporting import figures


def _figure(rows: int, cols: int, size: tuple[float, float], **kwargs: Any) -> tuple[Figure, Any]:
    """A figure and its axes, drawn by Agg when saved.

    Built with the object API rather than :mod:`matplotlib.pyplot`, so that neither the
    backend nor pyplot's list of open figures changes: importing or plotting leaves the
    caller's matplotlib as it was.
    """
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, cols, **kwargs)


def plot_bec_dynamics(trace: dict[str, Any], path: Path | BinaryIO) -> None:
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
    save_figure(fig, path)


def plot_formulations(formulations: dict[str, list[dict[str, Any]]], path: Path | BinaryIO) -> None:
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
    save_figure(fig, path)


#: Panels of the FindThePlus learning curves: (logged series, y label, y limits). A
#: second series is drawn dotted in the run's colour (the y label says which is which).
_LEARNING_PANELS: tuple[tuple[tuple[str, ...], str, tuple[float, float] | None], ...] = (
    (("verifier_accuracy",), "verifier accuracy (training prover)", (0.0, 1.02)),
    (("messages_accuracy",), "frozen accuracy vs optimized messages", (0.0, 1.02)),
    (("pointing_error_px",), "pointing error, px rms\n(best head, label-1 eval images)", None),
    (
        ("exhaustive_specificity",),
        "exhaustive specificity\n(exact on the stress batch)",
        (0, 1.02),
    ),
    (
        ("detector_centre", "detector_arms"),
        "plus detector's weights\n(centre: o solid; arms' mean: x dotted)",
        None,
    ),
    (
        ("prover_centre_missing", "attack_centre_missing"),
        "4-of-5 pluses lacking the centre\n(prover's: o solid; attack's: x dotted)",
        (0.0, 1.02),
    ),
)


def plot_learning(curves: list[dict[str, Any]], path: Path | BinaryIO) -> None:
    """FindThePlus learning curves: one panel per logged series of :data:`_LEARNING_PANELS`.

    Verifier accuracy and frozen accuracy against optimized messages always; the
    pointing error, the exhaustive specificity and the plus detector's figures (see
    :func:`~proofgames.pvg.find_the_plus.detectors.detector_figures`) when the runs logged them.
    """
    panels = [p for i, p in enumerate(_LEARNING_PANELS) if i < 2 or _logged(curves, p[0][0])]
    labels, colours = _identities(curves)
    rows = (len(panels) + 1) // 2
    fig, axes = _figure(rows, 2, (10, 3.8 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, (keys, label, limits) in zip(flat, panels, strict=False):
        for curve, name, colour in zip(curves, labels, colours, strict=True):
            for second, key in enumerate(keys):
                _plot_series(ax, curve, key, colour, None if second else name, bool(second))
        ax.set_ylabel(label)
        ax.set_xlabel("game step")
        ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(_steps))
        if keys[0] == "pointing_error_px":  # from tens of pixels down to a tenth of one
            ax.set_yscale("symlog", linthresh=0.1)
        if limits is not None:
            ax.set_ylim(*limits)
    steps = [s for curve in curves for s in curve["step"]]
    if steps and max(steps) > min(steps):  # one step axis, also for series logged late
        margin = 0.03 * (max(steps) - min(steps))
        for ax in flat[: len(panels)]:
            ax.set_xlim(min(steps) - margin, max(steps) + margin)
    for ax in flat[len(panels) :]:
        ax.set_visible(False)
    labelled = [ax for ax in (flat[1], flat[0]) if ax.get_legend_handles_labels()[0]]
    if labelled:  # on the messages panel, or the first one when no stress test ran
        labelled[0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    save_figure(fig, path)


def _plot_series(
    ax: Any, curve: dict[str, Any], key: str, colour: str, name: str | None, dotted: bool
) -> None:
    """One run's logged ``key`` on ``ax``: markers where it is sparse, collaborative dashed."""
    points = [
        (s, v) for s, v in zip(curve["step"], curve.get(key, []), strict=False) if v is not None
    ]
    if not points:
        return
    sparse = key not in ("verifier_accuracy", "pointing_error_px")
    if dotted:
        style = "x:" if sparse else ":"
    elif curve["training"] == "pvg":
        style = "o-" if sparse else "-"
    else:
        style = "s--" if sparse else "--"
    ax.plot(
        *zip(*points, strict=True),
        style,
        color=colour,
        alpha=0.75,
        markersize=3,
        linewidth=1,
        label=name,
    )


def _identities(curves: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Each curve's legend label and colour: by training and seed, a colour per seed.

    When two curves would share a label (two runs of one seed), each is labelled by its
    ``run`` name (its folder) where it has one, and coloured by its place in the list.
    """
    labels = [f"{c['training']} seed {c['seed']}" for c in curves]
    colours = [f"C{c['seed'] % 10}" for c in curves]
    if len(set(labels)) < len(labels):
        labels = [str(c.get("run", label)) for c, label in zip(curves, labels, strict=True)]
        colours = [f"C{i % 10}" for i in range(len(curves))]
    return labels, colours


def _steps(x: float, _: Any) -> str:
    """A game-step tick: 500, 2.5k, 12k."""
    return f"{x / 1000:g}k" if abs(x) >= 1000 else f"{x:g}"


def _logged(curves: list[dict[str, Any]], key: str) -> bool:
    return any(v is not None for curve in curves for v in curve.get(key, []))


def plot_gaze(gaze: dict[str, Any], path: Path | BinaryIO) -> None:
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
    save_figure(fig, path)


def save_figure(fig: Figure, target: Path | BinaryIO) -> None:
    """Save ``fig`` as PNG at 110 dpi to a file (atomically, making its folder) or a stream.

    The PVG figures' settings for :func:`proofgames.reporting.save_figure`.
    """
    figures.save_figure(fig, target, dpi=110, fmt="png", parents=True)
