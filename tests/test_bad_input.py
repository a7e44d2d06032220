"""Bad input from the command line and the Python API: a clear refusal, never a traceback.

Each case is an example from the issue "every bad input gets a clear refusal"; before the
fix each one ended in a traceback or in a plausible, wrong result.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from proofgames import Configuration, ProofgamesError
from proofgames.cli import app
from proofgames.harness import play
from proofgames.machines import TuringMachine
from proofgames.protocols import play_bisection
from proofgames.strategies import make_strategy

runner = CliRunner()


def refused(*args: str) -> str:
    """Run the CLI; it must exit 2 with one error line (no traceback) and return it."""
    res = runner.invoke(app, list(args))
    assert res.exit_code == 2, (args, res.output)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output
    return res.output


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["debate", "bisection", "-m", "bb3", "--claim", "0", "--prover-a", "flip-step:at=2"],
         "at must lie in [0.0, 1.0], got 2.0"),
        (["debate", "bisection", "-m", "bb3", "--claim", "0", "--prover-a", "flip-step:at=nan"],
         "at must be a finite float"),
        (["debate", "stochastic", "--prover-b", "random-abort:p=2"], "p must lie in"),
        (["debate", "stochastic", "-m", "majority:n=3,p=0.3", "--claim", "1", "--prover-a",
          "lie-at:step=99"], "step=99 is not a step of majority:n=3,p=0.3 (T = 7"),
        (["debate", "stochastic-witness", "--prover-a", "choose:pick=bogus"], "pick must be one"),
        (["debate", "stochastic-witness", "--prover-a", "choose:debate=nosuch"], "nosuch"),
        (["debate", "stochastic-witness", "-m", "panel-choice:p=0.2;0.9,votes=2.5"], "votes"),
        (["debate", "stochastic-witness", "-m", "panel-choice:p=0.2;0.9,colour=red"], "colour"),
        (["debate", "stochastic-witness", "-m", "panel-choice:p=0.2;x"], "0.2;x"),
        (["debate", "stochastic-witness", "--claim", "0"], "claim"),
        (["debate", "stochastic", "--steps", "5"], "does not take --steps"),
        (["debate", "witness", "--steps", "5"], "does not take --steps"),
        (["debate", "stochastic-witness", "--steps", "5"], "does not take --steps"),
        (["debate", "cross-examination", "-m", "bb3", "--params", "lean"], "--params applies"),
        (["debate", "bisection", "-m", "bb3", "--steps", str(2**64 + 1)], "2^63 - 1"),
        (["debate", "cross-examination", "-m", "bb3", "--steps", str(2**64)], "2^63 - 1"),
        (["debate", "bisection", "--params", "lean"], "--params applies to the stochastic"),
        (["strategies", "nosuch"], "unknown protocol 'nosuch'"),
        (["debate", "bisection", "--seed", "-1"], "--seed"),
        (["estimate", "--seed", "-3"], "--seed"),
        (["report", "--seed", "-1"], "--seed"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_with_a_message_naming_it(args: list[str], named: str):
    out = refused(*args)
    assert named in " ".join(out.split()), out


def test_an_error_is_one_line_even_when_piped():
    out = refused("debate", "stochastic", "-m", "majority:n=3,p=0.3", "--claim", "1",
                  "--prover-a", "lie-at:step=99")  # fmt: skip
    assert len(out.strip().splitlines()) == 1, out


def test_json_output_is_strict_json():
    res = runner.invoke(app, ["debate", "stochastic", "--json"])
    assert res.exit_code == 0, res.output

    def no_constants(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    out = json.loads(res.stdout, parse_constant=no_constants)
    assert isinstance(out["steps"], int) and isinstance(out["rounds"], int)


def test_the_python_api_refuses_a_negative_seed_and_names_it():
    with pytest.raises(ProofgamesError, match="seed must be a non-negative integer"):
        play("bisection", "bb3", seed=-1)
    tm = TuringMachine.sized("1RB1LB_1LA1RZ", 6)
    a, b = make_strategy("bisection", "A", "honest"), make_strategy("bisection", "B", "honest")
    with pytest.raises(ProofgamesError, match="got -5"):
        play_bisection(tm, 6, 1, a, b, seed=-5)


@pytest.mark.parametrize(
    ("state", "loses"), [(np.int64(4), False), (4.0, True), ("4", True), (True, True)]
)
def test_a_configuration_with_foreign_field_types_is_canonical_or_the_senders_loss(state, loses):
    tm = TuringMachine.sized("1RB1LB_1LA1RZ", 6)
    final = tm.advance(tm.initial(), 6, None)
    assert final.state == 2  # halted: 2 states, HALT is index 2

    class A:
        def __init__(self) -> None:
            self.inner = make_strategy("bisection", "A", "honest")

        def final(self, ctx: Any) -> Any:
            self.inner.final(ctx)
            return Configuration(state if loses else np.int64(final.state), final.head,
                                 final.tape)  # fmt: skip

        def midpoint(self, ctx: Any, s: Any) -> Any:
            return self.inner.midpoint(ctx, s)

    out = play_bisection(tm, 6, 1, A(), make_strategy("bisection", "B", "honest"))
    if loses:
        assert out.forfeit == "A" and "state must be an integer" in out.reason
    else:
        assert out.winner == "A" and out.forfeit is None


def test_every_option_of_every_command_is_documented_and_debate_lists_every_protocol():
    import typer.main

    from proofgames.protocols import protocol_names

    command = typer.main.get_command(app)
    ctx = typer.Context(command)
    for name in command.list_commands(ctx):  # type: ignore[attr-defined]
        sub = command.get_command(ctx, name)  # type: ignore[attr-defined]
        if name == "pvg":  # its own app, checked with the PVG commands
            continue
        for param in sub.params:
            assert getattr(param, "help", None), (name, param.name)
    text = " ".join(runner.invoke(app, ["debate", "--help"]).output.split())
    assert all(p in text for p in protocol_names())
    assert ":strict" in text
