"""The default judge per protocol: bisection uses the grounded calculator (issue 35, hole 6).

Under bisection V never reads A's transcript: a dishonest A can commit to its wrong
answer and let its independent copies quietly "fix" the wrong step -- restate it with an
operand that makes the arithmetic true but that appears nowhere in what the step reads.
The calculator (annotations only) accepts that step; the grounded calculator rejects it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import numpy as np
import pytest

from proofgames.cli import main
from proofgames.judges import CalculatorJudge, default_judge
from proofgames.language import experiments
from proofgames.language.costs import JudgeLedger
from proofgames.language.generated import generate_chain
from proofgames.language.protocols import bisection, cross_examination
from proofgames.language.provers import ContrarianB, ReferenceB, ScriptedA
from proofgames.language.transcript import ArgumentStep, StepTranscript


class FixingCopiesA(ScriptedA):
    """Commits to the dishonest transcript; its copies restate the wrong step with arithmetic
    that holds, from a made-up operand (the previous value the wrong result needs)."""

    def __init__(self, transcript: StepTranscript, wrong: int) -> None:
        super().__init__(transcript, "fixing-copies-a")
        self.wrong = wrong

    async def step(self, task: str, t: int) -> object:
        s = self._t.steps[t]
        if t != self.wrong:
            return s
        found = re.search(r"holds (-?\d+) ([+-]) (\d+) = <<", s.text)
        assert found is not None
        sign, amount, value = found.group(2), int(found.group(3)), int(s.result)
        made_up = value - amount if sign == "+" else value + amount
        text = (
            f"After week {t + 1} it holds {made_up} {sign} {amount} = "
            f"<<{made_up}{sign}{amount}={value}>>{value} crates."
        )
        return ArgumentStep(text, s.uses, s.task_parts, s.result)


def _seeds(n: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(0).spawn(n)]


async def _fixing_debates(protocol: Any, spec: str, n: int, steps: int = 40) -> list[Any]:
    outs = []
    for s in _seeds(n):
        item = generate_chain(steps, seed=s)
        a, b = FixingCopiesA(item.dishonest, item.error_at), ReferenceB(item.reference)
        ledger = JudgeLedger(experiments.make_judge(spec, s))
        outs.append(await protocol(item.task_text, a, b, ledger))
    return outs


def test_bisection_defaults_to_the_grounded_calculator() -> None:
    assert default_judge("bisection") == "calculator-grounded"
    assert default_judge("cross-examination") == "calculator"
    judge = experiments.make_judge(default_judge("bisection"), seed=0)
    assert isinstance(judge, CalculatorJudge) and judge.ground_operands


def test_a_liar_whose_copies_fix_the_wrong_step_is_rejected_by_the_bisection_default() -> None:
    item = generate_chain(100, seed=7)
    a = FixingCopiesA(item.dishonest, item.error_at)

    def debate(spec: str) -> Any:
        ledger = JudgeLedger(experiments.make_judge(spec, 0))
        return asyncio.run(bisection(item.task_text, a, ReferenceB(item.reference), ledger))

    hole = debate("calculator")  # the old default: the wrong answer is accepted
    assert hole.verdict == 1 and hole.details["disputed_step"] == item.error_at
    out = debate(default_judge("bisection"))
    assert (
        out.verdict == 0 and out.forfeit is None and out.details["disputed_step"] == item.error_at
    )
    assert out.winner == "B" and "rejected" in out.reason


def test_the_fixing_liar_over_many_problems() -> None:
    n = 60
    calc = asyncio.run(_fixing_debates(bisection, "calculator", n))
    grounded = asyncio.run(_fixing_debates(bisection, default_judge("bisection"), n))
    assert sum(o.verdict == 1 for o in calc) == n  # every wrong answer accepted
    # a made-up operand that happens to be written in the step's inputs still passes
    assert sum(o.verdict == 1 for o in grounded) <= 3
    # cross-examination needs no grounding: the copy differs from the commitment
    cross = asyncio.run(_fixing_debates(cross_examination, default_judge("cross-examination"), n))
    assert all(o.verdict == 0 and o.forfeit == "A" for o in cross)


def test_the_grounded_default_keeps_honest_bisection_complete() -> None:
    for s in _seeds(30):
        item = generate_chain(40, seed=s)
        ledger = JudgeLedger(experiments.make_judge(default_judge("bisection"), s))
        out = asyncio.run(
            bisection(item.task_text, ScriptedA(item.reference), ContrarianB(s), ledger)
        )
        assert out.verdict == 1


@pytest.mark.parametrize(
    ("command", "protocol", "judge", "spec"),
    [
        (["generated", "--n", "1", "--steps", "10"], "bisection", [], "calculator-grounded"),
        (["generated", "--n", "1", "--steps", "10"], "cross-examination", [], "calculator"),
        (["gsm8k", "--limit", "1"], "bisection", [], "calculator-grounded"),
        (["gsm8k", "--limit", "1"], "cross-examination", [], "calculator"),
        (["generated", "--n", "1", "--steps", "10"], "bisection", ["--judge", "calculator"],
         "calculator"),
    ],
)  # fmt: skip
def test_the_command_line_uses_the_protocols_default_judge(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    command: list[str], protocol: str, judge: list[str], spec: str,
) -> None:  # fmt: skip
    specs: list[str] = []
    real = experiments.make_judge

    def make(s: str, seed: int) -> Any:
        specs.append(s)
        return real(s, seed)

    monkeypatch.setattr(experiments, "make_judge", make)
    with pytest.raises(SystemExit) as exc:
        main(["language", *command, "--protocol", protocol, *judge])
    out = capsys.readouterr().out
    assert exc.value.code in (0, None) and specs and set(specs) == {spec}
    assert f"judge {spec}" in " ".join(out.split())
