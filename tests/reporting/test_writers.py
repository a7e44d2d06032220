"""Every report and result writer goes through proofgames.reporting: strict and atomic."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import pytest

from .test_json import strict_loads

SRC = Path(__file__).resolve().parents[2] / "src" / "proofgames"

#: Calls that write a file by themselves: ``(owner, name)``, ``""`` for any owner.
WRITING = {("", "write_text"), ("", "write_bytes"), ("", "savefig"), ("torch", "save"),
           ("json", "dump"), ("os", "open")}  # fmt: skip
#: Through :func:`proofgames.reporting.save_with`, whose functions write a temporary file.
WRAPPERS = {"save_with", "save_figure"}
#: ``(file, call)`` pairs allowed to write directly, with the reason.
ALLOWED = {
    ("sweeps/_store.py", "open"): "a store appends one line per finished item",
    ("pvg/_bookkeeping.py", "open"): "a metric log appends one line per game step",
    ("judge/db.py", "open"): "the write gate's lock file: opened to be locked, never written",
    ("isolation/_forked.py", "open"): "a forked party reopens its standard streams (fds 1, 2)",
}


def _writes(call: ast.Call) -> str | None:
    """The name of the call if it writes a file, else ``None``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        owner, name = getattr(func.value, "id", "?"), func.attr
    else:
        owner, name = None, getattr(func, "id", "")  # a function: ``write_text`` is ours
    if (owner, name) in WRITING or (owner is not None and ("", name) in WRITING):
        return name
    if name != "open" or owner == "os":  # os.open is in WRITING
        return None
    place = 1 if isinstance(func, ast.Name) else 0  # open(path, mode) or path.open(mode)
    modes = [a for a in call.args[place : place + 1]] + [
        k.value for k in call.keywords if k.arg == "mode"
    ]
    mode = modes[0] if modes else ast.Constant("r")
    if isinstance(mode, ast.Constant) and not set(str(mode.value)) & set("wax+"):
        return None
    return name


def _direct_writes(path: Path, root: Path = SRC) -> list[str]:
    tree = ast.parse(path.read_text())
    wrapped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in WRAPPERS:
            wrapped.update(id(inner) for arg in node.args for inner in ast.walk(arg))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in wrapped:
            name = _writes(node)
            if name is not None:
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {name}")
    return found


def test_no_module_writes_a_file_but_through_reporting() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "reporting":
            continue
        found += [f for f in _direct_writes(path)
                  if (f.split(":")[0], f.rsplit(" ", 1)[1]) not in ALLOWED]  # fmt: skip
    assert not found, "write these through proofgames.reporting:\n" + "\n".join(found)


def test_the_guard_sees_direct_writes(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text(
        "import json, torch\n"
        "def f(p, fig, obj):\n"
        "    p.write_text('x'); fig.savefig(p); torch.save(obj, p)\n"
        "    json.dump(obj, open(p, 'w'))\n"
        "    save_with(p, lambda t: torch.save(obj, t)); write_text(p, 'x')\n"
        "    open(p).read(); p.open().read(); p.open('a').write('x')\n"
    )
    names = [f.rsplit(" ", 1)[1] for f in _direct_writes(module, tmp_path)]
    assert sorted(names) == ["dump", "open", "open", "save", "savefig", "write_text"]


def test_the_language_report_writes_strict_json_when_a_rate_is_nan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proofgames.language import report
    from proofgames.language.experiments import summarize

    def no_solutions(path: Path) -> list[dict[str, Any]]:  # a GSM8K run with no rows
        return [{"protocol": p, **summarize([]), "labelled_correct": 0}
                for p in ("cross-examination", "whole-transcript")]  # fmt: skip

    monkeypatch.setattr(report, "_gsm8k", no_solutions)
    results = report.build_report(
        tmp_path, tmp_path / "gsm8k", n=1, steps=(10,), rates=(0.0,), figure1_n=1
    )
    assert math.isnan(results["gsm8k"][0]["accuracy"])  # the rate of an empty batch
    text = (tmp_path / "results.json").read_text()
    assert "NaN" not in text
    saved = strict_loads(text)
    assert saved["gsm8k"][0]["accuracy"] is None and saved["gsm8k"][0]["debates"] == 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_sweep_store_appends_strict_lines(tmp_path: Path) -> None:
    from proofgames.sweeps._store import ResultStore

    store = ResultStore(tmp_path / "s.jsonl", {"rate": float("inf")})
    store.add("a", {"x": float("nan")})
    store.add("b", {"x": 1.0})
    lines = [strict_loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    for line in lines[1:]:
        assert len(line.pop("sha256")) == 64
    assert lines == [
        {"format": "proofgames sweep store 2", "sweep": {"rate": None}},
        {"key": "a", "result": {"x": None}}, {"key": "b", "result": {"x": 1.0}},
    ]  # fmt: skip
    assert ResultStore(tmp_path / "s.jsonl", {"rate": float("inf")}).done == {
        "a": {"x": None}, "b": {"x": 1.0}
    }  # fmt: skip


def test_the_judge_export_is_strict_jsonl() -> None:
    pytest.importorskip("sqlalchemy")
    from proofgames.judge.export import render

    body, media = render([{"confidence": float("nan"), "prompt": "é"}], "jsonl")
    assert body.decode() == '{"confidence": null, "prompt": "é"}\n'
    assert media == "application/x-ndjson"


def test_monte_carlo_results_are_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proofgames.experiments.montecarlo import estimate_acceptance, write_results

    est = estimate_acceptance("single-query:p=0.8", "lean", 1, "honest", "honest", debates=20)
    real = type(est).to_dict

    def with_nan(self: Any) -> dict[str, Any]:
        return {**real(self), "acceptance": float("nan")}

    monkeypatch.setattr(type(est), "to_dict", with_nan)
    _, json_path = write_results([est], tmp_path / "sweep")
    assert strict_loads(json_path.read_text())[0]["acceptance"] is None


def test_pvg_metric_logs_and_reports_are_strict(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from proofgames.pvg._bookkeeping import MetricLog
    from proofgames.pvg.reproduce.report import read_results, write_report

    log = MetricLog(tmp_path / "metrics.jsonl", [{"step": 0, "loss": float("nan")}])
    log.append({"step": 1, "loss": float("-inf")})
    log.close()
    rows = [strict_loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert rows == [{"step": 0, "loss": None}, {"step": 1, "loss": None}]

    results = read_results(SRC.parents[1] / "reports" / "pvg" / "results.json")
    results = {**results, "seconds": float("nan")}
    write_report(results, tmp_path / "report")
    saved = strict_loads((tmp_path / "report" / "results.json").read_text())
    assert saved["seconds"] is None
    assert json.loads((tmp_path / "report" / "results.json").read_text())["profile"]
