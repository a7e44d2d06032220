"""Size limits given on the command line reach the code that enforces them.

``--max-steps`` (Turing and stochastic machines) and ``--max-sat-work`` (SAT search) raise or lower
the library's default limits; a protocol that does not use one refuses it; an isolated
prover rebuilds the instance under the same limit; a bad ``--params`` file is refused
before the machine's every-step K is computed; Monte Carlo results are written whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proofgames import ProofgamesError
from proofgames.cli import app
from proofgames.experiments.montecarlo import estimate_acceptance, write_results
from proofgames.harness import play, resolve_instance
from proofgames.stochastic import hypothesis
from proofgames.stochastic import machines as machines_module
from proofgames.stochastic.machines import make_stochastic_machine

runner = CliRunner()
MAX_STEPS = 40  # the default limit, lowered for these tests (building 10^5 steps is slow)
BIG = f"copy-chain:t={MAX_STEPS + 1},p=0.9"  # one step over the default limit


@pytest.fixture(autouse=True)
def _small_default_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machines_module, "MAX_STEPS", MAX_STEPS)


def exit_code_and_output(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, list(args))
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def test_max_steps_lets_the_debate_build_a_machine_over_the_default_limit() -> None:
    code, out = exit_code_and_output("debate", "stochastic", "-m", BIG, "--json")
    assert code == 2 and "--max-steps" in out
    code, out = exit_code_and_output(
        "debate", "stochastic", "-m", BIG, "--max-steps", str(MAX_STEPS + 1), "--json"
    )
    assert code == 0, out
    assert json.loads(out)["steps"] == MAX_STEPS + 1


def test_max_steps_can_lower_the_limit_below_the_default() -> None:
    code, out = exit_code_and_output(
        "debate", "stochastic", "-m", "majority:n=5,p=0.7", "--max-steps", "3"
    )
    assert code == 2 and "max_steps = 3" in out


def test_max_steps_reaches_the_machines_of_a_stochastic_witness_problem() -> None:
    spec = "panel-choice:p=0.9;0.2,votes=5"
    with pytest.raises(ProofgamesError, match="max_steps = 4"):
        resolve_instance("stochastic-witness", spec, max_steps=4)
    inst = resolve_instance("stochastic-witness", spec, max_steps=1000)
    assert inst.description["max_steps"] == 1000


def test_max_sat_work_refuses_a_search_over_it_and_names_the_option() -> None:
    code, out = exit_code_and_output("debate", "witness", "--max-sat-work", "10")
    assert code == 2 and "max_work = 10" in out and "--max-sat-work" in out
    code, out = exit_code_and_output("debate", "witness", "--max-sat-work", "10000000", "--json")
    assert code == 0, out


@pytest.mark.parametrize(
    ("protocol", "option"),
    [
        ("bisection", "--max-sat-work"),
        ("cross-examination", "--max-sat-work"),
        ("stochastic", "--max-sat-work"),
        ("witness", "--max-steps"),
    ],
)
def test_a_limit_the_protocol_does_not_use_is_refused(protocol: str, option: str) -> None:
    code, out = exit_code_and_output("debate", protocol, option, "100")
    assert code == 2
    assert f"does not take {option}" in out


@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
def test_a_turing_machines_steps_are_limited_before_anything_runs(protocol: str) -> None:
    """T over the limit is refused with the time and memory it would take; --max-steps allows it."""
    code, out = exit_code_and_output("debate", protocol, "--machine", "bb5", "--max-steps", "100")
    assert code == 2 and "T = 47,176,870 steps is over the limit of 100" in out
    assert "some 0.7 seconds" in out  # 3 x 47,176,870 steps at 2e8 steps/s
    assert "a tape of up to 94.4 MB" in out and "give --max-steps" in out
    code, out = exit_code_and_output(
        "debate", protocol, "--machine", "tm:1RB1LB_1LA1RZ", "--steps", "6", "--max-steps", "6"
    )
    assert code == 0, out


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "9"])
def test_limits_must_be_positive_integers_in_the_python_api(bad: object) -> None:
    with pytest.raises(ProofgamesError, match="must be a positive integer"):
        resolve_instance("stochastic", "majority:n=5,p=0.7", max_steps=bad)  # type: ignore[arg-type]
    with pytest.raises(ProofgamesError, match="must be a positive integer"):
        resolve_instance("witness", None, max_sat_work=bad)  # type: ignore[arg-type]


def test_an_isolated_prover_rebuilds_the_instance_under_the_same_limit() -> None:
    from proofgames.isolation.party import rebuild_instance

    inst = resolve_instance("stochastic", BIG, max_steps=MAX_STEPS + 1)
    assert rebuild_instance("stochastic", inst.description).steps == MAX_STEPS + 1
    over = inst.description | {"max_steps": MAX_STEPS}
    with pytest.raises(ProofgamesError, match="max_steps"):
        rebuild_instance("stochastic", over)
    out = play("stochastic", inst, 1, "honest", "honest", params="lean", isolation="process")
    assert out.forfeit is None, out.reason
    assert out.winner == "A"


def test_estimate_takes_max_steps_in_the_cli_and_the_api() -> None:
    code, out = exit_code_and_output("estimate", "-m", BIG, "--debates", "2")
    assert code == 2 and "--max-steps" in out
    est = estimate_acceptance(
        BIG, "lean", 1, "honest", "honest", debates=2, max_steps=MAX_STEPS + 1, workers=2
    )
    assert est.debates == 2 and est.acceptance == 1.0


def test_a_bad_params_file_is_refused_before_the_every_step_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"c": 0.2, "s": 0.1, "b": 0.3, "q": 0.01, "v": 0.01,
                               "w": 0.66, "d": 0.5}))  # fmt: skip

    def no_k(*_: object, **__: object) -> float:
        raise AssertionError("K was computed before the parameters were checked")

    monkeypatch.setattr(hypothesis, "hypothesis_lipschitz", no_k)
    machine = make_stochastic_machine("majority:n=5,p=0.7")
    with pytest.raises(ProofgamesError, match="need 0 < c < s < b"):
        hypothesis.machine_params(str(bad), machine)
    with pytest.raises(ProofgamesError, match="need 0 < c < s < b"):
        estimate_acceptance("majority:n=5,p=0.7", str(bad), 1, "honest", "honest", debates=2)


def test_monte_carlo_results_replace_old_files_whole(tmp_path: Path) -> None:
    est = estimate_acceptance("single-query:p=0.8", "lean", 1, "honest", "honest", debates=50)
    stem = tmp_path / "sweep"
    _, json_path = write_results([est], stem)
    first = json_path.read_text()
    write_results([est, est], stem)
    assert len(json.loads(json_path.read_text())) == 2 and first != json_path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.csv", "sweep.json"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ProofgamesError, match="cannot"):
        write_results([est], blocker / "sweep")
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("debates", ["99999999999999999999", str(10**12 + 1)])
def test_an_estimate_of_too_many_debates_is_one_error_line(debates: str) -> None:
    """Issue 34, defect 9: this was a MemoryError traceback."""
    code, out = exit_code_and_output("estimate", "--debates", debates)
    assert code != 0 and "over the limit" in out and "Traceback" not in out
    assert len(out.strip().splitlines()) == 1, out
