"""Every registered strategy of every protocol, against the honest opponent.

Completeness: on a true claim honest A wins against every registered B.
Soundness: on a false claim honest B wins against every registered A.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from proofgames.experiments.montecarlo import clopper_pearson_interval
from proofgames.harness import Instance, play_batch, resolve_instance
from proofgames.harness import play as play_one
from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.machines.examples import example_names
from proofgames.protocols import (
    Outcome,
    get_protocol,
    play_bisection,
    play_cross_examination,
    protocol_names,
)
from proofgames.strategies import is_honest, make_strategy, strategy_names

from ..conftest import SMALL_RUNS

PROTOCOLS = ("bisection", "cross-examination")


def play(
    protocol: str, tm: TuringMachine, steps: int, claim: int, a: str, b: str, seed: int = 0
) -> Outcome:
    pa, pb = make_strategy(protocol, "A", a), make_strategy(protocol, "B", b)
    if protocol == "bisection":
        return play_bisection(tm, steps, claim, pa, pb, seed=seed)
    return play_cross_examination(TableauTranscript(tm, steps), claim, pa, pb, seed=seed)


def instances(protocol: str) -> list[tuple[Instance, tuple[int, ...]]]:
    """Instances of every kind the protocol debates, with the claims it admits."""
    kind = get_protocol(protocol).instance
    if kind in ("configuration", "transcript"):
        specs = [(f"tm:{text}", steps) for text, steps in SMALL_RUNS] + [("screening", None)]
        return [(resolve_instance(protocol, s, t), (0, 1)) for s, t in specs]
    if kind == "witness":
        return [(resolve_instance(protocol, n), (1,)) for n in example_names("sat")]
    specs = STOCHASTIC if kind == "stochastic" else PANELS
    claims = (0, 1) if kind == "stochastic" else (1,)
    return [(resolve_instance(protocol, s), claims) for s in specs]


STOCHASTIC = ("single-query:p=0.9", "single-query:p=0.1", "majority:n=3,p=0.8")
PANELS = ("panel-choice:p=0.2;0.9;0.4", "panel-choice:p=0.2;0.1")


def decided(protocol: str, inst: Instance, claim: int, a: str, b: str) -> tuple[float, float]:
    """The acceptance of V, as an interval: exact for deterministic protocols (two seeds)."""
    if get_protocol(protocol).run_batch is None:
        outs = [play_one(protocol, inst, claim, a, b, seed=s) for s in (0, 1)]
        rate = sum(o.verdict for o in outs) / len(outs)
        return rate, rate
    res = play_batch(protocol, inst, claim, a, b, debates=2000, seed=0, params="lean")
    return clopper_pearson_interval(int(res.verdicts.sum()), res.debates, confidence=0.999)


def claim_is(inst: Instance, claim: int, side: str) -> bool:
    """Whether ``claim`` is true (``side="true"``) or false beyond the theorem's gap."""
    if inst.p_accept is None:
        return (inst.truth == claim) == (side == "true")
    p = inst.p_accept if claim == 1 else 1 - inst.p_accept
    return p >= 2 / 3 if side == "true" else p <= 1 / 3


@pytest.mark.parametrize("protocol", protocol_names())
def test_honest_a_wins_true_claims_against_every_b(protocol):
    bound = get_protocol(protocol).completeness
    for inst, claims in instances(protocol):
        for claim in (c for c in claims if claim_is(inst, c, "true")):
            for b in strategy_names(protocol, "B"):
                lo, _ = decided(protocol, inst, claim, "honest", b)
                assert lo >= bound, (inst.spec, claim, b, lo)


@pytest.mark.parametrize("protocol", protocol_names())
def test_honest_b_wins_false_claims_against_every_a(protocol):
    bound = get_protocol(protocol).soundness
    for inst, claims in instances(protocol):
        for claim in (c for c in claims if claim_is(inst, c, "false")):
            for a in strategy_names(protocol, "A"):
                _, hi = decided(protocol, inst, claim, a, "honest")
                assert hi <= bound, (inst.spec, claim, a, hi)


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
    d = get_protocol(protocol).defaults
    for inst, claims in instances(protocol)[:4]:
        for claim in claims:
            true = claim_is(inst, claim, "true")
            a, b = (d.honest_a, d.disputer_b) if true else (d.liar_a, d.honest_b)
            first = play_one(protocol, inst, claim, a, b, seed=7)
            again = play_one(protocol, inst, claim, a, b, seed=7)
            assert first == again
            assert first.to_dict()["messages"] == again.to_dict()["messages"]


@pytest.mark.parametrize("protocol", protocol_names())
def test_a_batch_is_the_same_whatever_it_is_split_into(protocol):
    inst, claims = instances(protocol)[0]
    whole = play_batch(protocol, inst, claims[-1], debates=6, seed=3)
    again = play_batch(protocol, inst, claims[-1], debates=6, seed=3)
    assert np.array_equal(whole.verdicts, again.verdicts)
    assert whole.forfeits == again.forfeits and whole.debates == 6


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
