"""Strict JSON: NaN and infinities are null, numpy values plain, the output parses anywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from proofgames.reporting import dumps, plain, write_json


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses NaN and Infinity, as strict parsers (JavaScript) do."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


NON_FINITE = [float("nan"), float("inf"), float("-inf"), np.float64("nan"), np.float32("inf")]


@pytest.mark.parametrize("value", NON_FINITE, ids=repr)
def test_every_non_finite_number_is_null_at_any_depth(value: Any) -> None:
    data = {"top": value, "list": [1, value], "tuple": (value,), "deep": {"x": [{"y": value}]}}
    text = dumps(data)
    assert strict_loads(text) == {"top": None, "list": [1, None], "tuple": [None],
                                  "deep": {"x": [{"y": None}]}}  # fmt: skip
    assert "NaN" not in text and "Infinity" not in text


def test_the_outputs_of_the_old_strict_encoder_are_kept() -> None:
    # proofgames._jsonout's documented output, byte for byte
    value = {"a": float("nan"), "b": np.int64(3), "c": [np.float64(0.5), float("inf")]}
    assert dumps(value) == '{"a": null, "b": 3, "c": [0.5, null]}'
    assert dumps({"x": np.arange(3), 2: np.bool_(True)}, indent=1) == (
        '{\n "x": [\n  0,\n  1,\n  2\n ],\n "2": true\n}'
    )
    assert plain({1: (np.float32(0.5), math.inf)}) == {"1": [0.5, None]}
    assert dumps(12345678901234567890) == "12345678901234567890"  # integers stay integers


def test_what_json_cannot_hold_is_refused_and_non_ascii_is_kept_on_request() -> None:
    with pytest.raises(TypeError):
        dumps({"s": {1, 2}})
    assert dumps({"t": "café"}) == '{"t": "caf\\u00e9"}'
    assert dumps({"t": "café"}, ensure_ascii=False) == '{"t": "café"}'


def test_write_json_is_strict_atomic_and_ends_with_a_newline(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("old")
    assert write_json(path, {"loss": float("nan"), "n": 2}, indent=1) == path
    assert path.read_text() == '{\n "loss": null,\n "n": 2\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    with pytest.raises(TypeError):
        write_json(path, {"s": {1}})
    assert strict_loads(path.read_text()) == {"loss": None, "n": 2}  # the old file stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
