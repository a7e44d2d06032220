"""The parameter report: its pieces, and its refusals before any computation."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError
from proofgames.experiments.params_report import (
    BACKING,
    _headline_markdown,
    _Sets,
    headline,
    measured_rows,
    report_keys,
    summary_line,
    write_params_report,
)
from proofgames.stochastic.hypothesis import hypothesis_lipschitz
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.stochastic.tails import TIER_BACKING


def test_the_padded_query_has_k_one_over_every_step_at_any_t() -> None:
    m = make_stochastic_machine("padded-query:t=10,p=0.67")
    assert m.name == "padded-query:t=10,p=0.67"
    assert m.length == 10 and m.p_accept == pytest.approx(0.67)
    assert hypothesis_lipschitz(m) == pytest.approx(1.0)


@pytest.mark.slow
def test_the_headline_labels_every_tier_for_its_backing_and_shows_the_non_monotone_tail() -> None:
    h = headline(_Sets())
    names = ("lean", "optimized", "optimized-exact", "optimized-tight")
    lean, opt, exact, tight = (h["sets"][n].v_samples for n in names)
    assert tight < exact < opt < lean
    tail = h["tail"]
    assert tail.smallest <= tail.n0 == exact <= tail.hoeffding
    line = summary_line(h)
    assert "debate needs" not in line and line.count("uses at most") == 1
    assert line.count("at most") == 3 and "not what the problem needs" in line
    for count in (opt, exact, tight):
        assert f"at most {count:,}" in line
    # the machine-checked claim is made once, for the Hoeffding tier only
    assert line.count("not machine-checked") == 2 and line.count("machine-checked") == 3
    assert line.index("machine-checked") < line.index(f"{exact:,}")
    rows = _headline_markdown(h)[2]
    for name in names:
        row = next(r for r in rows.splitlines() if r.startswith(f"| {name} |"))
        assert row.rstrip(" |").endswith(BACKING[name])


def test_every_tier_is_labelled_no_higher_than_its_backing() -> None:
    assert "not machine-checked" not in TIER_BACKING["hoeffding"]
    assert TIER_BACKING["hoeffding"].startswith("machine-checked")
    assert "not machine-checked" in TIER_BACKING["exact"] and "exact" in TIER_BACKING["exact"]
    assert "not machine-checked" in TIER_BACKING["tight"]
    assert "written proof" in TIER_BACKING["tight"]
    assert "checked numerically" in TIER_BACKING["tight"]
    assert BACKING["optimized"] == BACKING["lean"] == TIER_BACKING["hoeffding"]
    assert BACKING["optimized-exact"] == TIER_BACKING["exact"]
    assert BACKING["optimized-tight"] == TIER_BACKING["tight"]
    assert "not machine-checked" in BACKING["paper"]


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


def test_only_an_exact_tier_count_above_its_scan_limit_is_marked_hoeffding() -> None:
    from dataclasses import replace

    from proofgames.experiments.params_report import _v_label
    from proofgames.stochastic.params import lean_params
    from proofgames.stochastic.tails import EXACT_LABEL
    from proofgames.stochastic.tight import V_TAIL_LABEL

    p = lean_params(1.0, 10)
    fell_back = "hoeffding (count above the exact-tail scan limit)"
    tiers = (None, {"V": EXACT_LABEL}, {"V": V_TAIL_LABEL}, {"V": fell_back})
    marks = [_v_label(replace(p, tails=tails)).endswith(" (H)") for tails in tiers]
    assert marks == [False, False, False, True]
