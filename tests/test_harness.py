"""The harness's front: what it accepts as an instance, and how it refuses the rest."""

from __future__ import annotations

import pytest

from proofgames import play


def test_a_machine_object_instead_of_an_instance_is_a_clear_error():
    from proofgames import ProofgamesError, TuringMachine

    tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
    with pytest.raises(ProofgamesError, match="must be a spec string or an Instance, got a Tur"):
        play("bisection", tm, claim=1)
