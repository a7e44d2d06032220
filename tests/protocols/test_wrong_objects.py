"""Issue 34, defect 7: a protocol's function given the wrong object says so in one line.

``play_bisection(42, ...)`` raised a bare ``AttributeError`` from deep inside the game.
"""

from __future__ import annotations

import pytest

import proofgames.protocols as protocols
from proofgames import make_strategy
from proofgames.errors import ProtocolError

CASES = [
    ("play_bisection", "bisection", (10, 1), "machine must be a ConfigurationMachine"),
    ("play_cross_examination", "cross-examination", (1,), "machine must be a TranscriptMachine"),
    ("play_stochastic", "stochastic", (None, 1), "machine must be a StochasticMachine"),
    ("play_stochastic_batch", "stochastic", (None, 1), "machine must be a StochasticMachine"),
    ("play_witness", "witness", (1,), "problem must be a WitnessProblem"),
    ("play_stochastic_witness", "stochastic-witness", (None,), "problem must be a Stochastic"),
]


@pytest.mark.parametrize(("function", "protocol", "rest", "words"), CASES)
@pytest.mark.parametrize("wrong", [42, "bb4", None])
def test_a_wrong_machine_or_problem_is_a_protocol_error_naming_it(
    function, protocol, rest, words, wrong
):
    players = (make_strategy(protocol, "A", "honest"), make_strategy(protocol, "B", "honest"))
    with pytest.raises(ProtocolError, match=words) as info:
        getattr(protocols, function)(wrong, *rest, *players)
    assert type(wrong).__name__ in str(info.value)
