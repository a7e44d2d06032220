"""The harness's front: what it accepts as an instance, and how it refuses the rest."""

from __future__ import annotations

import pytest

from proofgames import play


def test_a_machine_object_instead_of_an_instance_is_a_clear_error():
    from proofgames import ProofgamesError, TuringMachine

    tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
    with pytest.raises(ProofgamesError, match="must be a spec string or an Instance, got a Tur"):
        play("bisection", tm, claim=1)


@pytest.mark.parametrize("timeout", [-1, 0, float("nan"), float("inf"), True, "5"])
def test_a_bad_timeout_is_the_callers_error_never_a_forfeit(timeout):
    from proofgames import ProtocolError, play_bisection
    from proofgames.harness import resolve_instance

    with pytest.raises(ProtocolError, match="timeout must be a positive number of seconds"):
        play("bisection", "bb3", claim=1, timeout=timeout)
    tm = resolve_instance("bisection", "bb3").target
    with pytest.raises(ProtocolError, match="timeout must be a positive number"):
        play_bisection(tm, 21, 1, "a", "b", timeout=timeout)
    with pytest.raises(ProtocolError, match="timeout must be a positive number"):
        play("stochastic", "majority:n=3,p=0.8", claim=1, timeout=timeout)
