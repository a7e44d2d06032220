"""Importing proofgames.pvg, and drawing its figures, leave matplotlib's state alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SRC = Path(__file__).resolve().parents[3] / "src"


def _python(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter (``MPLBACKEND`` unset); it prints one JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
@pytest.mark.parametrize("module", ["proofgames.pvg", "proofgames.experiments.stochastic_report"])
@pytest.mark.parametrize("chosen", [None, "svg"], ids=["default-backend", "chosen-backend"])
def test_importing_pvg_keeps_the_matplotlib_backend(chosen, module):
    choose = f"matplotlib.use({chosen!r})" if chosen else "pass"
    seen = _python(
        "import json, matplotlib\n"
        f"{choose}\n"
        "before = matplotlib.get_backend()\n"
        f"import {module}\n"
        "print(json.dumps({'before': before, 'after': matplotlib.get_backend()}))\n"
    )
    assert seen["after"] == seen["before"]
    if chosen:
        assert seen["before"] == chosen


@pytest.mark.slow
def test_a_figure_is_saved_as_png_without_pyplot_or_a_backend_change(tmp_path):
    path = tmp_path / "formulations.png"
    curve = {"step": [0, 1, 2], "sampled_erasure_fraction": [0.0, 0.5, 1.0]}
    curve["sampled_information_bits"] = [1.0, 0.5, 0.0]
    seen = _python(
        "import json, sys, matplotlib\n"
        "matplotlib.use('svg')\n"
        "from pathlib import Path\n"
        "from proofgames.pvg.reproduce.report import plot_formulations\n"
        f"plot_formulations({{'simultaneous': [{{'curve': {curve!r}}}]}}, Path({str(path)!r}))\n"
        "print(json.dumps({'backend': matplotlib.get_backend(),\n"
        "                  'pyplot': 'matplotlib.pyplot' in sys.modules}))\n"
    )
    assert seen == {"backend": "svg", "pyplot": False}
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def _png_height(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[20:24], "big")


def test_learning_curves_add_pointing_and_exhaustive_panels_when_the_runs_logged_them(tmp_path):
    from proofgames.pvg.reproduce.report import plot_learning

    curve = {"training": "pvg", "seed": 0, "step": [10, 20], "verifier_accuracy": [0.5, 0.6],
             "messages_accuracy": [None, 0.55]}  # fmt: skip
    plot_learning([curve], tmp_path / "old.png")
    longer = {**curve, "pointing_error_px": [2.0, 1.5], "exhaustive_specificity": [None, 0.1]}
    plot_learning([longer], tmp_path / "long.png")
    assert _png_height(tmp_path / "long.png") > _png_height(tmp_path / "old.png")


def test_learning_curves_add_the_plus_detectors_panels_when_the_runs_logged_them(tmp_path):
    from proofgames.pvg.reproduce.report import plot_learning

    curve = {"training": "pvg", "seed": 0, "step": [10, 20], "verifier_accuracy": [0.5, 0.6],
             "messages_accuracy": [None, 0.55], "pointing_error_px": [2.0, 1.5],
             "exhaustive_specificity": [None, 0.1]}  # fmt: skip
    plot_learning([curve], tmp_path / "four.png")
    detectors = {
        "detector_centre": [None, 0.4],
        "detector_arms": [None, 1.1],
        "prover_centre_missing": [None, 0.05],
        "attack_centre_missing": [None, 0.3],
    }
    plot_learning([{**curve, **detectors}], tmp_path / "six.png")
    assert _png_height(tmp_path / "six.png") > _png_height(tmp_path / "four.png")
