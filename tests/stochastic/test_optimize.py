"""Optimized stochastic-debate parameters: validated exactly, usable wherever --params is.

The Lean ``Params`` conditions are re-checked here in exact rational arithmetic,
independently of the validator, and the certified sample counts against 60-digit logs.
"""

from __future__ import annotations

import json
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.errors import ProtocolError
from proofgames.stochastic.optimize import DEFAULT_MAX_PROVER_SAMPLES, optimize_params
from proofgames.stochastic.params import (
    check_params_spec,
    lean_params,
    load_params_file,
    resolve_params,
)
from proofgames.stochastic.tails import EXACT_LABEL, TIER_BACKING, passes

runner = CliRunner()
GOOD = {"c": 3e-4, "s": 0.05994, "b": 0.06054, "q": 1e-6, "v": 0.01, "w": 2 / 3, "d": 0.6}
LEAN_V_AT_K1 = lean_params(1.0, 10).v_samples  # 105,967


def _dec(x: Fraction) -> Decimal:
    return Decimal(x.numerator) / Decimal(x.denominator)


def _check_exactly(p: dict[str, float], k: float, t: int) -> None:
    """Every Lean condition, in fractions, and each certified count against 60-digit logs."""
    c, s, b, q, v, w, d = (Fraction(p[x]) for x in ("c", "s", "b", "q", "v", "w", "d"))
    kf = Fraction(k)
    assert 0 < c < s < b and 0 < q <= v <= 1 and kf * b <= w <= 1 and d > 0
    assert d <= (1 - v) * (w - kf * c - q * t)
    assert d <= (1 - v) * (1 - q * t) * (w - kf * b)
    getcontext().prec = 60
    for party, e, fail in (("A", c, q), ("B", (b - s) / 2, q), ("V", (s - c) / 2, v)):
        n = int(p[f"{party.lower()}_samples"])
        if p["tails"][party] == EXACT_LABEL:
            assert passes(n, e, fail) and not passes(n - 1, e, fail)
        else:
            assert 2 * _dec(e) ** 2 * n >= _dec(2 / fail).ln()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"c": 0.07}, "need 0 < c < s < b"), ({"s": 0.07}, "need 0 < c < s < b"),
     ({"q": 1.5}, "need 0 < q <= 1"), ({"v": 0.0}, "need 0 < v <= 1"),
     ({"q": 0.02}, "need q <= v"), ({"w": 1.5}, "need w <= 1"), ({"d": 0.0}, "need d > 0"),
     ({"b": 0.7, "s": 0.06, "w": 0.69}, "need K b <= w"),
     ({"c": 0.05, "s": 0.0501, "b": 0.0502, "q": 0.01, "d": 0.53},
      "completeness condition fails"),
     ({"b": 0.0607}, "soundness condition fails")],
)  # fmt: skip
def test_the_validator_rejects_each_violated_condition_separately(
    kwargs: dict[str, float], message: str
) -> None:
    lean_params(1.0, 10, **GOOD)  # the base set passes
    with pytest.raises(ProtocolError, match=message):
        lean_params(1.0, 10, **{**GOOD, **kwargs})


def test_the_validator_decides_in_exact_arithmetic_where_floats_would_not() -> None:
    b = 0.06059999993939333  # (1-v)(1-qT)(w-Kb) >= d in floats, < d exactly
    values = {**GOOD, "b": b, "q": 1e-6}
    v, q, w, d = 0.01, 1e-6, 2 / 3, 0.6
    assert d <= (1 - v) * (1 - q * 10) * (w - b)
    with pytest.raises(ProtocolError, match="soundness condition fails"):
        lean_params(1.0, 10, **values)


@pytest.mark.parametrize(
    ("k", "t", "tail", "extra"),
    [(1.0, 10, "hoeffding", {}), (1.0, 10, "exact", {}), (2.0, 1000, "hoeffding", {}),
     (1.0, 10**6, "hoeffding", {"w": 0.8, "d": 0.7}), (3.0, 10, "hoeffding",
     {"max_prover_samples": 10**6}), (1.0, 10, "hoeffding", {"prover_weight": 1e-6})],
)  # fmt: skip
def test_optimized_sets_pass_the_lean_conditions_in_exact_arithmetic(
    k: float, t: int, tail: str, extra: dict[str, float]
) -> None:
    result = optimize_params(k, t, tail=tail, **extra)  # type: ignore[arg-type]
    record = result.to_dict()
    _check_exactly(record, k, t)
    cap = extra.get("max_prover_samples", DEFAULT_MAX_PROVER_SAMPLES)
    assert max(record["a_samples"], record["b_samples"]) <= cap
    assert record["tail"] == tail and record["certified_by"]
    again = lean_params(k, t, name="custom", **result.params_file())
    assert again.v_samples == record["v_samples"]


def test_goal_at_k1_t10_both_tiers() -> None:
    hoeffding = optimize_params(1.0, 10).params
    exact = optimize_params(1.0, 10, tail="exact").params
    assert hoeffding.v_samples <= 3000 and hoeffding.v_samples * 35 <= LEAN_V_AT_K1
    assert exact.v_samples <= 2000 and exact.v_samples * 50 <= LEAN_V_AT_K1
    assert exact.tails is not None and exact.tails["V"] == EXACT_LABEL
    assert hoeffding.tails is None  # every count is the Lean theorem's


def test_a_larger_prover_budget_never_costs_v_more_queries() -> None:
    counts = [optimize_params(1.0, 10, max_prover_samples=cap).params.v_samples
              for cap in (10**5, 10**6, 10**7, 10**8)]  # fmt: skip
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]


def test_a_prover_weight_trades_v_queries_for_prover_samples() -> None:
    v_only = optimize_params(1.0, 10).params
    weighted = optimize_params(1.0, 10, prover_weight=1e-5).params
    assert weighted.a_samples + weighted.b_samples < v_only.a_samples + v_only.b_samples
    assert weighted.v_samples >= v_only.v_samples


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"w": 0.5, "d": 0.6}, "need 0 < d < w <= 1"), ({"max_prover_samples": 0}, "1..2"),
     ({"tail": "chernoff"}, "tail must be"), ({"prover_weight": -1.0}, "must be positive"),
     ({"max_prover_samples": 10}, "no parameter set meets")],
)  # fmt: skip
def test_the_optimizer_refuses_bad_input_by_name(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        optimize_params(1.0, 10, **kwargs)  # type: ignore[arg-type]


def test_presets_resolve_for_the_machines_k_and_t() -> None:
    p = resolve_params("optimized", 1.0, 10)
    assert p.name == "optimized" and p.v_samples <= 3000
    strict = resolve_params("optimized-exact:strict", 1.0, 10)
    assert strict.strict_deterministic and strict.tails is not None
    check_params_spec("optimized")
    check_params_spec("optimized-exact:strict")


def test_params_files_carry_the_tail_and_old_files_still_work(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps(GOOD))
    assert load_params_file(old)[1] == "hoeffding"
    assert resolve_params(str(old), 1.0, 10).tails is None
    exact = tmp_path / "exact.json"
    exact.write_text(json.dumps({**GOOD, "tail": "exact"}))
    p = resolve_params(str(exact), 1.0, 10)
    assert p.tails is not None and p.tails["V"] == EXACT_LABEL
    assert p.v_samples < resolve_params(str(old), 1.0, 10).v_samples
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**GOOD, "tail": "guess"}))
    with pytest.raises(ProtocolError, match="tail must be one of"):
        check_params_spec(str(bad))


def test_cli_optimize_prints_strict_json_with_the_documented_keys(tmp_path: Path) -> None:
    out = tmp_path / "opt.json"
    res = runner.invoke(app, ["params", "optimize", "--k", "1", "--steps", "10", "--tail",
                              "exact", "--json", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    for key in ("w", "d", "k", "t", "c", "s", "b", "q", "v", "a_samples", "b_samples",
                "v_samples", "tail", "certified_by"):  # fmt: skip
        assert key in record
    assert "not machine-checked" in json.dumps(record["tails"])
    assert load_params_file(out)[1] == "exact"
    text = runner.invoke(app, ["params", "optimize", "--k", "1", "--steps", "10", "--tail",
                               "exact"]).output  # fmt: skip
    assert "exact binomial tail, not machine-checked" in " ".join(text.split())


def test_an_optimized_set_runs_through_debate_stochastic_and_estimate(tmp_path: Path) -> None:
    out = tmp_path / "opt.json"
    made = runner.invoke(app, ["params", "optimize", "--k", "1", "--steps", "1", "--out",
                               str(out)])  # fmt: skip
    assert made.exit_code == 0, made.output
    for params in (str(out), "optimized", "optimized-exact"):
        res = runner.invoke(app, ["debate", "stochastic", "-m", "single-query:p=0.8",
                                  "--params", params, "--json"])  # fmt: skip
        assert res.exit_code == 0, res.output
        debate = json.loads(res.stdout)
        assert debate["winner"] == "A" and debate["verifier_queries"] <= 3000
        res = runner.invoke(app, ["estimate", "-m", "single-query:p=0.2", "--claim", "1",
                                  "--params", params, "--debates", "300", "--json"])  # fmt: skip
        assert res.exit_code == 0, res.output
        est = json.loads(res.stdout)
        assert est["ci_low"] <= 0.4 and est["hypothesis"] == "holds"


@pytest.mark.parametrize(
    "args",
    [["--k", "-1", "--steps", "10"], ["--k", "1", "--steps", "0"],
     ["--k", "1", "--steps", "10", "--tail", "x"], ["--k", "1", "--steps", "10", "--gap", "2"],
     ["--k", "1", "--steps", "10", "--max-prover-samples", "3"]],
)  # fmt: skip
def test_cli_optimize_refuses_bad_input_with_exit_2(args: list[str]) -> None:
    res = runner.invoke(app, ["params", "optimize", *args])
    assert res.exit_code == 2
    assert "error" in res.output.lower()


def test_every_params_option_has_help() -> None:
    import typer.main

    root = typer.main.get_command(app)
    group = root.get_command(typer.Context(root), "params")  # type: ignore[attr-defined]
    for name, sub in group.commands.items():
        for param in sub.params:
            assert getattr(param, "help", None), (name, param.name)


@pytest.mark.parametrize("tail", ["hoeffding", "exact"])
def test_cli_optimize_labels_each_tier_for_what_backs_it(tail: str) -> None:
    args = ["params", "optimize", "--k", "1", "--steps", "3", "--tail", tail]
    record = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert record["backed_by"] == TIER_BACKING[tail]
    assert ("not machine-checked" in record["backed_by"]) == (tail != "hoeffding")
    text = " ".join(runner.invoke(app, args).output.split())
    assert f"backed by │ {TIER_BACKING[tail][:40]}" in text
