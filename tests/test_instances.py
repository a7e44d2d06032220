"""Instance set-up sizes a named Busy Beaver's tape from its recorded window, not a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from proofgames.instances import resolve_instance, turing_machine
from proofgames.machines import TuringMachine, turing


@pytest.fixture
def sizing_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The step counts of every sizing run (:func:`measure_span`) set-up makes."""
    runs: list[int] = []
    measure: Callable[..., Any] = turing.measure_span

    def counted(program: Any, steps: int, *args: Any) -> Any:
        runs.append(steps)
        return measure(program, steps, *args)

    monkeypatch.setattr(turing, "measure_span", counted)
    return runs


@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
def test_bb5_is_set_up_without_running_its_47_million_steps(
    protocol: str, sizing_runs: list[int]
) -> None:
    inst = resolve_instance(protocol, "bb5", steps=47_176_870)
    assert sizing_runs == []
    tm = inst.target if protocol == "bisection" else inst.target.machine
    assert (tm.size, tm.origin, inst.truth) == (12_289, 12_243, 1)


@pytest.mark.parametrize("spec", ["bb2", "bb3", "bb4", "bb2x3"])
def test_a_recorded_window_is_the_one_a_run_measures(spec: str, sizing_runs: list[int]) -> None:
    """The same machine, window and truth as sizing by a run (tm:<text> of its program)."""
    for steps in (None, 1000):
        tm, t = turing_machine(spec, steps)
        text = tm.program.text
        measured = TuringMachine.sized(text, t)
        assert sizing_runs == [t]  # only the run asked for here
        sizing_runs.clear()
        assert (tm.size, tm.origin, tm.known_output) == (
            measured.size, measured.origin, measured.known_output,
        )  # fmt: skip


def test_a_program_without_a_record_is_sized_by_a_run(sizing_runs: list[int]) -> None:
    inst = resolve_instance("bisection", "tm:1RB0LB_1LA0RZ", steps=9)
    assert sizing_runs == [9]
    sizing_runs.clear()
    resolve_instance("bisection", "bb4", steps=100)  # before its halting step: not recorded
    assert sizing_runs == [100]
    assert inst.target.size >= 1
