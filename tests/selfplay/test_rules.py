import numpy as np
import pytest

from proofgames.errors import ProtocolError, RegistryError
from proofgames.selfplay import make_rules, rules_names
from proofgames.selfplay.rules import as_action, get_rules


def test_both_deterministic_protocols_are_registered_with_their_defaults() -> None:
    assert sorted(rules_names()) == [
        "bisection",
        "consultancy",
        "cross-examination",
        "no-debate",
        "stochastic",
    ]
    for name in ("bisection", "cross-examination"):
        entry = get_rules(name)
        rules = make_rules(name)
        params = rules.params()
        assert rules.protocol == name and params["horizon"] == params["steps"]  # 0: T
        assert {k: v for k, v in params.items() if k != "horizon"} == {
            k: v for k, v in entry.defaults.items() if k != "horizon"
        }
        assert make_rules(name, **params).params() == params


def test_the_stochastic_protocol_is_registered_with_its_defaults() -> None:
    entry = get_rules("stochastic")
    rules = make_rules("stochastic")
    params = rules.params()
    assert entry.chance and not get_rules("bisection").chance
    assert params["horizon"] == rules.steps  # 0: the machine's T
    assert {k: v for k, v in params.items() if k != "horizon"} == {
        k: v for k, v in entry.defaults.items() if k != "horizon"
    }
    assert make_rules("stochastic", **params).params() == params


def test_an_unknown_protocol_names_the_registered_ones() -> None:
    with pytest.raises(RegistryError, match=r"bisection.*stochastic"):
        make_rules("stochastic-witness")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (3, 3),
        (np.int8(-2), -2),
        (np.uint64(7), 7),
        (True, None),
        (np.bool_(False), None),
        (1.0, None),
        ("1", None),
        (None, None),
        ([1], None),
    ],
)
def test_as_action_accepts_integers_only(raw: object, expected: int | None) -> None:
    assert as_action(raw) == expected


@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
def test_returns_are_zero_until_v_decides(protocol: str) -> None:
    rules = make_rules(protocol, claim=0)
    s = rules.initial()
    assert rules.returns(s) == (0.0, 0.0) and not s.terminal
    s = rules.apply(s, "x")
    assert rules.returns(s) == (-1.0, 1.0) and rules.legal(s) == [] and not rules.mask(s).any()
    with pytest.raises(ProtocolError):
        rules.apply(s, 0)
