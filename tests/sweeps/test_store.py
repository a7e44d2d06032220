"""A sweep's store trusts nothing it reads back (issue 34, item 3).

Each stored line carries a SHA-256 binding it to the store's header, every result is
checked against its sweep's schema before it counts, and a line that JSON's recursion
cannot parse is one clean refusal.  Before, a line with ``"accepted": -5000`` was summed
into the estimate (exit 0, a wrong acceptance), a non-object result was a traceback, a
deeply nested line a ``RecursionError``, and a machine object named as another shared
its store.  Each test below failed on that code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from proofgames.cli import app
from proofgames.experiments.montecarlo import Cell, estimate_cells
from proofgames.stochastic import StochasticBuilder
from proofgames.sweeps._store import ResultStore, StoreError

ESTIMATE = ["estimate", "-m", "single-query:p=0.8", "--debates", "2000", "--chunk", "500",
            "--json"]  # fmt: skip
EXHAUSTIVE = ["exhaustive", "bisection", "-m", "bb2", "-T", "6", "--json"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[Any]) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _forge(header: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the checksum a careful forger would compute (the documented one)."""
    item = {"key": record["key"], "result": record["result"]}
    text = f"{_canonical(header)}\n{_canonical(item)}"
    return {**item, "sha256": hashlib.sha256(text.encode()).hexdigest()}


def _run(args: list[str], store: Path) -> Any:
    return CliRunner().invoke(app, [*args, "--store", str(store)])


def _refused(result: Any, *needles: str) -> str:
    """The one ``error:`` line of a refused run, checked to hold ``needles``."""
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def estimate_store(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A finished ``estimate --store`` of four chunks, and its output."""
    store = tmp_path / "s.jsonl"
    first = _run(ESTIMATE, store)
    assert first.exit_code == 0, first.output
    return store, json.loads(first.output)


def test_an_edited_count_is_refused_not_summed_in(estimate_store) -> None:  # type: ignore[no-untyped-def]
    store, _ = estimate_store
    lines = _lines(store)
    lines[2]["result"]["accepted"] = -5000
    _write(store, lines)
    _refused(_run(ESTIMATE, store), f"the store {store}, line 3", "checksum does not match")
    lines[2]["result"]["accepted"] = lines[2]["result"]["accepted"] + 5001  # in range: still
    _write(store, lines)
    _refused(_run(ESTIMATE, store), "line 3", "checksum does not match")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"accepted": -5000}, "accepted must be an integer in 0..500 (the chunk's debates)"),
        ({"accepted": 501}, "accepted must be an integer in 0..500"),
        ({"aborted": 2.5}, "aborted must be an integer in 0..500"),
        ({"accepted": True}, "accepted must be an integer"),
        ({"samples": {"A": [10, 26492], "B": [0, 0], "V": [0, 0]}}, "A's samples do not fit"),
        ({"samples": {"A": [-1, 0], "B": [0, 0], "V": [0, 0]}}, "the sum of A's samples"),
        ({"samples": {"A": [0, 0]}}, "samples must map each of ['A', 'B', 'V']"),
        ({"lost": [["C", "timeout", 3]]}, "a forfeit must be [party A or B"),
        ({"lost": [["A", "x", 300], ["B", "x", 300]]}, "600 debates forfeited in a chunk of 500"),
        ({"lost": [["A", "x", 1], ["A", "x", 1]]}, "once per party and reason"),
        ({"seconds": -1}, "seconds must be a finite number >= 0"),
        ({"extra": 1}, "a chunk's result has exactly the fields"),
    ],
)
def test_a_forged_chunk_out_of_its_schema_is_refused(estimate_store, change, problem) -> None:  # type: ignore[no-untyped-def]
    store, _ = estimate_store
    lines = _lines(store)
    lines[1] = _forge(lines[0], {**lines[1], "result": {**lines[1]["result"], **change}})
    _write(store, lines)
    _refused(_run(ESTIMATE, store), f"the store {store}, line 2", "item '0/0'", problem)


@pytest.mark.parametrize("result", [5, None, [], "x", {"accepted": 1}])
def test_a_result_that_is_not_a_chunk_is_refused_not_a_traceback(estimate_store, result) -> None:  # type: ignore[no-untyped-def]
    store, _ = estimate_store
    lines = _lines(store)
    lines[1] = _forge(lines[0], {"key": "0/0", "result": result})
    _write(store, lines)
    _refused(_run(ESTIMATE, store), "line 2", "a chunk's result has exactly the fields")


def test_a_key_no_chunk_has_is_refused(estimate_store) -> None:  # type: ignore[no-untyped-def]
    store, _ = estimate_store
    lines = _lines(store)
    lines.append(_forge(lines[0], {"key": "0/9", "result": lines[1]["result"]}))
    _write(store, lines)
    _refused(_run(ESTIMATE, store), "line 6", "no chunk of this sweep has the key '0/9'")


@pytest.mark.parametrize("command", [ESTIMATE, EXHAUSTIVE], ids=["estimate", "exhaustive"])
@pytest.mark.parametrize("line", ["[" * 100_000, '{"key": ' * 50_000, "[" * 65 + "]" * 65])
def test_a_deeply_nested_line_is_a_clean_refusal(tmp_path: Path, command, line) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "s.jsonl"
    assert _run(command, store).exit_code == 0
    lines = store.read_text().splitlines()
    _write(store, [*lines, line])
    n = len(lines) + 1
    _refused(_run(command, store), f"the store {store}, line {n}: not valid JSON (nested deeper")


def test_an_exhaustive_record_out_of_its_schema_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "e.jsonl"
    first = _run(EXHAUSTIVE, store)
    assert first.exit_code == 0
    lines = _lines(store)
    for change, problem in [
        ({"completeness": 7}, "completeness must be a number in 0..1"),
        ({"truth": 2}, "truth must be an integer 0..1"),
        ({"steps": 5}, "its steps is 5, the search's 6"),
        ({"protocol": "witness"}, "it is a record of 'witness', not 'bisection'"),
        ({"strategies_searched": {"A": -1, "B": 0}}, "strategies searched by A"),
        ({"machine": "bb3"}, "it is a record of (machine, T, space) ('bb3', 6, 4)"),
    ]:
        forged = _forge(lines[0], {**lines[1], "result": {**lines[1]["result"], **change}})
        _write(store, [lines[0], forged])
        _refused(_run(EXHAUSTIVE, store), f"the store {store}, line 2", "item 'bb2'", problem)
    _write(store, lines)
    again = _run(EXHAUSTIVE, store)
    assert again.exit_code == 0 and again.output == first.output  # the stored record itself


def test_a_line_copied_from_another_sweeps_store_is_refused(tmp_path: Path) -> None:
    mine, other = tmp_path / "mine.jsonl", tmp_path / "other.jsonl"
    assert _run(ESTIMATE, mine).exit_code == 0
    assert _run([*ESTIMATE, "--seed", "1"], other).exit_code == 0
    lines = _lines(mine)
    lines[1] = _lines(other)[1]  # same key, same form, another seed's chunk
    _write(mine, lines)
    _refused(_run(ESTIMATE, mine), "line 2", "checksum does not match")


def test_a_store_of_the_old_format_is_refused_with_how_to_start_afresh(
    estimate_store,  # type: ignore[no-untyped-def]
) -> None:
    store, _ = estimate_store
    lines = _lines(store)
    old = [{"sweep": lines[0]["sweep"]}] + [{"key": r["key"], "result": r["result"]}
                                            for r in lines[1:]]  # fmt: skip
    _write(store, old)
    afresh = "remove it (or give another --store) to start afresh"
    _refused(_run(ESTIMATE, store), f"{store} is a store of an older", "without checksums", afresh)


def test_a_store_line_must_be_strict_json_and_exactly_an_item(estimate_store) -> None:  # type: ignore[no-untyped-def]
    store, _ = estimate_store
    text = store.read_text().splitlines()
    for bad, problem in [
        (text[1].replace('"aborted": 0', '"aborted": 0, "aborted": 0'), "appears twice"),
        (text[1].replace('"aborted": 0', '"aborted": NaN'), "NaN is not allowed"),
        (text[1][:-1] + ', "note": "hi"}', "not a stored item"),
        (text[1].replace('"sha256": "', '"sha256": "X'), "a string key and a SHA-256 digest"),
        ("", "not valid JSON"),  # a blank line is no item
        ("\ufeff" + text[1], "not valid JSON"),
    ]:
        _write(store, [text[0], bad, *text[2:]])
        _refused(_run(ESTIMATE, store), f"the store {store}, line 2", problem)
    store.write_bytes(text[0].encode() + b"\n" + b"\xff\n")
    _refused(_run(ESTIMATE, store), f"the store {store}: not UTF-8 text (byte")


def _machine(p: float) -> Any:
    b = StochasticBuilder([p])
    b.query(0)
    return b.build("same-name", lipschitz=1.0, p_accept=p)


def test_a_machine_object_named_as_another_does_not_share_its_store(tmp_path: Path) -> None:
    store = tmp_path / "s.jsonl"
    low, high = Cell(_machine(0.2), "lean", 1, "honest", "honest"), None
    first = estimate_cells([low], debates=1000, seed=0, store=store)
    high = Cell(_machine(0.9), "lean", 1, "honest", "honest")
    with pytest.raises(StoreError, match="another sweep"):
        estimate_cells([high], debates=1000, seed=0, store=store)
    assert estimate_cells([low], debates=1000, seed=0, store=store)[0].accepted == first[0].accepted


def test_a_result_the_sweep_refuses_is_not_stored(tmp_path: Path) -> None:
    def positive(key: str, result: Any) -> None:
        if not isinstance(result, int) or result < 0:
            raise ValueError(f"want a non-negative integer, got {result!r}")

    store = ResultStore(tmp_path / "s.jsonl", {"kind": "test"}, positive)
    store.add("a", 1)
    with pytest.raises(StoreError, match=r"item 'b' of the store .*\(want a non-negative"):
        store.add("b", -1)
    assert ResultStore(tmp_path / "s.jsonl", {"kind": "test"}, positive).done == {"a": 1}
    assert len((tmp_path / "s.jsonl").read_text().splitlines()) == 2
