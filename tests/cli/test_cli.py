from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from proofgames.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_debate_json_has_the_documented_fields():
    res = run("debate", "bisection", "--machine", "bb4", "--claim", "0", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    for key in (
        "protocol",
        "claim",
        "verdict",
        "winner",
        "steps",
        "rounds",
        "verifier_reads",
        "verifier_read_unit",
        "verifier_queries",
        "prover_steps",
        "seconds",
    ):
        assert key in out
    assert out["winner"] == "B" and out["verdict"] == 0 and out["steps"] == 107
    assert set(out["prover_steps"]) == {"A", "B"}


def test_default_players_follow_the_truth_of_the_claim():
    true = json.loads(
        run(
            "debate",
            "cross-examination",
            "-m",
            "tm:1RB1LB_1LA1RZ",
            "-T",
            "6",
            "--claim",
            "1",
            "--json",
        ).stdout
    )
    assert true["prover_a"]["name"] == "honest" and true["winner"] == "A"
    false = json.loads(
        run(
            "debate",
            "cross-examination",
            "-m",
            "tm:1RB1LB_1LA1RZ",
            "-T",
            "6",
            "--claim",
            "0",
            "--json",
        ).stdout
    )
    assert false["prover_a"]["name"] != "honest" and false["winner"] == "B"


def test_bad_input_gives_a_clear_error_and_exit_code_2():
    res = run("debate", "bisection", "-m", "tm:1RB1LB_1LA1RQ", "-T", "5")
    assert res.exit_code == 2 and "undefined state 'Q'" in res.output
    res = run("debate", "bisection", "-m", "bb4", "--steps", "0")
    assert res.exit_code == 2 and "--steps" in res.output
    res = run("debate", "juggling", "-m", "bb4")
    assert res.exit_code == 2 and "unknown protocol" in res.output
    res = run("debate", "bisection", "-m", "tm:1RB1LB_1LA1RZ")
    assert res.exit_code == 2 and "--steps" in res.output


def test_table_output_names_the_winner():
    res = run("debate", "bisection", "-m", "bb3", "--prover-b", "first")
    assert res.exit_code == 0
    assert "winner" in res.stdout and "first" in res.stdout


def test_strategies_and_examples_are_listed():
    assert "flip-step" in run("strategies", "bisection").stdout
    assert "bb5" in run("examples").stdout


def test_exhaustive_search_reports_exact_completeness_and_soundness():
    res = run("exhaustive", "bisection", "-m", "bb2", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["completeness"], out["soundness"], out["truth"]) == (1.0, 0.0, 1)
    res = run("exhaustive", "bisection", "-m", "bb4")
    assert res.exit_code == 2 and "configurations" in res.output


def test_oracle_machine_and_witness_debates_run_from_the_cli():
    out = json.loads(run("debate", "bisection", "-m", "screening", "--json").stdout)
    assert out["winner"] == "A" and out["prover_queries"]["A"] > 0
    out = json.loads(
        run(
            "debate", "cross-examination", "-m", "screening-strict", "--claim", "1", "--json"
        ).stdout
    )
    assert out["winner"] == "B" and out["truth"] == 0
    out = json.loads(run("debate", "witness", "-m", "sat-php-3-2", "--json").stdout)
    assert out["winner"] == "B" and out["prover_a"]["name"] == "flip-step"
    out = json.loads(run("debate", "witness", "-m", "sat-small", "--json").stdout)
    assert out["winner"] == "A" and out["verdict"] == 1


def test_stochastic_debate_json():
    res = run("debate", "stochastic", "-m", "majority:n=3,p=0.8", "--params", "lean", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["protocol"] == "stochastic" and out["claim"] == 1
    assert out["details"]["params"]["name"] == "lean" and out["winner"] in ("A", "B")
    assert out["prover_queries"]["A"] > 0


def test_estimate_json_reports_acceptance_interval_and_queries():
    res = run(
        "estimate",
        "-m",
        "single-query:p=0.2",
        "--params",
        "paper",
        "--prover-a",
        "evade",
        "--debates",
        "3000",
        "--json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    for key in ("acceptance", "ci_low", "ci_high", "debates", "queries", "params"):
        assert key in out
    assert set(out["queries"]) == {"A", "B", "V"}
    assert out["ci_low"] <= out["acceptance"] <= out["ci_high"] < 0.4
    assert out["debates"] == 3000


def test_stochastic_bad_input_is_a_clear_error():
    res = run("estimate", "-m", "single-query:p=1.5")
    assert res.exit_code != 0 and "p" in res.output
    res = run("estimate", "-m", "nonexistent-machine")
    assert res.exit_code != 0 and "nonexistent-machine" in res.output
    res = run("estimate", "--debates", "0")
    assert res.exit_code == 2


@pytest.mark.slow
def test_report_writes_figures_and_never_shows_a_proven_bound_broken(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- report:stochastic:start -->\n<!-- report:stochastic:end -->\n")
    out = tmp_path / "reports" / "stochastic"
    res = run("report", "--out", str(out), "--debates", "300", "--readme", str(readme))
    assert res.exit_code == 0, res.output
    # the summary links the full report from the README's folder, and not from inside it
    assert "[full report](reports/stochastic/report.md)" in readme.read_text()
    text = (out / "report.md").read_text()
    assert "[full report]" not in text
    assert "Completeness and soundness" in text and "looseness.png" in text
    assert (out / "looseness.png").stat().st_size > 1000
    assert (out / "costs_vs_T.png").exists() and (out / "costs_vs_K.png").exists()
    # honest labels: exact values, bounds only where the hypothesis holds, each with its
    # backing (issue 39: the paper's constants are not machine-checked)
    assert "optimal adversary (exact)" in text and "proven bound" not in text
    assert "the Lean theorem (machine-checked)" in text
    assert "the paper's proof (written; not machine-checked)" in text
    section = text.split("### Which K the proofs need")[1].split("### Deterministic")[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ")][1:]
    verdicts = {(r[-2], r[-1].rstrip(" |")) for r in rows}
    assert ("holds", "**NO**") not in verdicts  # the exact liar never beats a proven bound
    assert ("fails", "**NO**") in verdicts  # ... but does beat the oracle-only K's formula


def test_stochastic_witness_debate_from_the_cli():
    out = json.loads(
        run(
            "debate",
            "stochastic-witness",
            "-m",
            "panel-choice:p=0.2;0.9;0.4",
            "--params",
            "lean",
            "--json",
        ).stdout
    )
    assert out["details"]["witness"] == "01" and out["claim"] == 1
    res = run("debate", "stochastic-witness", "-m", "bb5")
    assert res.exit_code == 2 and "panel-choice" in res.output


def test_every_protocol_prints_the_same_json_contract():
    """One --json shape for every registered protocol (protocol facts go under details)."""
    from proofgames.protocols import protocol_names

    keys = {}
    for protocol in protocol_names():
        res = run("debate", protocol, "--json")
        assert res.exit_code == 0, (protocol, res.output)
        out = json.loads(res.stdout)
        assert out["protocol"] == protocol and out["winner"] in ("A", "B")
        assert out["verdict"] == int(out["winner"] == "A")
        keys[protocol] = set(out)
    first = next(iter(keys.values()))
    assert all(k == first for k in keys.values()), keys
    for key in ("claim", "verdict", "winner", "reason", "steps", "rounds", "verifier_reads",
                "verifier_read_unit", "verifier_bits", "verifier_queries", "prover_steps",
                "prover_queries", "seconds", "prover_a", "prover_b", "seed", "messages",
                "forfeit", "isolation", "details", "truth", "p_accept"):  # fmt: skip
        assert key in first


def test_options_a_protocol_does_not_take_are_refused_not_ignored():
    res = run("debate", "bisection", "-m", "bb3", "--params", "lean")
    assert res.exit_code == 2 and "--params applies to the stochastic protocols" in res.output
    res = run("debate", "stochastic", "--steps", "5")
    assert res.exit_code == 2 and "does not take --steps" in res.output
    res = run("debate", "stochastic-witness", "--claim", "0")
    assert res.exit_code == 2 and "claim" in res.output


@pytest.mark.slow
def test_a_program_plays_from_the_cli_under_process_isolation():
    import sys

    cmd = f"exec:{sys.executable} examples/standalone_bisection_prover.py"
    res = run("debate", "bisection", "-m", "bb3", "--isolation", "process", "--prover-a", cmd,
              "--prover-b", "honest", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["winner"] == "A" and out["isolation"] == "process"
    assert out["prover_a"]["name"] == "program:standalone_bisection_prover.py"
    res = run("debate", "bisection", "--prover-a", cmd)
    assert res.exit_code == 2 and "needs --isolation process" in " ".join(res.output.split())
