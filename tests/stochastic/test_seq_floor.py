"""The Lagrangian floor: its rounded DP against the exact rational DP (and caught when the
rounding is turned the wrong way), below a valid test, above Wald's, over the family, and
its input checks."""

from __future__ import annotations

from fractions import Fraction

import pytest

from proofgames.errors import ProtocolError
from proofgames.stochastic import seq_floor
from proofgames.stochastic.seq_floor import (
    _dp_value,
    best_floor,
    family_floor,
    lagrangian_floor,
)
from proofgames.stochastic.seq_tier import wald_floor
from proofgames.stochastic.seqtest import SequentialTest, expected_queries

K025 = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
                      v_a=0.007057, delta=0.243256)  # fmt: skip
"""The sequential tier's V at K = 0.25, T = 10 (meets (F3) and (F4) by the written proof)."""
CONSTANTS = (0.243256, 0.0999, 0.00941)  # its s, v_c, v_s


def _exact_dp(x: Fraction, s: Fraction, lams: tuple[Fraction, ...], horizon: int) -> Fraction:
    """``W_0(0)`` in rationals (the likelihood ratios are rational at these constants)."""
    up, down = (x + s) / x, (1 - x - s) / (1 - x)
    up2, down2 = (x - s) / x, (1 - x + s) / (1 - x)

    def stop(i: int, k: int) -> Fraction:
        ratios = lams[1] * up**k * down ** (i - k) + lams[2] * up2**k * down2 ** (i - k)
        return min(lams[0], ratios)

    w = [min(stop(horizon, k), Fraction(1)) for k in range(horizon + 1)]
    for i in range(horizon - 1, -1, -1):
        w = [min(stop(i, k), 1 + x * w[k + 1] + (1 - x) * w[k]) for k in range(i + 1)]
    return w[0]


LAMS = (100.0, 2000.0, 1500.0)


@pytest.mark.parametrize("x", [0.5, 0.375])
def test_rounded_dp_is_just_below_the_rational_dp(x: float) -> None:
    exact = _exact_dp(Fraction(x), Fraction(1, 4), tuple(Fraction(v) for v in LAMS), 40)
    low = Fraction(_dp_value(x, 0.25, LAMS, 40, rigorous=True))
    assert low <= exact
    assert exact - low < Fraction(1, 10**9)
    floor = Fraction(lagrangian_floor(x, 0.25, 0.1, 0.01, LAMS, 40))
    assert floor <= exact - 100 * Fraction(0.1) - 3500 * Fraction(0.01)
    assert 5 < exact < 100  # sampling is worth it: not the degenerate stop at once


def test_rounding_turned_the_wrong_way_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    exact = _exact_dp(Fraction(1, 2), Fraction(1, 4), tuple(Fraction(v) for v in LAMS), 40)
    monkeypatch.setattr(seq_floor, "STEP_SHRINK", 1 + 1e-6)
    monkeypatch.setattr(seq_floor, "RATIO_SHRINK", 1 + 1e-6)
    assert Fraction(_dp_value(0.5, 0.25, LAMS, 40, rigorous=True)) > exact


@pytest.mark.slow
def test_floor_is_below_a_valid_test_and_above_wald() -> None:
    r = best_floor(*CONSTANTS, horizon=400)
    honest = expected_queries(K025, 0.5, 0.5).expected  # 52.05
    assert wald_floor(0.5, *CONSTANTS) <= r.floor <= honest
    # a longer horizon only raises the floor (the truncation's terminal cost is a floor)
    assert lagrangian_floor(0.5, *CONSTANTS, (r.lam0, r.lam_up, r.lam_down), 200) <= r.floor


@pytest.mark.slow
def test_family_floor_is_below_each_member() -> None:
    fam = family_floor(0.25, edges=(0.0, 0.004, 0.02, 0.05), horizon=300)
    assert fam.floor == min(c.floor for c in fam.cells) == fam.lowest.floor
    assert len(fam.cells) == 4
    # the member (s, v_s) = (0.243256, 0.00941) lies in the cell v_s in (0.004, 0.02]
    member = best_floor(*CONSTANTS, horizon=300)
    assert fam.floor <= member.floor
    cell = fam.cells[1]
    assert cell.v_s == 0.02 and cell.s >= CONSTANTS[0] and cell.v_c >= CONSTANTS[1]


@pytest.mark.slow
def test_k1_floor_rules_out_the_goal() -> None:
    """At K = 1, T = 10 the tight constants' floor exceeds 60% of the tight worst case."""
    r = best_floor(0.060582, 0.09962, 0.00916, horizon=3000)
    assert r.floor > 0.6 * 1130


@pytest.mark.parametrize(
    ("args", "match"),
    [((0.5, 0.5, 0.1, 0.01), "0 < x - s"), ((0.5, 0.2, 0.0, 0.01), "v_c, v_s"),
     ((0.5, 0.2, 0.1, 1.0), "v_c, v_s")],
)  # fmt: skip
def test_bad_constants_are_refused(args: tuple[float, ...], match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        lagrangian_floor(*args, (1.0, 1.0, 1.0), 10)


def test_bad_multipliers_horizon_and_edges_are_refused() -> None:
    with pytest.raises(ProtocolError, match="nonnegative"):
        lagrangian_floor(0.5, 0.2, 0.1, 0.01, (-1.0, 1.0, 1.0), 10)
    with pytest.raises(ProtocolError, match="horizon"):
        lagrangian_floor(0.5, 0.2, 0.1, 0.01, (1.0, 1.0, 1.0), 0)
    with pytest.raises(ProtocolError, match="edges"):
        family_floor(1.0, edges=(0.0, 0.2))
    with pytest.raises(ProtocolError, match="w = "):
        family_floor(1.0, w=0.5, d=0.6)
