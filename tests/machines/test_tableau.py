from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgames import MachineFormatError
from proofgames.machines import TableauTranscript, TuringMachine

from .test_turing import machines


@settings(max_examples=60, deadline=None)
@given(text=machines, steps=st.integers(1, 25), space=st.integers(1, 7), data=st.data())
def test_tableau_rows_equal_the_configurations_of_the_run(text, steps, space, data):
    tm = TuringMachine(text, space=space, origin=data.draw(st.integers(0, space - 1)))
    tab = TableauTranscript(tm, steps)
    y = tab.run()
    c = tm.initial()
    for r in range(steps + 1):
        assert np.array_equal(y[r * space : (r + 1) * space], tab.encode_row(c))
        assert tab.decode_row(tab.encode_row(c)) == c
        c = tm.step(c)
    assert y[-1] == tm.accepts(tm.advance(tm.initial(), steps))


def test_relevant_sets_have_at_most_three_entries_and_point_backwards():
    tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107)
    tab = TableauTranscript(tm, 107)
    for t in range(tab.length):
        rel = tab.checked_relevant(t)
        assert len(rel) <= 3
        assert all(i < t for i in rel)


def test_huge_tableau_is_never_materialized():
    tm = TuringMachine.sized("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 47_176_870)
    tab = TableauTranscript(tm, 47_176_870)
    assert tab.length == (47_176_870 + 2) * 12_289  # ~5.8e11 entries
    t = tab.position(30_000_000, 5_000)
    assert tab.relevant(t) == (t - 12_289 - 1, t - 12_289, t - 12_289 + 1)


def test_tableau_refuses_oracle_machines():
    tm = TuringMachine("1RA0RB_1RZ1RZ", space=4, origin=0, query_states=["A"])
    with pytest.raises(MachineFormatError, match="query states"):
        TableauTranscript(tm, 3)
