"""The repository itself: its training states fit their budget, and every report is indexed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "reports" / "README.md"


def _tracked_states() -> list[Path]:
    """The ``.pt`` files in the tree (git's list when this is a checkout, else the disk's)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "*.pt"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return sorted(ROOT.rglob("reports/**/*.pt"))
    return [ROOT / p for p in out]


def test_committed_training_states_fit_the_documented_budget():
    budget_mib = int(re.search(r"\*\*Budget: (\d+) MiB\*\*", INDEX.read_text())[1])
    total = sum(p.stat().st_size for p in _tracked_states() if p.exists())
    assert total <= budget_mib * 2**20, (
        f"the tree holds {total / 2**20:.1f} MiB of .pt files, over the {budget_mib} MiB "
        "budget of reports/README.md: commit a run's state only when it pauses"
    )


def test_every_report_folder_is_indexed_with_a_link_that_exists():
    text = INDEX.read_text()
    links = re.findall(r"\]\(([^)#]+)\)", text)
    for link in links:
        assert (INDEX.parent / link).exists(), link
    folders = {p.name for p in (ROOT / "reports").iterdir() if p.is_dir()}
    indexed = {link.split("/")[0] for link in links}
    assert folders <= indexed, f"reports not in reports/README.md: {sorted(folders - indexed)}"


def test_the_tests_mirror_the_package():
    """``tests/X/`` holds the tests of ``src/proofgames/X/``; ``tests/plugins`` are plugins."""
    src = ROOT / "src" / "proofgames"
    for folder in sorted(p for p in (ROOT / "tests").iterdir() if p.is_dir()):
        if folder.name in ("plugins", "__pycache__"):
            continue
        assert (src / folder.name / "__init__.py").exists(), f"tests/{folder.name} mirrors nothing"
        assert (folder / "__init__.py").exists(), f"tests/{folder.name} is not a package"
