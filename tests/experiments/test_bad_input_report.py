"""The stochastic report refuses bad arguments and README files before measuring anything."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from proofgames.errors import ProofgamesError
from proofgames.experiments import stochastic_report as report
from proofgames.reporting import readme as readme_module


@pytest.fixture
def no_measuring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any measurement fails the test: refusals must come before them."""

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the report started measuring before refusing")

    for name in ("guarantees", "oracle_k_versus_step_k", "deterministic_steps", "costs",
                 "looseness"):  # fmt: skip
        monkeypatch.setattr(report, name, boom)


def _refusal(tmp_path: Path, **kwargs: Any) -> str:
    args: dict[str, Any] = {"out": tmp_path / "out", "debates": 100, "seed": 0, **kwargs}
    start = time.perf_counter()
    with pytest.raises(ProofgamesError) as info:
        report.write_report(**args)
    assert time.perf_counter() - start < 1.0
    assert not (tmp_path / "out").exists()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_readme_is_refused_naming_file_and_block(
    tmp_path: Path, no_measuring: None
) -> None:
    readme = tmp_path / "README.md"
    message = _refusal(tmp_path, readme=readme)
    assert message == f"{readme} does not exist (it should hold the 'report:stochastic' block)"


def test_readme_without_markers_is_refused_naming_the_marker(
    tmp_path: Path, no_measuring: None
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# title\n<!-- report:stochastic:start -->\n")
    message = _refusal(tmp_path, readme=readme)
    assert str(readme) in message and "'<!-- report:stochastic:end -->' marker" in message
    readme.write_text("<!-- report:stochastic:end -->\n<!-- report:stochastic:start -->\n")
    assert "comes before" in _refusal(tmp_path, readme=readme)
    readme.write_bytes(b"\xff\xfe")
    assert "not UTF-8" in _refusal(tmp_path, readme=readme)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"seed": -1}, "seed must be a non-negative integer, got -1"),
        ({"seed": 1.5}, "seed must be a non-negative integer, got 1.5"),
        ({"debates": 0}, "debates must be a positive integer, got 0"),
        ({"debates": True}, "debates must be a positive integer, got True"),
    ],
)
def test_bad_seed_or_debates_is_refused(
    tmp_path: Path, no_measuring: None, kwargs: dict[str, Any], expected: str
) -> None:
    assert _refusal(tmp_path, **kwargs) == expected


def test_out_that_is_a_file_is_refused(tmp_path: Path, no_measuring: None) -> None:
    out = tmp_path / "taken"
    out.write_text("x")
    with pytest.raises(ProofgamesError, match="exists and is not a folder"):
        report.write_report(out, debates=100)


def test_report_and_readme_are_written_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("guarantees", "oracle_k_versus_step_k"):
        monkeypatch.setattr(report, name, lambda *a, **k: [])
    monkeypatch.setattr(report, "deterministic_steps", lambda *a, **k: [])
    monkeypatch.setattr(report, "costs", lambda *a, **k: ([], []))
    monkeypatch.setattr(report, "looseness", lambda *a, **k: ([], tmp_path / "l.png"))
    monkeypatch.setattr(report, "summary_markdown", lambda *a: "| table |\n")
    monkeypatch.setattr(report, "report_markdown", lambda *a: "# report in {secs} s\n")
    written: list[Path] = []
    real = report.write_atomic

    def spy(path: Path, data: Any) -> Path:
        written.append(Path(path))
        return real(path, data)

    monkeypatch.setattr(report, "write_atomic", spy)
    monkeypatch.setattr(readme_module, "write_atomic", spy)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- report:stochastic:start -->\nold\n<!-- report:stochastic:end -->\n")
    os.chmod(readme, 0o640)
    path = report.write_report(tmp_path / "out", debates=10, readme=readme)
    assert path.read_text() == "# report in 0 s\n"
    assert readme.read_text() == (
        "a\n<!-- report:stochastic:start -->\n| table |\n<!-- report:stochastic:end -->\n"
    )
    assert written == [path, readme]
    assert stat.S_IMODE(readme.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "out"]
