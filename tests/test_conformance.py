"""Every registered strategy of every protocol, against the honest opponent.

Completeness: on a true claim honest A wins against every registered B.
Soundness: on a false claim honest B wins against every registered A.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from proofgames import OracleLedger
from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.machines.examples import example_names, get_example
from proofgames.protocols import (
    Outcome,
    get_protocol,
    play_bisection,
    play_cross_examination,
    protocol_names,
)
from proofgames.strategies import is_honest, make_strategy, strategy_names

from .conftest import SMALL_RUNS

PROTOCOLS = ("bisection", "cross-examination")


def play(
    protocol: str, tm: TuringMachine, steps: int, claim: int, a: str, b: str, seed: int = 0
) -> Outcome:
    pa, pb = make_strategy(protocol, "A", a), make_strategy(protocol, "B", b)
    if protocol == "bisection":
        return play_bisection(tm, steps, claim, pa, pb, seed=seed)
    return play_cross_examination(TableauTranscript(tm, steps), claim, pa, pb, seed=seed)


@dataclass(frozen=True)
class Instance:
    """One debate instance of a registered protocol: who is right, and how to play it."""

    label: str
    truth: int
    claims: tuple[int, ...]
    play: Callable[[int, str, str, int], Outcome]


def instances(protocol: str) -> list[Instance]:
    info = get_protocol(protocol)
    out: list[Instance] = []

    def pl(claim: int, a: str, b: str, seed: int, machine: Any, **kw: Any) -> Outcome:
        pa, pb = make_strategy(protocol, "A", a), make_strategy(protocol, "B", b)
        return info.play(machine, claim=claim, prover_a=pa, prover_b=pb, seed=seed, **kw)

    if info.instance in ("configuration", "transcript"):
        for text, steps in SMALL_RUNS:
            tm = TuringMachine.sized(text, steps)
            target = tm if info.instance == "configuration" else TableauTranscript(tm, steps)
            extra = {"steps": steps} if info.instance == "configuration" else {}
            out.append(
                Instance(
                    f"{text}@{steps}",
                    tm.known_output or 0,
                    (0, 1),
                    partial(pl, machine=target, **extra),
                )
            )
        for name in ("screening", "screening-strict"):
            s = get_example(name).build()
            ledger = OracleLedger(s.oracle())
            if info.instance == "configuration":
                tm, steps = s.machine(), get_example(name).steps
                truth = tm.accepts(tm.advance(tm.initial(), steps, ledger.view("V")))
                play_fn = partial(pl, machine=tm, steps=steps, oracle=s.oracle())
            else:
                m = s.transcript()
                truth = int(m.run(ledger.view("V"))[-1])
                play_fn = partial(pl, machine=m, oracle=s.oracle())
            out.append(Instance(name, truth, (0, 1), play_fn))
    elif info.instance == "stochastic":
        pytest.skip("stochastic protocols are checked statistically in test_stochastic_*.py")
    elif info.instance == "witness":
        for name in example_names("sat"):
            problem = get_example(name).build()
            truth = int(dict(get_example(name).facts)["satisfiable"])
            out.append(Instance(name, truth, (1,), partial(pl, machine=problem)))
    assert out, f"no conformance instances for {protocol}"
    return out


@pytest.mark.parametrize("protocol", protocol_names())
def test_honest_a_wins_true_claims_against_every_b(protocol):
    for inst in instances(protocol):
        if inst.truth not in inst.claims:
            continue
        for b in strategy_names(protocol, "B"):
            for seed in (0, 1):
                out = inst.play(inst.truth, "honest", b, seed)
                assert out.winner == "A" and out.verdict == 1, (inst.label, b, out.reason)


@pytest.mark.parametrize("protocol", protocol_names())
def test_honest_b_wins_false_claims_against_every_a(protocol):
    for inst in instances(protocol):
        false = 1 - inst.truth
        if false not in inst.claims:
            continue
        for a in strategy_names(protocol, "A"):
            for seed in (0, 1):
                out = inst.play(false, a, "honest", seed)
                assert out.winner == "B" and out.verdict == 0, (inst.label, a, out.reason)


@pytest.mark.parametrize("protocol", protocol_names())
def test_every_protocol_declares_its_theorem_and_has_honest_strategies(protocol):
    info = get_protocol(protocol)
    assert info.figure.startswith("Figure") and info.theorem.startswith("Theorem")
    assert 0.5 < info.completeness <= 1.0 and 0.0 <= info.soundness < 0.5
    for role in ("A", "B"):
        names = strategy_names(protocol, role)
        assert len(names) >= 3
        assert is_honest(protocol, role, names[0])


@pytest.mark.parametrize("protocol", protocol_names())
def test_same_seed_gives_identical_outcome_record_for_every_protocol(protocol):
    for inst in instances(protocol)[:4]:
        for claim in inst.claims:
            a = "honest" if claim == inst.truth else "random-step"
            b = "random" if claim == inst.truth else "honest"
            first, again = inst.play(claim, a, b, 7), inst.play(claim, a, b, 7)
            assert first == again
            assert first.to_dict()["messages"] == again.to_dict()["messages"]


def test_bisection_costs_match_theorem_5_1(small_run):
    tm, steps = small_run
    out = play("bisection", tm, steps, tm.known_output, "honest", "honest")
    rounds = math.ceil(math.log2(steps)) if steps > 1 else 0
    assert out.costs.rounds <= rounds
    assert out.costs.verifier_reads <= rounds + 2
    assert out.costs.verifier_read_unit == "configurations"
    assert out.costs.verifier_steps == 1
    assert out.costs.prover_steps["A"] <= 1.5 * steps + 1
    assert out.costs.prover_steps["B"] <= 1.5 * steps + 1


def test_cross_examination_reads_a_constant_number_of_entries(small_run):
    tm, steps = small_run
    for claim, a, b in (
        (tm.known_output, "honest", "random"),
        (1 - tm.known_output, "flip-step", "honest"),
    ):
        out = play("cross-examination", tm, steps, claim, a, b)
        assert out.costs.verifier_reads <= 5
        assert out.costs.verifier_read_unit == "entries"
        assert out.costs.verifier_steps <= 1


def test_random_strategies_depend_on_the_seed():
    tm = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107)
    challenges = {
        play("cross-examination", tm, 107, 1, "honest", "random", seed=s).messages[1].content
        for s in range(8)
    }
    assert len(challenges) > 1


BIG = ("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 10_000_000)  # bb5, still running at 10^7


@pytest.fixture(scope="module")
def big_machine() -> TuringMachine:
    return TuringMachine.sized(*BIG)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ten_million_step_debates_are_decided_correctly(protocol, big_machine):
    steps = BIG[1]
    truth = big_machine.known_output
    assert truth == 0
    for b in strategy_names(protocol, "B"):
        out = play(protocol, big_machine, steps, truth, "honest", b)
        assert out.winner == "A", (b, out.reason)
    for a in strategy_names(protocol, "A"):
        out = play(protocol, big_machine, steps, 1 - truth, a, "honest")
        assert out.winner == "B", (a, out.reason)
        assert out.costs.prover_steps["B"] <= 1.5 * steps
    honest = play(protocol, big_machine, steps, truth, "honest", "honest")
    assert honest.costs.prover_steps["A"] <= 1.5 * steps
    if protocol == "bisection":
        assert honest.costs.verifier_reads <= math.ceil(math.log2(steps)) + 2
    else:
        assert honest.costs.verifier_reads <= 5
