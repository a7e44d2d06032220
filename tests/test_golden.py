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

from proofgames.harness import play, resolve_instance
from proofgames.protocols import protocol_names

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
    "stochastic-majority-false-claim-lean": (
        "stochastic", "majority:n=3,p=0.38", None, 1, "evade", "honest", 4, "lean",
    ),
    "stochastic-single-true-claim-paper": (
        "stochastic", "single-query:p=0.9", None, 1, "honest", "abort-against", 0, "paper",
    ),
    "stochastic-witness-panel-true-claim": (
        "stochastic-witness", "panel-choice:p=0.2;0.9;0.4", None, 1, "honest", "honest", 2, "lean",
    ),
    "stochastic-witness-panel-random-witness": (
        "stochastic-witness", "panel-choice:p=0.2;0.3", None, 1, "random", "honest", 0, "paper",
    ),
}  # fmt: skip


def record(case: str) -> dict:
    protocol, machine, steps, claim, a, b, seed, *params = CASES[case]
    inst = resolve_instance(protocol, machine, steps)
    out = play(protocol, inst, claim, a, b, seed=seed, params=params[0] if params else None)
    data = out.to_dict() | {"truth": inst.truth}
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


def test_every_registered_protocol_has_a_golden_playthrough():
    covered = {case[0] for case in CASES.values()}
    missing = set(protocol_names()) - covered
    assert not missing, f"protocols without a golden playthrough: {sorted(missing)}"
    assert all((GOLDEN / f"{case}.json").exists() for case in CASES)
