"""The compiled every-step-K sweep, and the exact sample counters of stochastic debates.

The sweep was numpy over per-step arrays (minutes on a 200,000-step machine); it is now
one compiled loop, in C where a compiler works and in numba elsewhere. Its reference
formulation lives here, and all three must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from proofgames import ProtocolError
from proofgames._registry import Player, StrategySpec
from proofgames.protocols import play_stochastic_batch
from proofgames.stochastic import StochasticBuilder, StochasticParams, _sweep_native
from proofgames.stochastic import hypothesis as hyp
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.strategies import make_strategy

FloatArray = np.ndarray


def _shift(p: FloatArray, eps: FloatArray, up: np.ndarray) -> FloatArray:
    return np.where(up, np.minimum(eps, 1.0 - p), -np.minimum(eps, p))


def reference_sweep(layers, output, a, b):  # type: ignore[no-untyped-def]
    """The numpy sweep the kernel replaced (same operations, same order)."""
    base = output
    hi = output[:, None] + np.zeros((1, a.size))
    lo = hi.copy()
    w_hi, w_lo = np.zeros_like(hi), np.zeros_like(hi)
    rewards = [np.zeros_like(hi), np.zeros_like(hi)]
    for layer in reversed(layers):
        p, c0, c1 = layer.p[:, None], layer.child0, layer.child1
        true_gap = (base[c1] - base[c0])[:, None]
        rises = np.maximum(0.0, true_gap + w_hi[c1] - w_lo[c0])
        falls = np.maximum(0.0, -true_gap - w_lo[c1] + w_hi[c0])
        either = np.maximum(rises, falls)
        up = np.where(p <= 0.0, rises, np.where(p >= 1.0, falls, either))
        down = np.where(p <= 0.0, falls, np.where(p >= 1.0, rises, either))
        for i, gain in enumerate((up, down)):
            r = rewards[i]
            d = r[c1] - r[c0]
            rewards[i] = np.minimum(1.0, gain) + r[c0] + d * (p + _shift(p, b[None, :], d >= 0))
        moved = []
        for val, w, sign in ((hi, w_hi, 1.0), (lo, w_lo, -1.0)):
            d = val[c1] - val[c0]
            delta = _shift(p, a[None, :], sign * d >= 0)
            moved.append((val[c0] + d * (p + delta), w[c0] + (w[c1] - w[c0]) * p + d * delta))
        (hi, w_hi), (lo, w_lo) = moved
        base = base[c0] + (base[c1] - base[c0]) * layer.p
    return np.stack([w_hi[0], -w_lo[0]]), np.stack([rewards[0][0], rewards[1][0]])


SPECS = [
    "copy-chain:t=7,p=0.3",
    "majority:n=5,p=0.7",
    "majority:n=4,p=0.5",
    "parity:n=9,p=0.2",
    "all-pass:n=6,p=0.9",
    "screening:n=6",
    "single-query:p=0.8",
    "single-query:p=1",
]
BACKENDS = ["c", "numba"]
needs_c = pytest.mark.skipif(_sweep_native._library() is None, reason="no C compiler")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each sweep test once on the C kernel and once on numba's."""
    if request.param == "c" and _sweep_native._library() is None:
        pytest.skip("no C compiler")
    if request.param == "numba":
        monkeypatch.setattr(_sweep_native, "_library", lambda: None)
    return str(request.param)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, np.float64).view(np.int64)  # -0.0 differs from 0.0


@pytest.mark.parametrize("spec", SPECS)
def test_compiled_sweep_equals_the_numpy_formulation_bit_for_bit(spec: str, backend: str) -> None:
    machine = make_stochastic_machine(spec)
    layers, output = hyp._layers(machine, hyp.MAX_STATES)
    rng = np.random.default_rng(7)
    edges = np.sort(np.concatenate([[0.0, 1e-9, 1.0], rng.uniform(0, 1, 40)]))
    a, b = edges[:-1], edges[1:]
    f, slope = hyp._sweep(hyp._flat(layers), output, a, b)
    f_ref, slope_ref = reference_sweep(layers, output, a, b)
    assert f.shape == f_ref.shape == (2, a.size)
    assert np.array_equal(_bits(f), _bits(f_ref)) and np.array_equal(_bits(slope), _bits(slope_ref))


@needs_c
def test_the_c_and_numba_sweeps_give_the_same_bits_on_random_machines_and_cells() -> None:
    from proofgames.stochastic._sweep_kernel import sweep_kernel

    rng = np.random.default_rng(41)
    for spec in [*SPECS[:4], "majority:n=7,p=0.6", "copy-chain:t=30,p=0.9"]:
        layers, output = hyp._layers(make_stochastic_machine(spec), hyp.MAX_STATES)
        for _ in range(5):
            edges = np.sort(np.concatenate([[0.0], rng.uniform(0, 1, 30) ** 8, [1.0]]))
            args = (*hyp._flat(layers), output, edges[:-1], edges[1:])
            c = _sweep_native.sweep(*args)
            assert c is not None
            numba = sweep_kernel(*args)
            for x, y in zip(c, numba, strict=True):
                assert np.array_equal(_bits(x), _bits(y))


@needs_c
@pytest.mark.parametrize("spec", ["majority:n=5,p=0.7", "majority:n=3,p=0.8", "parity:n=9,p=0.2"])
def test_the_bounds_and_the_estimate_parameters_do_not_depend_on_the_backend(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = make_stochastic_machine(spec)
    with_c = hyp.step_lipschitz_bounds(machine)
    monkeypatch.setattr(_sweep_native, "_library", lambda: None)
    assert hyp.step_lipschitz_bounds(machine) == with_c  # every float equal, bit for bit


@pytest.mark.slow
def test_every_step_k_of_a_long_all_pass_lies_between_its_oracle_k_and_its_step_count() -> None:
    # Sound by construction: lower is attained by a perturbation, upper is a proven bound;
    # every-step K is at least the oracle-only K and at most the steps the output reads.
    for n in (2_001, 20_001):
        machine = make_stochastic_machine(f"all-pass:n={n},p=0.9999")
        bounds = hyp.step_lipschitz_bounds(machine)
        assert machine.lipschitz is not None
        assert machine.lipschitz <= bounds.lower <= bounds.upper <= 2 * n - 1
        assert bounds.upper <= bounds.lower * 1.01  # refined to a tight bracket


def _long_chain(steps: int) -> object:
    b = StochasticBuilder([0.9])
    for _ in range(steps):
        b.query(0)
    return b.build(f"queries-{steps}", lipschitz=1.0, p_accept=0.9)


def test_a_debate_whose_prescribed_samples_overflow_the_counters_is_refused_before_play() -> None:
    machine = _long_chain(4)
    huge = StochasticParams("custom", 1.0, 4, 2**61, 20, 40, 0.3, 0.2, "shared")
    honest = [make_strategy("stochastic", r, "honest") for r in ("A", "B")]
    with pytest.raises(ProtocolError, match=r"A's prescribed samples per debate .* exceed"):
        play_stochastic_batch(machine, huge, 1, *honest, debates=2)
    fits = StochasticParams("custom", 1.0, 4, 2**59, 20, 40, 0.3, 0.2, "shared")
    res = play_stochastic_batch(machine, fits, 1, *honest, debates=2)
    assert res.forfeit_counts() == {"A": 0, "B": 0}
    assert int(res.samples["A"].max()) == 4 * 2**59  # counted exactly


class Hoarder(Player):
    """Asks for more samples than any counter can hold: its own loss, not a wrapped count."""

    def announce(self, r, rng):  # type: ignore[no-untyped-def]
        r.estimate(2**62)
        return r.estimate(2**62)

    def coin(self, r, rng):  # type: ignore[no-untyped-def]
        return rng.random(r.n)


def test_a_party_that_asks_past_the_counter_forfeits_with_the_reason() -> None:
    hoarder = Hoarder()
    hoarder.spec = StrategySpec("stochastic", "A", "hoarder")
    params = StochasticParams("custom", 1.0, 1, 20, 20, 40, 0.3, 0.2, "shared")
    res = play_stochastic_batch(
        _long_chain(1), params, 1, hoarder, make_strategy("stochastic", "B", "honest"), debates=3
    )
    assert res.acceptance == 0 and res.forfeit_counts() == {"A": 3, "B": 0}
    assert "counts exactly" in res.forfeits[0].reason
    assert int(res.samples["A"].min()) >= 0  # nothing wrapped around
