"""``proofgames pvg curves``: learning curves of run folders, finished or still training.

Private to :mod:`proofgames.cli.pvg`, which registers the command. A long run (the
``long`` profile's FindThePlus seeds take hours each) logs a metric row every few steps
and a stress test every few hundred; this draws the report's learning figure from those
logs while the runs go on, and prints where each run stands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ...errors import PVGError
from ...pvg._bookkeeping import METRICS_FILE, logged_rows
from ...pvg._files import check_file_to_write
from ...pvg.checkpoint import STATE_FILE, load_training_state
from ...pvg.reproduce._figures import plot_learning
from ...reporting import check_output_file
from .._common import JsonOption, OverwriteOption, console, echo_json, one_line_errors

SHOWN = (
    ("verifier_accuracy", "accuracy"),
    ("messages_precision", "messages P"),
    ("messages_accuracy", "messages acc"),
    ("exhaustive_specificity", "exhaustive spec"),
    ("pointing_error_px", "pointing px"),
    ("on_plus", "on the plus"),
    ("detector_centre", "centre weight"),
    ("prover_steps", "prover steps"),
)
"""The last-row figures the table shows (when the run logs them)."""


def run_curve(folder: Path, until: int | None = None) -> dict[str, Any]:
    """One run folder's logged series (up to game step ``until``), labelled as the report's.

    The settings come from ``config.json`` (a finished run) or ``state.pt`` (a run still
    training); each series is read from ``metrics.jsonl``, a line torn by a kill dropped.

    Raises:
        PVGError: no such folder, no settings or no metric rows in it (up to ``until``),
            or a damaged file.
    """
    if not folder.is_dir():
        raise PVGError(f"{folder} is not a run folder")
    if (folder / "config.json").is_file():
        try:
            config = json.loads((folder / "config.json").read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PVGError(f"{folder / 'config.json'} is not readable JSON: {exc}") from None
    elif (folder / STATE_FILE).is_file():
        config = load_training_state(folder).config
    else:
        raise PVGError(f"{folder} holds neither config.json nor {STATE_FILE}: not a run")
    if not (folder / METRICS_FILE).is_file():
        raise PVGError(f"{folder} has no {METRICS_FILE} yet")
    rows = logged_rows(folder, 2**62 if until is None else until)
    if not rows:
        upto = " yet" if until is None else f" up to step {until}"
        raise PVGError(f"{folder} has logged no metric row{upto}")
    if not isinstance(config, dict) or not isinstance(config.get("seed"), int):
        raise PVGError(f"{folder}: its settings name no seed")
    keys = sorted({key for row in rows for key in row})
    curve: dict[str, Any] = {key: [row.get(key) for row in rows] for key in keys}
    training = "collaborative" if config.get("formulation") == "collaborative" else "pvg"
    planned = config.get("steps")
    planned = planned if isinstance(planned, int) and not isinstance(planned, bool) else None
    return {
        "run": folder.name,
        "seed": config["seed"],
        "training": training,
        "planned_steps": planned,
        **curve,
    }


#: Game steps over which :func:`pace` measures a run's speed.
PACE_WINDOW = 500


def pace(curve: dict[str, Any]) -> dict[str, float] | None:
    """A run's measured training pace over its last :data:`PACE_WINDOW` logged steps.

    ``seconds`` in the metric rows is the run's training time (summed over resumed
    sessions, stress tests excluded), so the pace is game steps per minute of training
    and ``hours_left`` the training time still to go at that pace to the run's planned
    steps; stress tests and time spent stopped come on top. ``None`` when the log has no
    two timed rows in the window, or time did not advance.
    """
    timed = [
        (s, t)
        for s, t in zip(curve["step"], curve.get("seconds", []), strict=False)
        if isinstance(s, int) and isinstance(t, int | float)
    ]
    if len(timed) < 2:
        return None
    last_step, last_time = timed[-1]
    first_step, first_time = next((s, t) for s, t in timed if s >= last_step - PACE_WINDOW)
    if (first_step, first_time) == timed[-1]:
        first_step, first_time = timed[-2]
    if last_time <= first_time or last_step <= first_step:
        return None
    per_minute = 60.0 * (last_step - first_step) / (last_time - first_time)
    out = {"steps_per_minute": per_minute, "over_steps": float(last_step - first_step)}
    planned = curve.get("planned_steps")
    if isinstance(planned, int):
        out["hours_left"] = max(planned - last_step, 0) / per_minute / 60.0
    return out


def curves_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run folders (each with metrics.jsonl), any number.")
    ],
    out: Annotated[Path, typer.Option(help="The figure to write (PNG).")] = Path("curves.png"),
    until: Annotated[
        int | None,
        typer.Option(min=1, help="Only the rows logged up to this game step (default: all)."),
    ] = None,
    overwrite: OverwriteOption = False,
    json_output: JsonOption = False,
) -> None:
    """Draw the learning curves of run folders, finished or still training; show the last row.

    The figure is the report's: verifier accuracy, accuracy against optimized messages
    and, when logged, the pointing error and the exhaustive specificity, over game steps.
    Runs that the report would label alike (two runs of one seed, say an ablation beside
    the run it varies) are labelled by their folder names instead. ``--until`` compares
    a long run with a shorter one at the same steps.
    """
    with one_line_errors():
        check_file_to_write(out, "--out")
        check_output_file(out, overwrite=overwrite, inputs=runs)
        curves = [run_curve(folder, until) for folder in runs]
        plot_learning(curves, out)
    last = [_last(curve) for curve in curves]
    if json_output:
        echo_json({"figure": str(out), "runs": last}, indent=2)
        return
    upto = "" if until is None else f" up to step {until}"
    table = Table(title=f"last logged row of each run{upto} (figure: {out})")
    for column in ("run", "step", *(label for _, label in SHOWN)):
        table.add_column(column)
    for row in last:
        figures = [_shown(row.get(key)) for key, _ in SHOWN]
        table.add_row(row["run"], str(row["step"]), *figures)
    console.print(table)
    for row in last:
        console.print(_pace_line(row), soft_wrap=True)


def _pace_line(row: dict[str, Any]) -> str:
    """Where a run stands against its planned steps, and its measured pace."""
    planned = row.get("planned_steps")
    where = f"{row['run']}: step {row['step']}" + (f" of {planned}" if planned else "")
    speed = row.get("pace")
    if speed is None:
        return where
    where += (
        f"; {speed['steps_per_minute']:.1f} steps a minute of training over its last "
        f"{speed['over_steps']:.0f} logged steps (measured; stress tests excluded)"
    )
    if "hours_left" in speed and speed["hours_left"] > 0:
        where += f", so about {speed['hours_left']:.1f} h of training to go"
    return where


def _last(curve: dict[str, Any]) -> dict[str, Any]:
    """The run's last logged value of each series (a stress figure: its last test)."""
    out: dict[str, Any] = {"run": curve["run"], "seed": curve["seed"]}
    out["training"] = curve["training"]
    out["planned_steps"] = curve.get("planned_steps")
    out["pace"] = pace(curve)
    for key, values in curve.items():
        if isinstance(values, list):
            logged = [v for v in values if v is not None]
            out[key] = logged[-1] if logged else None
    return out


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
