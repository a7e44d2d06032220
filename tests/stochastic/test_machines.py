from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from proofgames import BernoulliOracle, OracleLedger
from proofgames.errors import MachineFormatError, RegistryError
from proofgames.stochastic import StochasticBuilder, StochasticMachine
from proofgames.stochastic import machines as machines_module
from proofgames.stochastic.lipschitz import acceptance_probability, exact_lipschitz
from proofgames.stochastic.machines import (
    make_stochastic_machine,
    register_stochastic_machine,
    stochastic_machine_description,
    stochastic_machine_names,
)

DEFAULTS = stochastic_machine_names()


def simulate(machine: StochasticMachine, n: int, rng: np.random.Generator) -> np.ndarray:
    """Run n transcripts in lockstep with the machine's own sampler; return the outputs."""
    y = np.zeros((n, machine.length), dtype=np.int64)
    for t in range(machine.length):
        rel = list(machine.relevant(t))
        y[:, t] = machine.step_batch(t, y[:, rel], rng=rng)
    return y[:, -1]


def test_registry_lists_every_required_family() -> None:
    for name in ("single-query", "majority", "screening", "long-computation", "audit"):
        assert name in DEFAULTS
        assert stochastic_machine_description(name)
    assert {"all-pass", "parity"} <= set(DEFAULTS)


@pytest.mark.parametrize("name", DEFAULTS)
def test_default_machines_have_exact_acceptance_and_a_lipschitz_constant(name: str) -> None:
    m = make_stochastic_machine(name)
    assert m.name.startswith(name)
    assert m.p_accept is not None and 0.0 <= m.p_accept <= 1.0
    assert m.p_accept == pytest.approx(acceptance_probability(m), abs=1e-12)
    assert m.lipschitz is not None and m.lipschitz > 0
    assert m.lipschitz_exact


@pytest.mark.parametrize("name", DEFAULTS)
def test_steps_read_constant_size_relevant_sets(name: str) -> None:
    m = make_stochastic_machine(name)
    widest = 3 if name == "audit" else 2  # the audit's query step reads its log2(8) coins
    assert max(len(m.relevant(t)) for t in range(m.length)) <= widest


def test_canonical_name_round_trips_through_the_registry() -> None:
    m = make_stochastic_machine("majority:p=0.55")
    assert m.name == "majority:n=5,p=0.55"
    again = make_stochastic_machine(m.name)
    assert again.p_accept == m.p_accept and again.length == m.length


def test_single_query_is_one_step_with_k_one() -> None:
    m = make_stochastic_machine("single-query:p=0.25")
    assert m.length == 1 and m.is_query(0)
    assert (m.p_accept, m.lipschitz) == (0.25, 1.0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10])
@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.81, 1.0])
def test_majority_acceptance_is_the_binomial_tail(n: int, p: float) -> None:
    m = make_stochastic_machine(f"majority:n={n},p={p}")
    tail = float(stats.binom.sf(n // 2, n, p))
    assert m.p_accept == pytest.approx(tail, abs=1e-12)
    assert acceptance_probability(m) == pytest.approx(tail, abs=1e-12)


def test_screening_counts_included_studies_by_effect_direction() -> None:
    m = make_stochastic_machine("screening:n=3,k=1,p=0.6,spread=0,effects=++-")
    # accept iff included(+) - included(-) >= 1: enumerate the 8 inclusion patterns
    total = 0.0
    for bits in np.ndindex(2, 2, 2):
        weight = np.prod([0.6 if b else 0.4 for b in bits])
        total += weight * (bits[0] + bits[1] - bits[2] >= 1)
    assert m.p_accept == pytest.approx(total)
    assert acceptance_probability(m) == pytest.approx(total)


def test_long_computation_has_exactly_t_steps_and_k_independent_of_t() -> None:
    ks = []
    for t in (20, 200, 2000):
        m = make_stochastic_machine(f"long-computation:t={t},votes=3,p=0.6")
        assert m.length == t
        assert m.p_accept == pytest.approx(acceptance_probability(m))
        ks.append(m.lipschitz)
    assert max(ks) == min(ks) == pytest.approx(exact_lipschitz(m))


def test_k_grows_with_n_for_majority_and_all_pass() -> None:
    maj = [make_stochastic_machine(f"majority:n={n},p=0.5").lipschitz for n in (1, 5, 25, 101)]
    assert all(a < b for a, b in itertools.pairwise(maj))
    for n, k in zip((1, 5, 25, 101), maj, strict=True):
        # odd n at p = 1/2: the steepest secant is the tangent, n C(n-1, (n-1)/2) / 2^(n-1)
        assert k == pytest.approx(n * math.comb(n - 1, (n - 1) // 2) / 2 ** (n - 1), rel=1e-9)
    assert maj[-1] == pytest.approx(math.sqrt(2 * 101 / math.pi), rel=0.01)  # ~ sqrt(2n/pi)
    for n in (4, 16, 64):
        m = make_stochastic_machine(f"all-pass:n={n}")
        assert m.p_accept == pytest.approx(0.5)
        assert n / (2 * math.log(2)) <= m.lipschitz <= n / (2 * math.log(2)) + 1


def test_parity_is_flat_at_one_half_and_steep_near_zero() -> None:
    for n in (2, 5, 9):
        assert make_stochastic_machine(f"parity:n={n},p=0.5").lipschitz == pytest.approx(1.0)
        assert make_stochastic_machine(f"parity:n={n},p=0").lipschitz == pytest.approx(n)


def test_audit_coins_are_internal_and_never_reach_a_real_oracle() -> None:
    m = make_stochastic_machine("audit:n=4,r=3,p=0.6,spread=0.3,seed=2")
    assert m.internal.sum() == 1 and m.internal[-1]
    asked: list[bytes] = []

    def prob(z: bytes) -> float:
        asked.append(z)
        return float(m.probabilities[[q.decode() for q in m.queries].index(z.decode())])

    ledger = OracleLedger(BernoulliOracle(prob))
    rng = np.random.default_rng(0)
    y = np.zeros((500, m.length), dtype=np.int64)
    for t in range(m.length):
        y[:, t] = m.step_batch(t, y[:, list(m.relevant(t))], ledger.view("V"), rng)
    assert ledger.counts()["V"] == 3 * 500  # three judgements per transcript, no coins
    assert b"fair coin" not in asked
    assert set(asked) <= {f"does item {i} pass?".encode() for i in range(4)}


@pytest.mark.parametrize("name", DEFAULTS)
def test_monte_carlo_matches_exact_acceptance(name: str) -> None:
    m = make_stochastic_machine(name)
    n = 40_000
    out = simulate(m, n, np.random.default_rng(12345))
    assert m.p_accept is not None
    sd = math.sqrt(max(m.p_accept * (1 - m.p_accept), 1e-12) / n)
    assert abs(out.mean() - m.p_accept) <= 5 * sd + 1e-9


def test_unknown_machine_names_the_known_ones() -> None:
    with pytest.raises(RegistryError, match=r"unknown stochastic machine 'majorty'.*majority"):
        make_stochastic_machine("majorty:n=3")


def test_unknown_parameter_is_named() -> None:
    with pytest.raises(RegistryError, match=r"no argument 'q' \(its arguments: n, p\)"):
        make_stochastic_machine("majority:n=3,q=0.5")


def test_malformed_parameter_list_is_rejected() -> None:
    with pytest.raises(RegistryError, match="is not KEY=VALUE"):
        make_stochastic_machine("majority:n")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("single-query:p=1.5", r"p = 1.5 is a probability and must lie in \[0, 1\]"),
        ("majority:n=5,p=-0.1", r"p = -0.1 .*\[0, 1\]"),
        ("majority:n=0", "n = 0 must be at least 1"),
        ("audit:n=6", "n = 6 must be a power of two"),
        ("screening:n=3,effects=+x+", "effects = '\\+x\\+'"),
        ("screening:spread=-1", "spread = -1.0 must be a number >= 0"),
        ("long-computation:t=3,votes=3", "t = 3 is too short"),
    ],
)
def test_bad_parameter_values_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(MachineFormatError, match=message) as info:
        make_stochastic_machine(spec)
    assert repr(spec) in str(info.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("majority:n=2.5", "n must be int, got '2.5'"),
        ("majority:p=high", "p must be float, got 'high'"),
        ("majority:p=nan", "p must be"),
        ("majority:n=3,n=4", "n"),
    ],
)
def test_values_that_do_not_convert_exactly_are_refused_not_truncated(spec, message) -> None:
    with pytest.raises(RegistryError, match=message):
        make_stochastic_machine(spec)


def test_registration_refuses_duplicates_and_registers_new_machines() -> None:
    with pytest.raises(RegistryError, match="already registered"):
        register_stochastic_machine("majority")(lambda: None)  # type: ignore[arg-type,return-value]

    @register_stochastic_machine("test-coin-flip")
    def coin_flip(p: float = 0.5) -> StochasticMachine:
        """A test machine: one query."""
        b = StochasticBuilder([p])
        b.query(0)
        return b.build("test-coin-flip", 1.0, p)

    try:
        assert make_stochastic_machine("test-coin-flip:p=0.4").name == "test-coin-flip:p=0.4"
        assert stochastic_machine_description("test-coin-flip") == "A test machine: one query."
    finally:
        machines_module._MACHINES._items.pop("test-coin-flip")


def test_the_votes_tail_is_the_exact_binomial_tail_rounded_once():
    """Up to 64 votes P[Binomial(n, p) >= k] is summed in rationals (no scipy.stats)."""
    from fractions import Fraction
    from math import comb

    from scipy import stats

    from proofgames.stochastic._machine_parts import _tail

    for n, k, p in [
        (5, 3, 0.6),
        (3, 2, 0.7),
        (64, 33, 0.51),
        (1, 1, 0.3),
        (9, 0, 0.2),
        (9, 10, 0.2),
    ]:
        x = Fraction(p)
        exact = sum(comb(n, j) * x**j * (1 - x) ** (n - j) for j in range(max(k, 0), n + 1))
        assert _tail(n, k, p) == float(exact)
        assert abs(_tail(n, k, p) - float(stats.binom.sf(k - 1, n, p))) <= 4e-16
