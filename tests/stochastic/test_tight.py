"""The tight tier: every condition of its argument, re-checked in exact rational arithmetic.

The algebraic conditions are recomputed here from the set's floats as Fractions,
independently of ``tight_conditions``; the Hoeffding counts against 60-digit logarithms; the
tails by ``certify_tail`` (itself checked against a brute force in ``test_tail_bounds``).
Nudging any parameter past its bound makes exactly the right condition fail.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from decimal import Decimal, getcontext
from fractions import Fraction
from functools import cache

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.stochastic.optimize import optimize_params
from proofgames.stochastic.params import StochasticParams, resolve_params
from proofgames.stochastic.tail_bounds import certify_tail
from proofgames.stochastic.tails import TIER_BACKING
from proofgames.stochastic.tight import optimize_tight, tight_conditions

runner = CliRunner()


@cache
def _tight(k: float, t: int) -> StochasticParams:
    return optimize_tight(k, t).params


def _hoeffding(error: Fraction, failure: Fraction) -> int:
    getcontext().prec = 60
    ln = (Decimal(2) / (Decimal(failure.numerator) / Decimal(failure.denominator))).ln()
    e = Decimal(error.numerator) / Decimal(error.denominator)
    return math.ceil(ln / (2 * e * e))


def _check_independently(p: StochasticParams) -> None:
    """Every inequality of docs/stochastic-tight.md, in Fractions of the set's floats."""
    assert p.tight is not None and p.lean is None
    f = {key: Fraction(x) for key, x in p.tight.items()}
    k, t = Fraction(p.k), p.steps
    c, s, b, w, d = f["c"], f["s"], f["b"], f["w"], f["d"]
    theta, theta_b = Fraction(p.v_threshold), Fraction(p.b_threshold)
    assert 0 < c < theta < s < theta_b < b and k * b <= w and d > 0
    assert 0 < f["v_c"] < 1 and 0 < f["v_s"] < 1
    assert f["q_a"] > 0 and f["q_a"] * t < 1 and f["q_b"] > 0 and f["q_b"] * t < 1
    assert p.a_samples >= _hoeffding(c, f["q_a"])
    assert p.b_samples >= _hoeffding(min(theta_b - s, b - theta_b), f["q_b"])
    assert certify_tail(p.v_samples, theta - c, f["v_c"], two_sided=True).ok
    assert certify_tail(p.v_samples, s - theta, f["v_s"], two_sided=False).ok
    assert d <= (1 - f["v_c"]) * (w - k * c - f["q_a"] * t)
    assert d <= (1 - f["v_s"]) * (1 - f["q_b"] * t) * (w - k * b)
    assert (p.completeness_target, p.soundness_target) == (p.tight["d"], 1 - p.tight["d"])


@pytest.mark.slow
def test_goal_at_k1_t10() -> None:
    p = _tight(1.0, 10)
    assert p.name == "optimized-tight" and p.v_samples <= 1200
    assert p.v_samples < optimize_params(1.0, 10, tail="exact").params.v_samples
    _check_independently(p)
    assert all(x.holds for x in tight_conditions(p))


@pytest.mark.slow
@pytest.mark.parametrize(("k", "t"), [(1.0, 1000), (2.0, 10)])
def test_every_set_the_optimizer_returns_meets_every_condition(k: float, t: int) -> None:
    _check_independently(_tight(k, t))


def _failing(p: StochasticParams) -> list[str]:
    return [x.name for x in tight_conditions(p) if not x.holds]


def _with_tight(p: StochasticParams, **changes: float) -> StochasticParams:
    assert p.tight is not None
    return replace(p, tight={**p.tight, **changes})


@pytest.mark.slow
def test_a_parameter_nudged_past_its_bound_fails_exactly_its_condition() -> None:
    p = _tight(1.0, 10)
    assert p.tight is not None and _failing(p) == []
    s, theta = p.tight["s"], p.v_threshold
    worst_c = next(x for x in tight_conditions(p) if x.name.startswith("V's completeness"))
    nudges = {
        "soundness: d <=": _with_tight(p, b=p.tight["b"] + 1e-4),
        "completeness: d <=": _with_tight(p, q_a=p.tight["q_a"] * 1.5),
        "V's soundness tail": replace(p, v_threshold=theta + (s - theta) * 0.02),
        "V's completeness tail": _with_tight(p, v_c=float(worst_c.lhs) * (1 - 1e-6)),
        "A's samples": replace(p, a_samples=p.a_samples - 1),
        "B's samples": replace(p, b_samples=p.b_samples - 1),
        "theta_V < s": replace(p, v_threshold=s),
    }
    for prefix, nudged in nudges.items():
        failing = _failing(nudged)
        assert failing and all(name.startswith(prefix) for name in failing), (prefix, failing)


@pytest.mark.slow
def test_fewer_v_samples_break_a_tail() -> None:
    p = _tight(1.0, 10)
    failing = _failing(replace(p, v_samples=p.v_samples - 60))
    assert failing and all(name.startswith("V's") for name in failing)


@pytest.mark.parametrize(
    ("args", "message"),
    [({"k": 1000.0}, "completeness fails for every V"),
     ({"k": 20.0, "max_prover_samples": 10**6}, "lower K"),
     ({"max_prover_samples": 1000}, "raise the cap"),
     ({"steps": 0}, "steps T must be a positive integer"),
     ({"w": 0.5, "d": 0.6}, "need 0 < d < w <= 1")],
)  # fmt: skip
def test_impossible_targets_are_refused_with_the_reason(
    args: dict[str, float], message: str
) -> None:
    kwargs: dict[str, object] = {"k": 1.0, "steps": 10, **args}
    k, steps = kwargs.pop("k"), kwargs.pop("steps")
    with pytest.raises(ProtocolError, match=message):
        optimize_tight(k, steps, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "extra",
    [["--k", "1000"], ["--steps", "0"], ["--max-prover-samples", "1000"],
     ["--out", "x.json"], ["--prover-weight", "1e-5"]],
)  # fmt: skip
def test_the_cli_refuses_impossible_targets_with_exit_2_and_one_line(extra: list[str]) -> None:
    args = ["params", "optimize", "--k", "1", "--steps", "10", "--tail", "tight", *extra]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.output.strip().startswith("error:")


@pytest.mark.slow
def test_the_cli_json_carries_the_backing_and_every_condition() -> None:
    res = runner.invoke(app, ["params", "optimize", "--k", "1", "-T", "10", "--tail", "tight",
                              "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    assert record["backed_by"] == TIER_BACKING["tight"]
    assert "not machine-checked" in record["backed_by"]
    assert record["v_samples"] == _tight(1.0, 10).v_samples
    assert len(record["conditions"]) == 21 and all(x["holds"] for x in record["conditions"])


@pytest.mark.slow
def test_the_preset_resolves_and_a_tight_set_runs_a_debate() -> None:
    assert resolve_params("optimized-tight", 1.0, 10) == _tight(1.0, 10)
    res = runner.invoke(app, ["debate", "stochastic", "-m", "single-query:p=0.8",
                              "--params", "optimized-tight", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["winner"] == "A"
