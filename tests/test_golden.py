"""Golden playthroughs: recorded outcome records that must not drift.

Each file under tests/golden/ is the full JSON record (messages included, wall time
excluded) of one seeded debate.  A change in a rule, a strategy or the RNG streams shows up
here as a diff.  After an intended change, regenerate with
``PROOFGAMES_REGEN_GOLDEN=1 pytest tests/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from proofgames.cli import run_debate

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "bisection-bb4-false-claim": ("bisection", "bb4", None, 0, "flip-step:at=0.3", "honest", 0),
    "bisection-screening-true-claim": ("bisection", "screening", None, 1, "honest", "random", 5),
    "cross-examination-bb3-true-claim": (
        "cross-examination",
        "bb3",
        None,
        1,
        "honest",
        "random",
        3,
    ),
    "cross-examination-bb2x3-false-claim": (
        "cross-examination",
        "bb2x3",
        30,
        1,
        "random-step",
        "honest",
        2,
    ),
    "witness-php-false-claim": ("witness", "sat-php-3-2", None, 1, "flip-step", "honest", 0),
    "witness-small-true-claim": ("witness", "sat-small", None, 1, "honest", "random", 1),
}


def record(case: str) -> dict:
    protocol, machine, steps, claim, a, b, seed = CASES[case]
    out, truth = run_debate(protocol, machine, steps, claim, a, b, seed)
    data = out.to_dict() | {"truth": truth}
    data.pop("seconds")
    return json.loads(json.dumps(data))


@pytest.mark.parametrize("case", sorted(CASES))
def test_playthrough_matches_its_golden_record(case):
    path = GOLDEN / f"{case}.json"
    got = record(case)
    if os.environ.get("PROOFGAMES_REGEN_GOLDEN") or not path.exists():
        path.write_text(json.dumps(got, indent=1) + "\n")
        if not os.environ.get("PROOFGAMES_REGEN_GOLDEN"):
            pytest.fail(f"wrote missing golden record {path.name}; review and commit it")
    assert got == json.loads(path.read_text())
