"""Property-based fuzzing of the files proofgames reads back (issue 34, items 3 and 8).

Hypothesis corrupts valid files -- flipped, deleted, inserted and duplicated bytes and
lines, numbers changed, the file cut short, NaN, ``1e400``, ``-5000``, bad UTF-8, deep
nesting -- and reads them as the commands do.  Every read must give either the right
result or a clean :class:`~proofgames.errors.ProofgamesError` whose one-line message names
the file; never a traceback, a hang or a wrong number:

* **Stores** (``estimate --store``, ``exhaustive --store``) trust nothing: the right result
  is the exact result of the sweep (an item dropped from the file is run again).
* **Data files** (``--params``, ``sat:FILE``, a PVG ``metrics.jsonl``, a GSM8K file): a
  corrupted file may still be a valid file saying something else, so the right result is
  what an independent strict reading of the bytes on disk says -- never a value the file
  does not hold.

The default run tries 25 cases per file kind; the long profile runs more:
``PROOFGAMES_FUZZ_EXAMPLES=400 pytest -m fuzz tests/test_fuzz_files.py``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from proofgames.errors import ProofgamesError
from proofgames.experiments.montecarlo import Cell, estimate_cells

pytestmark = pytest.mark.fuzz
FAST = settings(
    max_examples=int(os.environ.get("PROOFGAMES_FUZZ_EXAMPLES", "25")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)  # fmt: skip

JUNK = st.sampled_from(
    [b"[" * 100_000, b'{"a":' * 3_000, b"NaN", b"Infinity", b"-5000", b"1e400", b"\xff",
     b"\xc3", b"\x00", b"\n", b"\r\n", b'"', b"{", b"}", b"]", b",", b"-", b"0", b".5",
     b"9" * 5_000, b'"key": 1, ', b"true", b"null", b" ", b"\\u0000", b"\xef\xbb\xbf"]
) | st.binary(min_size=1, max_size=8)  # fmt: skip
NUMBERS = st.sampled_from([b"-5000", b"0", b"1", b"-1", b"2.5", b"1e400", b"10" * 20, b"true"])
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
KINDS = ["number", "flip", "delete", "insert", "cut", "line twice", "swap lines", "pad"]

Op = tuple[str, int, int, bytes]
"""A corruption: its kind, two numbers that pick where (modulo the sizes), and bytes."""
OPS = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(0, 2**20), st.integers(0, 2**20),
              JUNK | NUMBERS | st.integers(-(10**6), 10**6).map(lambda n: str(n).encode())),
    min_size=1, max_size=3,
)  # fmt: skip


def corrupt(data: bytes, ops: list[Op]) -> bytes:
    """``data`` after the corruptions ``ops``, in order."""
    for kind, a, b, junk in ops:
        event(kind)
        at, lines = a % (len(data) + 1), data.split(b"\n")
        if kind == "number":  # a whole number past the first line (a header) replaced
            found = list(NUMBER.finditer(data, data.find(b"\n") + 1))
            if found:
                m = found[a % len(found)]
                data = data[: m.start()] + junk + data[m.end() :]
        elif kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([b % 256]) + data[at + 1 :]
        elif kind == "delete":
            data = data[:at] + data[at + 1 + b % 40 :]
        elif kind == "insert":
            data = data[:at] + junk + data[at:]
        elif kind == "cut":
            data = data[:at]
        elif kind == "line twice":
            i = a % len(lines)
            data = b"\n".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])
        elif kind == "swap lines":
            i, j = a % len(lines), b % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif kind == "pad":  # still valid, perhaps over the reader's size cap
            data += (b" ", b"\n")[a % 2] * (1 + b % 3_000)
    return data


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def _read(path: Path, data: bytes, read: Callable[[], Any], cap: int | None = None) -> Any:
    """``read()`` of ``data`` written at ``path``: its result, or ``None`` if it refused.

    A refusal must be a :class:`ProofgamesError` whose message, one line, names the file;
    a file over the reader's ``cap`` must be refused as too large.
    """
    path.write_bytes(data)
    message = ""
    try:
        got = read()
    except ProofgamesError as exc:
        message = str(exc)
        assert str(path) in message and "\n" not in message, message
        event(f"refused: {type(exc).__name__}")
        got = None
    if cap is not None and len(data) > cap:
        assert got is None and f"holds more than {cap:,} bytes" in message, "over the cap"
    return got


@pytest.fixture
def caps(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Small size caps for the data-file readers, so that a padded file can pass them."""
    from proofgames.language import gsm8k
    from proofgames.machines import sat
    from proofgames.stochastic import params

    small = {"params": 400, "sat": 400, "gsm8k": 1_000, "metrics": 1_000}
    monkeypatch.setattr(params, "SETTINGS_LIMIT", small["params"])
    monkeypatch.setattr(sat, "DATA_LIMIT", small["sat"])
    monkeypatch.setattr(gsm8k, "DATA_LIMIT", small["gsm8k"])
    if importlib.util.find_spec("torch") is not None:
        from proofgames.pvg import _bookkeeping

        monkeypatch.setattr(_bookkeeping, "DATA_LIMIT", small["metrics"])
    return small


def _strict(text: str) -> Any:
    """An independent strict JSON parse: no NaN or Infinity, no key twice (ValueError)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({k for k, _ in items}) != len(items):
            raise ValueError("a key twice")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


# ---------------------------------------------------------------------------- stores
CELLS = [Cell("single-query:p=0.8", "lean", 1, "honest", "abort-at")]


@cache
def _estimate_store() -> tuple[bytes, list[dict[str, Any]]]:
    """A finished estimate's store, and the estimate (untimed)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        done = estimate_cells(CELLS, debates=2_000, seed=5, chunk=500, store=path)
        return path.read_bytes(), _untimed(done)


def _untimed(estimates: list[Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.to_dict().items() if k != "seconds"} for e in estimates]


@FAST
@given(ops=OPS)
@example(ops=[("number", 2, 0, b"-5000")])  # the measured defect: a chunk's count summed in
def test_a_corrupted_estimate_store_gives_the_exact_estimate_or_a_refusal(folder, ops) -> None:  # type: ignore[no-untyped-def]
    valid, expected = _estimate_store()
    path = folder / "estimate.jsonl"
    got = _read(path, corrupt(valid, ops), lambda: estimate_cells(
        CELLS, debates=2_000, seed=5, chunk=500, store=path))  # fmt: skip
    if got is not None:
        assert _untimed(got) == expected


@cache
def _exhaustive_store() -> tuple[bytes, list[dict[str, Any]]]:
    from proofgames.analysis._exhaustive_items import search_instances

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "e.jsonl"
        records = search_instances("bisection", ["bb2", "tm:1RB1LB_1LA1RZ"], 6, store=path)
        return path.read_bytes(), [{**r, "seconds": 0} for r in records]


@FAST
@given(ops=OPS)
@example(ops=[("number", 2, 0, b"7")])  # bb2's T, 6, made 7
def test_a_corrupted_exhaustive_store_gives_the_exact_records_or_a_refusal(folder, ops) -> None:  # type: ignore[no-untyped-def]
    from proofgames.analysis._exhaustive_items import search_instances

    valid, expected = _exhaustive_store()
    path = folder / "exhaustive.jsonl"
    got = _read(path, corrupt(valid, ops), lambda: search_instances(
        "bisection", ["bb2", "tm:1RB1LB_1LA1RZ"], 6, store=path))  # fmt: skip
    if got is not None:
        assert [{**r, "seconds": 0} for r in got] == expected


# ------------------------------------------------------------------------ data files
PARAMS = json.dumps(
    {"c": 0.01, "s": 0.02, "b": 0.05, "q": 0.001, "v": 0.01, "w": 0.6667, "d": 0.6,
     "tail": "hoeffding"}, indent=1,
).encode()  # fmt: skip


@FAST
@given(ops=OPS)
@example(ops=[("line twice", 1, 0, b"")])  # '"c": 0.01,' twice: the key twice
def test_a_corrupted_params_file_is_read_as_it_says_or_refused(folder, caps, ops) -> None:  # type: ignore[no-untyped-def]
    from proofgames.stochastic.params import lean_params, resolve_params

    path = folder / "params.json"
    content = corrupt(PARAMS, ops)
    got = _read(path, content, lambda: resolve_params(str(path), 1.0, 10), caps["params"])
    if got is not None:
        said = _strict(content.decode("utf-8"))
        tail = said.pop("tail", "hoeffding")
        values = {k: float(v) for k, v in said.items()}
        assert got == lean_params(1.0, 10, name="custom", tail=tail, **values)


DIMACS = (
    b"c a small formula\np cnf 5 7\n1 2 -3 0\n-1 3 0\n-2 4 5 0\n3 -4 0\n-5 -1 0\n2 5 0\n-3 4 1 0\n"
)


@FAST
@given(ops=OPS)
def test_a_corrupted_dimacs_file_is_read_as_it_says_or_refused(folder, caps, ops) -> None:  # type: ignore[no-untyped-def]
    from proofgames.machines.cnf import parse_dimacs
    from proofgames.machines.sat import resolve_sat

    path = folder / "f.cnf"
    content = corrupt(DIMACS, ops)
    got = _read(path, content, lambda: resolve_sat(f"sat:{path}"), caps["sat"])
    if got is not None:
        assert got.cnf == parse_dimacs(content.decode("utf-8")) and got.name == "f"


METRICS = "".join(
    json.dumps({"step": i, "loss": 0.5 / i, "accuracy": None}) + "\n" for i in range(1, 6)
).encode()


def _metric_rows(content: bytes) -> list[dict[str, Any]]:
    """The rows a log says: every whole line, and a last one cut short only if it parses."""
    *whole, tail = content.decode("utf-8").split("\n")
    rows = [_strict(line) for line in whole if line.strip()]
    with contextlib.suppress(ValueError, RecursionError):  # cut short by a kill: no row
        rows += [_strict(tail)] if tail.strip() else []
    assert all(isinstance(r, dict) and type(r.get("step")) is int for r in rows), rows
    return rows


@FAST
@given(ops=OPS)
@example(ops=[("number", 1, 0, b"NaN")])  # a loss of NaN: not strict JSON
def test_a_corrupted_metric_log_is_read_as_it_says_or_refused(folder, caps, ops) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    from proofgames.pvg._bookkeeping import logged_rows

    content = corrupt(METRICS, ops)
    log = folder / "metrics.jsonl"
    got = _read(log, content, lambda: logged_rows(folder, 2**62), caps["metrics"])
    if got is not None:
        assert got == [r for r in _metric_rows(content) if r["step"] <= 2**62]


GSM8K = (
    b'{"question": "A baker makes 24 rolls and 18 more. She sells 35. How many are left?", '
    b'"answer": "She makes 24 + 18 = <<24+18=42>>42 rolls.\\nShe has 42 - 35 = <<42-35=7>>7 '
    b'left.\\n#### 7"}\n{"question": "Mia reads 12 pages a day for 5 days. How many pages?", '
    b'"answer": "She reads 12 * 5 = <<12*5=60>>60 pages.\\n#### 60"}\n'
)


@FAST
@given(ops=OPS)
def test_a_corrupted_gsm8k_file_is_read_as_it_says_or_refused(folder, caps, ops) -> None:  # type: ignore[no-untyped-def]
    from proofgames.language.gsm8k import load_gsm8k_problems

    path = folder / "test.jsonl"
    content = corrupt(GSM8K, ops)
    got = _read(path, content, lambda: load_gsm8k_problems(path), caps["gsm8k"])
    if got is not None:
        said = [_strict(line) for line in content.decode("utf-8").split("\n") if line]
        assert [(p.question, p.solution) for p in got] == [
            (r["question"], r["answer"]) for r in said
        ]
