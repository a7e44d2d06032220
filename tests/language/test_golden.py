"""Golden playthroughs of the debates on step transcripts, as for the core protocols.

Each file under ``tests/language/golden/`` holds one seeded debate: its ``case`` (protocol,
generated task, provers, judge, seed) and its full outcome record (the core ``Outcome``'s
JSON, messages included, wall time excluded). A change in a rule, a prover, a judge or
the seed streams shows up as a diff. Every protocol of ``experiments.PROTOCOLS`` must have
one; a missing one is written on the first run for review. After an intended change,
regenerate with ``PROOFGAMES_REGEN_GOLDEN=1 pytest tests/language/test_golden.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from proofgames.language.costs import JudgeLedger
from proofgames.language.experiments import PROTOCOLS, make_judge, play
from proofgames.language.generated import generate_chain
from proofgames.language.provers import ContrarianB, ProverB, ReferenceB, ScriptedA

GOLDEN = Path(__file__).parent / "golden"
REGEN = bool(os.environ.get("PROOFGAMES_REGEN_GOLDEN"))


def record(case: dict[str, Any]) -> dict[str, Any]:
    """The outcome record of ``case``, as plain JSON (wall time removed)."""
    item = generate_chain(case["steps"], seed=case["task_seed"], error_at=case["error_at"])
    a = ScriptedA(item.reference if case["a"] == "honest" else item.dishonest)
    b: ProverB = (
        ContrarianB(case["seed"]) if case["b"] == "contrarian" else ReferenceB(item.reference)
    )
    ledger = JudgeLedger(make_judge(case["judge"], case["seed"]))
    out = asyncio.run(play(case["protocol"], item.task_text, a, b, ledger, case["seed"]))
    data = out.to_dict()
    data.pop("seconds")
    return json.loads(json.dumps(data))


def default_cases(protocol: str) -> dict[str, dict[str, Any]]:
    """An honest A against a contrarian B, and a lying A against the reference B."""
    base = {"protocol": protocol, "steps": 12, "task_seed": 4, "error_at": 5, "seed": 0,
            "judge": "scripted:0.1"}  # fmt: skip
    return {
        f"{protocol}-honest-a": base | {"a": "honest", "b": "contrarian"},
        f"{protocol}-lying-a": base | {"a": "lying", "b": "reference"},
    }


def recorded() -> dict[str, dict[str, Any]]:
    """Every golden file's case, by file name."""
    return {p.stem: json.loads(p.read_text())["case"] for p in sorted(GOLDEN.glob("*.json"))}


@pytest.mark.parametrize("name", sorted(recorded()))
def test_playthrough_matches_its_golden_record(name):
    path = GOLDEN / f"{name}.json"
    saved = json.loads(path.read_text())
    got = record(saved["case"])
    if REGEN:
        path.write_text(json.dumps({"case": saved["case"], "record": got}, indent=1) + "\n")
    assert got == saved["record"]


def test_every_protocol_has_a_golden_playthrough():
    covered = {case["protocol"] for case in recorded().values()}
    missing = [p for p in PROTOCOLS if p not in covered]
    for protocol in missing:
        for name, case in default_cases(protocol).items():
            (GOLDEN / f"{name}.json").write_text(
                json.dumps({"case": case, "record": record(case)}, indent=1) + "\n"
            )
    assert not missing, f"golden records written for review: {missing}"


def test_a_record_is_the_core_outcome_with_its_judge_costs():
    case = default_cases("cross-examination")["cross-examination-lying-a"]
    got = record(case)
    assert got["machine"] == "step-transcript" and got["verifier_read_unit"] == "tokens"
    assert got["judge_calls"] >= 1 and got["judge_input_tokens"] > 0
    assert [m["sender"] for m in got["messages"]][:2] == ["A", "B"]
    assert got["messages"][-1] == {"round": 1, "sender": "V", "kind": "verdict",
                                   "content": got["verdict"]}  # fmt: skip
