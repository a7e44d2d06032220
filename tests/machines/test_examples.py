"""The recorded windows of the named Turing machines are the ones their runs visit."""

from __future__ import annotations

import pytest

from proofgames.machines.examples import example_names, get_example, recorded_window
from proofgames.machines.turing import measure_span, parse_tm

PLAIN = [
    pytest.param(name, marks=[pytest.mark.slow] if name == "bb5" else [])
    for name in example_names("tm")
]


@pytest.mark.parametrize("name", PLAIN)
def test_every_recorded_window_is_measured_again(name: str) -> None:
    """bb5 runs 47,176,870 steps here (about 0.3 s alone on one core)."""
    example = get_example(name)
    text, halts = example.build(), dict(example.facts)["halts_after"]
    assert example.steps == halts
    span = measure_span(parse_tm(text), halts)
    assert span.halted and recorded_window(text, halts) == (span.lo, span.hi)
    assert dict(example.facts)["window"] == (span.lo, span.hi)


def test_a_record_belongs_to_one_program_and_its_halting_step() -> None:
    text = get_example("bb4").build()
    assert recorded_window(text, 107) == recorded_window(text, 10**9) == (-10, 3)
    assert recorded_window(text, 106) is None  # not yet halted: the window may still grow
    assert recorded_window(text.replace("1RZ", "1LZ"), 107) is None
    assert recorded_window(text + " ", 107) is None  # exactly the text, no normalizing here
