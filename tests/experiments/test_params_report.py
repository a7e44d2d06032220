"""The parameter report: its pieces, and its refusals before any computation."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError
from proofgames.experiments.params_report import (
    _Sets,
    headline,
    measured_rows,
    report_keys,
    summary_line,
    write_params_report,
)
from proofgames.stochastic.hypothesis import hypothesis_lipschitz
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.stochastic.tails import EXACT_LABEL


def test_the_padded_query_has_k_one_over_every_step_at_any_t() -> None:
    m = make_stochastic_machine("padded-query:t=10,p=0.67")
    assert m.name == "padded-query:t=10,p=0.67"
    assert m.length == 10 and m.p_accept == pytest.approx(0.67)
    assert hypothesis_lipschitz(m) == pytest.approx(1.0)


def test_the_headline_labels_both_tiers_and_shows_the_non_monotone_tail() -> None:
    h = headline(_Sets())
    lean, opt, exact = (h["sets"][n].v_samples for n in ("lean", "optimized", "optimized-exact"))
    assert exact < opt < lean
    tail = h["tail"]
    assert tail.smallest <= tail.n0 == exact <= tail.hoeffding
    line = summary_line(h)
    assert EXACT_LABEL in line and "machine-checked" in line and f"{exact:,}" in line


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"debates": 0}, "debates must be a positive integer"),
     ({"seed": -1}, "seed must be a non-negative integer")],
)  # fmt: skip
def test_the_report_refuses_bad_arguments(
    tmp_path: Path, kwargs: dict[str, int], message: str
) -> None:
    with pytest.raises(ProofgamesError, match=message):
        write_params_report(tmp_path / "r", **kwargs)


def test_the_report_refuses_a_file_as_its_folder_and_a_readme_without_markers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(ProofgamesError, match="not a folder"):
        write_params_report(path)
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    with pytest.raises(ProofgamesError, match="report:params"):
        write_params_report(tmp_path / "r", readme=readme)
    assert not (tmp_path / "r").exists()  # refused before any work


@pytest.mark.slow
def test_the_optimizations_and_debates_fan_out_to_the_same_numbers() -> None:
    """A pool of 2 processes gives the report's optimized sets and measured rows exactly as
    this process does; the progress callback sees every unit of each stage."""
    from proofgames.sweeps.executors import make_executor

    keys = [k for k in report_keys() if k[1] <= 2.0 and k[2] <= 1000][:6]
    here, there = _Sets(), _Sets()
    here.prefetch(keys)
    seen: list[int] = []
    with make_executor("local", 2) as pool:
        there.prefetch(keys, pool, seen.append)
        rows_there = measured_rows(there, 2000, 3, pool)
    assert sum(seen) == len(keys) == len(set(keys))
    assert {k: there.cache[k] for k in keys} == {k: here.cache[k] for k in keys}
    assert measured_rows(here, 2000, 3) == rows_there
    assert {r["machine"] for r in rows_there} >= {"padded-query:t=10,p=0.67"}
