"""The language report's pipeline on a tiny run: results, tables and labelled figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proofgames.language.report import build_report, exact_rates


@pytest.mark.slow
def test_tiny_report_writes_results_tables_and_figures(tmp_path: Path) -> None:
    results = build_report(tmp_path, None, n=5, steps=(10, 40), rates=(0.0, 0.1), figure1_n=2)
    names = ("results.json", "tables.md", "tokens.png", "accuracy.png", "figure1.png",
             "crossplay.png")  # fmt: skip
    for name in names:
        assert (tmp_path / name).stat().st_size > 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["seed"] == 0 and len(saved["tokens"]) == 6
    whole = [r["mean"] for r in results["tokens"] if r["protocol"] == "whole-transcript"]
    debate = [r["mean"] for r in results["tokens"] if r["protocol"] == "cross-examination"]
    assert whole[1] > 3 * whole[0] and max(debate) < whole[0]
    exact_zero = [
        r for r in results["accuracy"] if r["rate"] == 0.0 and r["protocol"] != "consultancy"
    ]
    assert all(r["completeness"] == 1.0 and r["soundness_error"] == 0.0 for r in exact_zero)
    assert "measured" in (tmp_path / "tables.md").read_text()
    crossplay = saved["crossplay"]  # one problem, each default cell: 2 debates
    assert crossplay["n"] == 1 and all(c["debates"] == 2 for c in crossplay["cells"])
    assert set(crossplay["ratings"]) == {"calculator", "scripted:0.1"}
    tables = (tmp_path / "tables.md").read_text()
    assert "calculator, A best-of-16, B best-of-16" in tables and "| A best-of-16 |" in tables


def test_exact_rates() -> None:
    assert exact_rates("cross-examination", 0.2, 1000) == (0.8, 0.2)
    comp, sound = exact_rates("whole-transcript", 0.1, 10)
    assert comp == pytest.approx(0.9**11) and sound == pytest.approx(0.1 * 0.9**10)


@pytest.mark.slow
def test_drawing_the_report_leaves_the_callers_matplotlib_backend_alone(tmp_path: Path) -> None:
    """A notebook that chose a backend keeps it: the figures are drawn without pyplot."""
    import os
    import subprocess
    import sys

    code = (
        "import json, sys, matplotlib\n"
        "matplotlib.use('svg')\n"
        "from pathlib import Path\n"
        "from proofgames.language.report import build_report\n"
        f"build_report(Path({str(tmp_path)!r}), None, n=2, steps=(10,), rates=(0.0,),"
        " figure1_n=1)\n"
        "print(json.dumps([matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["svg", False]
    assert (tmp_path / "tokens.png").read_bytes().startswith(b"\x89PNG")
