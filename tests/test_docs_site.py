"""The documentation site builds offline, in strict mode, with the API reference.

``mkdocs build --strict`` fails on a warning: a docstring whose arguments do not match its
signature, a page missing from the navigation, a link that leads nowhere (links to the
reports, the README and sources included: ``tools/mkdocs_hooks.py`` puts those files in
the site).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_site_builds_strictly_with_every_guide_and_the_api_reference(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    guides = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    for page in guides:
        name = "" if page == "index" else page
        assert (tmp_path / name / "index.html").is_file(), page
    api = (tmp_path / "api" / "index.html").read_text()
    for module in ("proofgames.harness", "proofgames.sweeps.executors", "proofgames.judges",
                   "proofgames.judges.human"):  # fmt: skip
        assert f'id="{module}"' in api, module
    assert re.search(r'id="proofgames\.harness\.play"', api)  # members, not just titles
    report = tmp_path / "repo" / "reports" / "pvg" / "report" / "index.html"
    assert report.is_file() and 'src="../bec_dynamics.png"' in report.read_text()
    assert (tmp_path / "repo" / "reports" / "pvg" / "bec_dynamics.png").is_file()
