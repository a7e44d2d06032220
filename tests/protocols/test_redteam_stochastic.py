"""Red team, stochastic debate: strategy code attacks Figure 1's verifier and must lose.

A prover controls only its own code and what it returns: it tries to predict or force the
shared coin, to bill the other party's samples, to rewrite the transcript the other party
sees, and to send malformed announcements and abort decisions. Each attack loses those
debates (or gains nothing), with a recorded reason. The paper's constants are used, where
the theorem bounds a false claim's acceptance by 2/5. The deterministic protocols' red
team is ``test_redteam.py``.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import numpy as np
import pytest

from proofgames import ProtocolError
from proofgames.protocols import (
    play_stochastic_batch,
)
from proofgames.stochastic import StochasticBuilder, paper_params
from proofgames.strategies import make_strategy

from .redteam_support import reachable


def single(p: float) -> Any:
    b = StochasticBuilder([p])
    b.query(0)
    return b.build(f"single-query:p={p}", lipschitz=1.0, p_accept=p)


class CoinPredictor:
    """A announces honestly, then forces the shared coin to 0 by predicting B's share.

    It predicts with every generator it can reach that is not its own, preferring one
    filed under ``"B"``; the bit is then 1 whatever p is, and honest B sees no lie.
    """

    def __init__(self) -> None:
        self.inner = make_strategy("stochastic", "A", "honest")

    def announce(self, r: Any, rng: Any) -> Any:
        return self.inner.announce(r, rng)

    def coin(self, r: Any, rng: Any) -> Any:
        filed = [o["B"] for o in reachable((r, rng)) if isinstance(o, dict) and "B" in o]
        others = [o for o in reachable((r, rng)) if isinstance(o, np.random.Generator)]
        candidates = [g for g in filed + others if isinstance(g, np.random.Generator)]
        candidates = [g for g in candidates if g is not rng]
        if not candidates:
            return rng.random(r.n)
        predicted = copy.deepcopy(candidates[0]).random(r.n)
        return (1.0 - predicted) % 1.0


def test_a_cannot_predict_bs_coin_share_or_force_the_shared_coin():
    m, params = single(0.33), paper_params(1.0, 1)
    res = play_stochastic_batch(
        m, params, 1, CoinPredictor(), make_strategy("stochastic", "B", "honest"),
        debates=2000, seed=0,
    )  # fmt: skip
    assert res.acceptance <= 0.4, res.acceptance


class Biller:
    """A draws millions of samples through every sampler it can reach (its own only)."""

    def __init__(self) -> None:
        self.inner = make_strategy("stochastic", "A", "honest")

    def announce(self, r: Any, rng: Any) -> Any:
        for o in reachable(r):
            if callable(o) and type(o).__name__ == "Sampler":
                o(10**6)
        for party in ("B", "V"):
            with contextlib.suppress(Exception):
                r.estimate(party, 10**6)  # the old signature let A bill B and V
        return self.inner.announce(r, rng)

    def coin(self, r: Any, rng: Any) -> Any:
        return self.inner.coin(r, rng)


def test_a_party_cannot_bill_another_partys_samples():
    m, params = single(0.9), paper_params(1.0, 1)
    b = "always-abort"
    ref = play_stochastic_batch(
        m, params, 1, make_strategy("stochastic", "A", "honest"),
        make_strategy("stochastic", "B", b), debates=50, seed=1,
    )  # fmt: skip
    out = play_stochastic_batch(
        m, params, 1, Biller(), make_strategy("stochastic", "B", b), debates=50, seed=1
    )
    assert np.array_equal(out.samples["B"], ref.samples["B"])
    assert np.array_equal(out.samples["V"], ref.samples["V"])
    assert (out.samples["A"] >= ref.samples["A"] + 10**6).all()  # A pays for its own


class BitWriter:
    """A rewrites every transcript array it can reach to show its claim."""

    def __init__(self) -> None:
        self.inner = make_strategy("stochastic", "A", "honest")

    def announce(self, r: Any, rng: Any) -> Any:
        for o in reachable(r):
            if isinstance(o, np.ndarray) and o.dtype == np.int8:
                o.setflags(write=True)
                o[...] = 1
        return self.inner.announce(r, rng)

    def coin(self, r: Any, rng: Any) -> Any:
        return self.inner.coin(r, rng)


def test_writing_to_the_transcript_a_party_sees_does_not_change_vs():
    b = StochasticBuilder([0.33])
    q = b.query(0)
    b.gate(lambda x: x[:, 0].astype(np.int64), relevant=[q])
    b.gate(lambda x: x[:, 0].astype(np.int64), relevant=[q])  # reads bit 0 again, later
    m = b.build("copy-twice", lipschitz=1.0, p_accept=0.33)
    res = play_stochastic_batch(
        m, paper_params(1.0, 3), 1, BitWriter(), make_strategy("stochastic", "B", "honest"),
        debates=2000, seed=0,
    )  # fmt: skip
    assert res.acceptance <= 0.4, res.acceptance


@pytest.mark.parametrize(
    ("vector", "why"),
    [
        (lambda n: np.full(n, np.nan), "outside [0, 1]"),
        (lambda n: np.full(n, np.inf), "outside [0, 1]"),
        (lambda n: -np.ones(n), "outside [0, 1]"),
        (lambda n: np.ones(n + 1), "malformed announcement"),
        (lambda n: np.ones((n, 1)), "malformed announcement"),
        (lambda n: ["0.5"] * n, "malformed announcement"),
        (lambda n: np.ones(n).astype(np.complex128), "malformed announcement"),
    ],
)
def test_malformed_announcements_lose_those_debates_for_a(vector, why):
    class A:
        def announce(self, r: Any, rng: Any) -> Any:
            return vector(r.n)

        def coin(self, r: Any, rng: Any) -> Any:
            return rng.random(r.n)

    res = play_stochastic_batch(
        single(0.9), paper_params(1.0, 1), 1, A(), make_strategy("stochastic", "B", "honest"),
        debates=40,
    )  # fmt: skip
    assert res.acceptance == 0 and res.forfeit_counts() == {"A": 40, "B": 0}
    assert why in res.forfeits[0].reason


@pytest.mark.parametrize(
    "decision",
    [lambda n: np.ones(n, dtype=np.int64), lambda n: [1] * n, lambda n: np.ones(n + 1, bool)],
)
def test_an_abort_decision_that_is_not_booleans_loses_for_b(decision):
    class B:
        def abort(self, r: Any, rng: Any, announced: Any, bits: Any) -> Any:
            return decision(r.n)

        def coin(self, r: Any, rng: Any) -> Any:
            return rng.random(r.n)

    res = play_stochastic_batch(
        single(0.9), paper_params(1.0, 1), 1, make_strategy("stochastic", "A", "honest"), B(),
        debates=40,
    )  # fmt: skip
    assert res.acceptance == 1 and res.forfeit_counts() == {"A": 0, "B": 40}


def test_a_coin_share_of_one_or_more_loses():
    class B:
        def coin(self, r: Any, rng: Any) -> Any:
            return np.ones(r.n)

        def abort(self, r: Any, rng: Any, announced: Any, bits: Any) -> Any:
            return np.zeros(r.n, dtype=bool)

    res = play_stochastic_batch(
        single(0.9), paper_params(1.0, 1), 1, make_strategy("stochastic", "A", "honest"), B(),
        debates=10,
    )  # fmt: skip
    assert res.forfeit_counts()["B"] == 10 and "coin share" in res.forfeits[0].reason


def test_simulator_limits_are_errors_before_play_never_a_forfeit():
    with pytest.raises(ProtocolError, match="per-sample drawing needs"):
        play_stochastic_batch(
            single(0.9), paper_params(1.0, 1), 1, make_strategy("stochastic", "A", "honest"),
            make_strategy("stochastic", "B", "honest"), debates=10, sampling="per-sample",
        )  # fmt: skip


def test_estimates_report_forfeits_by_party_and_reason_instead_of_hiding_them():
    from proofgames.experiments.montecarlo import estimate_acceptance

    class Raises:
        def announce(self, r: Any, rng: Any) -> Any:
            raise RuntimeError("no announcement today")

        def coin(self, r: Any, rng: Any) -> Any:
            return rng.random(r.n)

    est = estimate_acceptance(
        single(0.33), paper_params(1.0, 1), 1, Raises, "honest", debates=1000, chunk=300
    )
    assert est.acceptance == 0 and est.forfeited == {"A": 1000, "B": 0}
    assert est.forfeits == [
        {"party": "A", "reason": "announcement raised RuntimeError: no announcement today",
         "debates": 1000}
    ]  # fmt: skip
    assert est.prover_a == "custom:Raises"
