"""Turing-machine step counts beyond the engine's 64-bit counter are refused by name."""

from __future__ import annotations

import pytest

from proofgames.errors import ProtocolError
from proofgames.machines import TuringMachine

MAX_STEPS = 2**63 - 1  # proofgames.machines._engine.MAX_STEPS

BB2 = "1RB1LB_1LA1RZ"


@pytest.mark.parametrize("steps", [2**63, 2**64, 10**30])
def test_sized_refuses_steps_beyond_the_engine_limit(steps: int) -> None:
    with pytest.raises(ProtocolError, match=r"limit of 2\^63 - 1 = 9223372036854775807 steps"):
        TuringMachine.sized(BB2, steps)


def test_the_limit_itself_is_accepted_and_runs() -> None:
    tm = TuringMachine.sized(BB2, MAX_STEPS)
    final, work = tm.run_steps(tm.initial(), MAX_STEPS)
    assert tm.accepts(final) == 1 and work == 6


def test_run_steps_refuses_steps_beyond_the_engine_limit() -> None:
    tm = TuringMachine.sized(BB2, 6)
    with pytest.raises(ProtocolError, match=str(2**64)):
        tm.run_steps(tm.initial(), 2**64)


@pytest.mark.parametrize("steps", [True, 2.5, "6"])
def test_sized_refuses_steps_that_are_not_integers(steps: object) -> None:
    with pytest.raises(ProtocolError, match="must be an integer"):
        TuringMachine.sized(BB2, steps)  # type: ignore[arg-type]
