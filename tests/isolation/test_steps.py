"""Step-transcript provers as separate programs (``proofgames.isolation.steps``).

An honest program written without proofgames wins in either role; a program that
stalls, dies, writes garbage, reports an error, sends invisible characters or reports
costs out of range loses its debate, with a reason, and never stops the run.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError
from proofgames.isolation.steps import StepProgram, step_program
from proofgames.language import (
    CalculatorJudge,
    ContrarianB,
    JudgeLedger,
    ReferenceB,
    ScriptedA,
    bisection,
    cross_examination,
    generate_chain,
)

ROOT = Path(__file__).resolve().parents[2]
HONEST = [sys.executable, str(ROOT / "examples" / "standalone_step_prover.py")]
ITEM = generate_chain(12, seed=1, error_at=4)
PROTOCOLS = {"cross-examination": cross_examination, "bisection": bisection}


def _debate(protocol: str, a: object, b: object):
    return asyncio.run(
        PROTOCOLS[protocol](ITEM.task_text, a, b, JudgeLedger(CalculatorJudge()), timeout=5)
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_honest_program_wins_as_b_against_a_lying_a(protocol):
    with step_program(HONEST, "B", protocol=protocol, task=ITEM.task_text) as b:
        out = _debate(protocol, ScriptedA(ITEM.dishonest), b)
    assert (out.winner, out.forfeit) == ("B", None), out.reason
    assert out.prover_b.name == "program:standalone_step_prover.py"
    assert out.details["disputed_step"] == ITEM.error_at


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_honest_program_wins_as_a_against_a_contrarian(protocol):
    with step_program(HONEST, "A", protocol=protocol, task=ITEM.task_text) as a:
        out = _debate(protocol, a, ContrarianB(3))
    assert (out.winner, out.forfeit) == ("A", None), out.reason


def _program(body: str) -> list[str]:
    """A prover program: read the hello, say ready, then answer each call with ``body``."""
    code = textwrap.dedent(
        """
        import json, sys, time
        hello = json.loads(sys.stdin.readline())
        print(json.dumps({"type": "ready"}), flush=True)
        for line in sys.stdin:
            call = json.loads(line)
        """
    ) + textwrap.indent(textwrap.dedent(body), "    ")
    return [sys.executable, "-c", code]


HOSTILE = {
    "stalls": "time.sleep(60)",
    "dies": "sys.exit(3)",
    "writes garbage": "print('not json', flush=True)",
    "reports an error": "print(json.dumps({'type': 'error', 'message': 'no'}), flush=True)",
    "answers out of turn": "print(json.dumps({'type': 'ready'}), flush=True)",
    "sends an empty transcript": """
        value = {'task': [hello['instance']['task']], 'steps': [], 'answer': '1'}
        print(json.dumps({'type': 'result', 'value': value}), flush=True)
    """,
    "reports NaN money": (
        "print(json.dumps({'type': 'result', 'value': None, 'cost_usd': {'__float__': 'nan'}}),"
        " flush=True)"
    ),
    "reports a negative token count": (
        "print(json.dumps({'type': 'result', 'value': None, 'input_tokens': -5}), flush=True)"
    ),
}


@pytest.mark.parametrize("how", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("role", ["A", "B"])
def test_a_hostile_program_loses_its_debate(role, how):
    start = time.perf_counter()
    with step_program(_program(how), role, protocol="cross-examination",
                      task=ITEM.task_text, timeout=1.0) as hostile:  # fmt: skip
        a = hostile if role == "A" else ScriptedA(ITEM.dishonest)
        b = hostile if role == "B" else ReferenceB(ITEM.reference)
        out = asyncio.run(
            cross_examination(ITEM.task_text, a, b, JudgeLedger(CalculatorJudge()), timeout=1.0)
        )
    assert out.forfeit == role and out.winner != role, out.reason
    assert out.reason and len(out.reason) < 500
    assert time.perf_counter() - start < 10


def test_invisible_characters_from_a_program_are_its_forfeit():
    body = """
        step = {"text": "After week 1 it holds 9\\u200b1 crates.", "uses": [],
                "task_parts": [0, 1], "result": "91"}
        print(json.dumps({"type": "result", "value": {
            "task": hello["instance"]["task"], "steps": [step], "answer": "91"}}), flush=True)
    """
    with step_program(_program(body), "A", protocol="bisection", task=ITEM.task_text) as a:
        out = _debate("bisection", a, ReferenceB(ITEM.reference))
    assert out.forfeit == "A", out.reason


@pytest.mark.parametrize(
    ("argv", "role", "protocol", "match"),
    [
        ([], "A", "bisection", "non-empty list"),
        ("python3 x.py", "A", "bisection", "non-empty list"),
        (["no-such-program-xyz"], "A", "bisection", "cannot be run"),
        (HONEST, "C", "bisection", "role is A or B"),
        (HONEST, "A", "witness", "unknown step protocol"),
    ],
)
def test_a_program_that_cannot_be_used_is_refused_before_it_starts(argv, role, protocol, match):
    with pytest.raises(ProofgamesError, match=match):
        StepProgram(argv, role, protocol=protocol, task=ITEM.task_text)
