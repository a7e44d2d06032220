#!/usr/bin/env python3
"""An honest step-transcript prover (A or B) that knows nothing of proofgames but its wire format.

It imports only the standard library. It speaks ``docs/wire.md`` (section
"Step-transcript debates") on stdin/stdout, one JSON object per line: it reads the
hello, solves the warehouse-ledger task named there (``proofgames.language.generated``'s
task: "A warehouse starts with N crates. In week k it receives / ships out M crates.
..."), answers ``{"type": "ready"}`` and then plays honestly:

* as A, ``transcript`` is the worked solution (one step per week) and ``step`` restates
  one of its steps;
* as B, ``dispute`` names the first step whose result is wrong (``null`` if none) and
  ``half`` says ``"first"`` when the restated step's result is wrong, else ``"second"``.

Play it as B against a lying A (it should win)::

    import asyncio, sys
    from proofgames.isolation.steps import step_program
    from proofgames.language import (CalculatorJudge, JudgeLedger, ScriptedA,
                                     cross_examination, generate_chain)
    item = generate_chain(12, seed=1, error_at=4)
    cmd = [sys.executable, "examples/standalone_step_prover.py"]
    with step_program(cmd, "B", protocol="cross-examination", task=item.task_text) as b:
        out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest), b,
                                            JudgeLedger(CalculatorJudge())))
    assert out.winner == "B"
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

START = re.compile(r"starts with (\d+) (\w+)\.")
WEEK = re.compile(r"In week (\d+) it (receives|ships out) (\d+) \w+\.")


def sentences(task: str) -> list[str]:
    """The task's sentences, as proofgames splits them (each ends in '.' or '?')."""
    return [s.strip() for s in re.findall(r"[^.?]*[.?]", task) if s.strip()]


def solve(task: str) -> dict[str, Any]:
    """The honest transcript of the ledger task, as plain data."""
    parts = sentences(task)
    start = START.search(parts[0])
    if start is None:
        raise ValueError("not a warehouse-ledger task")
    held, unit = int(start.group(1)), start.group(2)
    steps = []
    for k, part in enumerate(parts[1:-1], start=1):
        week = WEEK.search(part)
        if week is None:
            raise ValueError(f"cannot read task sentence {k + 1}")
        amount = int(week.group(3))
        sign = "+" if week.group(2) == "receives" else "-"
        new = held + amount if sign == "+" else held - amount
        text = f"After week {week.group(1)} it holds {held} {sign} {amount} = "
        text += f"<<{held}{sign}{amount}={new}>>{new} {unit}."
        first = len(steps) == 0
        steps.append(
            {
                "text": text,
                "uses": [] if first else [len(steps) - 1],
                "task_parts": [0, k] if first else [k],
                "result": str(new),
            }
        )
        held = new
    return {"task": parts, "steps": steps, "answer": str(held)}


def same(a: str, b: str) -> bool:
    """Two results with the same value (``"7"`` and ``"7.0"``)."""
    try:
        return float(a) == float(b)
    except ValueError:
        return a.strip() == b.strip()


def answer(role: str, truth: dict[str, Any], method: str, args: list[Any]) -> Any:
    """The honest move of ``role`` for ``method``, from the solved transcript ``truth``."""
    steps = truth["steps"]
    if role == "A" and method == "transcript":
        return truth
    if role == "A" and method == "step":
        return steps[args[1]]
    if role == "B" and method == "dispute":
        theirs = args[1]["steps"]
        for t, (mine, said) in enumerate(zip(steps, theirs, strict=False)):
            if not same(mine["result"], said["result"]):
                return t
        return None if same(truth["answer"], args[1]["answer"]) else len(theirs) - 1
    if role == "B" and method == "half":
        t, claimed = args[1], args[2]
        right = t < len(steps) and same(steps[t]["result"], claimed["result"])
        return "second" if right else "first"
    raise ValueError(f"prover {role} has no method {method!r}")


def send(message: dict[str, Any]) -> None:
    """One message to V: one JSON line, flushed."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    """Read the hello, solve the task, say ready, then answer each call."""
    hello = json.loads(sys.stdin.readline())
    role = hello["role"]
    try:
        truth = solve(hello["instance"]["task"])
    except (KeyError, ValueError) as exc:
        send({"type": "error", "message": f"cannot play this task: {exc}"})
        return 1
    send({"type": "ready"})
    for line in sys.stdin:
        call = json.loads(line)
        try:
            send({"type": "result", "value": answer(role, truth, call["method"], call["args"])})
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            send({"type": "error", "message": str(exc)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
