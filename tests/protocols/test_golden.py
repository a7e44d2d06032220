"""Golden playthroughs: recorded outcome records that must not drift.

Each file under tests/protocols/golden/ holds one seeded debate: its ``case`` (protocol, instance,
claim, players, seed, parameters) and its full JSON ``record`` (messages included, wall
time excluded).  A change in a rule, a strategy or the RNG streams shows up here as a diff.
The suite is driven by the files and by the protocol registry: a registered protocol with
no golden file gets two from its declared defaults (a true claim and a false one), written
on the first run for review.  After an intended change, regenerate with
``PROOFGAMES_REGEN_GOLDEN=1 pytest tests/protocols/test_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from proofgames.harness import default_claim, default_players, play, resolve_instance
from proofgames.protocols import get_protocol, protocol_names

GOLDEN = Path(__file__).parent / "golden"
REGEN = bool(os.environ.get("PROOFGAMES_REGEN_GOLDEN"))


def record(case: dict[str, Any]) -> dict[str, Any]:
    """The outcome record of ``case``, as plain JSON (wall time removed)."""
    inst = resolve_instance(case["protocol"], case["machine"], case["steps"])
    out = play(
        case["protocol"], inst, case["claim"], case["a"], case["b"], seed=case["seed"],
        params=case["params"],
    )  # fmt: skip
    data = out.to_dict() | {"truth": inst.truth}
    data.pop("seconds")
    return json.loads(json.dumps(data))


def default_cases(protocol: str) -> dict[str, dict[str, Any]]:
    """A true and a false claim on the protocol's default instance, with its default players."""
    info = get_protocol(protocol)
    inst = resolve_instance(protocol)
    true = default_claim(protocol, inst)
    claims = {"true": true} | ({"false": 1 - true} if 1 - true in info.claims else {})
    cases = {}
    for label, claim in claims.items():
        a, b = default_players(protocol, inst, claim)
        cases[f"{protocol}-default-{label}-claim"] = {
            "protocol": protocol, "machine": inst.spec, "steps": None, "claim": claim,
            "a": a, "b": b, "seed": 0, "params": info.defaults.params,
        }  # fmt: skip
    return cases


def recorded() -> dict[str, dict[str, Any]]:
    """Every golden file's case, by file name."""
    return {p.stem: json.loads(p.read_text())["case"] for p in sorted(GOLDEN.glob("*.json"))}


def _missing() -> dict[str, dict[str, Any]]:
    covered = {case["protocol"] for case in recorded().values()}
    out: dict[str, dict[str, Any]] = {}
    for protocol in protocol_names():
        if protocol not in covered:
            out |= default_cases(protocol)
    return out


@pytest.mark.parametrize("name", sorted(recorded()))
def test_playthrough_matches_its_golden_record(name):
    path = GOLDEN / f"{name}.json"
    saved = json.loads(path.read_text())
    got = record(saved["case"])
    if REGEN:
        path.write_text(json.dumps({"case": saved["case"], "record": got}, indent=1) + "\n")
    assert got == saved["record"]


def test_every_registered_protocol_has_a_golden_playthrough():
    missing = _missing()
    for name, case in missing.items():  # written from the protocol's defaults, for review
        data = {"case": case, "record": record(case)}
        (GOLDEN / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    assert not missing, f"wrote golden records {sorted(missing)}: review and commit them"
