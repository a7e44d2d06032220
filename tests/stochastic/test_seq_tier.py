"""The sequential tier: every inequality of its argument re-checked exactly, a nudge past
each bound caught, V's figures against the floor, and impossible targets refused."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from functools import cache

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.stochastic.seq_tier import (
    SequentialResult,
    optimize_sequential,
    sequential_conditions,
    wald_floor,
)
from proofgames.stochastic.seqtest import SequentialTest
from proofgames.stochastic.tail_bounds import certify_tail

runner = CliRunner()
# the set optimize_sequential(0.25, 10) returns: small enough to check quickly
CONSTANTS = {"c": 0.000284, "s": 0.243256, "v_c": 0.0999, "v_s": 0.00941}
TEST = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
                      v_a=0.007057, delta=0.243256)  # fmt: skip


def _failing(test: SequentialTest) -> set[str]:
    return {c.name for c in sequential_conditions(CONSTANTS, test, []) if not c.holds}


def test_hand_set_holds() -> None:
    assert _failing(TEST) == set()


@pytest.mark.parametrize(
    ("change", "broken"),
    [
        ({"v_a": 0.00713}, "V's cap tail T1(n, s - theta) <= v_s - v_a"),
        ({"v_r": 0.066}, "V's cap tail T2(n, theta - c) <= v_c - v_r"),
        ({"theta": 0.108}, "V's cap tail T1(n, s - theta) <= v_s - v_a"),
        ({"theta": 0.09}, "V's cap tail T2(n, theta - c) <= v_c - v_r"),
        ({"v_a": 0.0095}, "v_a < v_s"),
        ({"v_r": 0.0999}, "v_r < v_c"),
    ],
)
def test_nudge_past_a_bound_fails(change: dict[str, float], broken: str) -> None:
    assert broken in _failing(replace(TEST, **change))  # type: ignore[arg-type]


def test_fewer_samples_at_the_cap_fail() -> None:
    assert _failing(replace(TEST, n=95))


@cache
def _result(k: float) -> SequentialResult:
    return optimize_sequential(k, 10)


def _recheck(r: SequentialResult) -> None:
    """The argument's inequalities, recomputed from the set's floats as Fractions."""
    p = r.tight
    assert p.tight is not None
    f = {key: Fraction(v) for key, v in p.tight.items()}
    t = r.test
    theta, n, v_r, v_a = Fraction(t.theta), t.n, Fraction(t.v_r), Fraction(t.v_a)
    assert f["c"] < theta < f["s"] and 0 < v_r < f["v_c"] and 0 < v_a < f["v_s"]
    t2 = certify_tail(n, theta - f["c"], f["v_c"] - v_r, two_sided=True)
    t1 = certify_tail(n, f["s"] - theta, f["v_s"] - v_a, two_sided=False)
    assert t2.ok and v_r + t2.worst <= f["v_c"]  # completeness error of V
    assert t1.ok and v_a + t1.worst <= f["v_s"]  # soundness error of V
    k, steps, w, d = Fraction(p.k), p.steps, f["w"], f["d"]
    assert d <= (1 - f["v_c"]) * (w - k * f["c"] - f["q_a"] * steps)
    assert d <= (1 - f["v_s"]) * (1 - f["q_b"] * steps) * (w - k * f["b"])
    assert all(c.holds for c in r.conditions)
    names = {c.name for c in r.conditions}
    assert {"A's samples >= Hoeffding(c, q_a)", "c < theta", "v_a < v_s"} <= names


@pytest.mark.slow
def test_small_k_set_every_inequality_exact() -> None:
    r = _result(0.25)
    _recheck(r)
    assert r.test == TEST  # the hand-built set above is this one
    assert r.floor <= r.honest.expected < r.tight.v_samples < r.test.n
    assert r.test.n <= r.max_v_queries
    assert r.honest_worst.expected >= r.honest.expected
    assert r.liar_worst.reject > 0.99
    json.dumps(r.to_dict(), allow_nan=False)


@pytest.mark.slow
def test_k1_set() -> None:
    r = _result(1.0)
    _recheck(r)
    assert r.honest.expected < r.tight.v_samples <= 1200
    assert r.floor <= r.honest.expected


def test_wald_floor() -> None:
    floor = wald_floor(0.5, 0.2, 0.1, 0.01)
    assert 30 < floor < 60  # kl(0.9, 0.01) / KL(0.5, 0.7) = 3.90 / 0.0872
    assert wald_floor(0.5, 0.1, 0.1, 0.01) > floor  # a narrower gap costs more
    with pytest.raises(ProtocolError):
        wald_floor(0.5, 0.6, 0.1, 0.01)


@pytest.mark.slow
def test_cap_below_the_tight_tier_refused() -> None:
    n = _result(0.25).tight.v_samples
    with pytest.raises(ProtocolError, match="too small"):
        optimize_sequential(0.25, 10, max_v_queries=n, tight=_result(0.25).tight)
    with pytest.raises(ProtocolError, match="not the tight tier's"):
        optimize_sequential(0.5, 10, tight=_result(0.25).tight)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--k", "0.25", "-T", "0"], "positive integer"),
        (["--k", "1000", "-T", "10"], "completeness fails for every V"),
        (["--k", "0.25", "-T", "10", "--max-v-queries", "10"], "too small"),
        (["--k", "0.25", "-T", "10", "--out", "x.json"], "not available"),
    ],
)
def test_cli_refuses(args: list[str], reason: str) -> None:
    res = runner.invoke(app, ["params", "optimize", "--tail", "sequential", *args])
    assert res.exit_code == 2
    assert reason in res.output and "Traceback" not in res.output


def test_cli_max_v_queries_needs_sequential() -> None:
    res = runner.invoke(app, ["params", "optimize", "--k", "1", "-T", "3", "--max-v-queries", "9"])
    assert res.exit_code == 2 and "needs --tail sequential" in res.output


@pytest.mark.slow
def test_cli_json() -> None:
    res = runner.invoke(app, ["params", "optimize", "--k", "0.25", "-T", "10", "--tail",
                              "sequential", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    assert record["v_worst_case"] == TEST.n and record["tail"] == "sequential"
    assert "not machine-checked" in record["backed_by"]
    assert all(c["holds"] for c in record["conditions"])
