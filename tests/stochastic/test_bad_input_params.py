"""Bad ``--params`` files and parameter values get a clear ProtocolError naming the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError, ProtocolError
from proofgames.stochastic.params import (
    check_params_spec,
    lean_params,
    paper_params,
    resolve_params,
)

GOOD = {"c": 0.01, "s": 0.02, "b": 0.05, "q": 0.001, "v": 0.01, "w": 0.6667, "d": 0.6}


def _with(**changes: object) -> bytes:
    values: dict[str, object] = {**GOOD, **changes}
    return json.dumps(values).encode()


BAD_FILES = {
    "not UTF-8": (b'{"c": 0.01\xff}', "not UTF-8 text (byte 10 is 0xff)"),
    "null": (b"null", "must hold a JSON object"),
    "a number": (b"5", "must hold a JSON object"),
    "a list": (b"[0.01, 0.02]", "must hold a JSON object"),
    "not JSON": (b"{c: 1}", "not valid JSON"),
    "deeply nested": (b"[" * 100_000, "not valid JSON"),
    "a string value": (_with(c="0.01"), "c must be a number, got str"),
    "a boolean value": (_with(q=True), "q must be a number, got bool"),
    "a null value": (_with(v=None), "v must be a number, got NoneType"),
    "missing keys": (b'{"w": 0.7}', "missing parameter(s) ['c', 's', 'b', 'q', 'v', 'd']"),
    "an unknown key": (_with(x=1), "unknown parameter(s) ['x']"),
    "Infinity": (_with(w=9).replace(b"9", b"Infinity"), "Infinity is not allowed"),
    "-Infinity": (_with(d=9).replace(b"9", b"-Infinity"), "-Infinity is not allowed"),
    "NaN": (_with(c=9).replace(b"9", b"NaN"), "NaN is not allowed"),
    "an overflowing number": (_with(w=9).replace(b"9", b"1e400"), "w must be finite"),
    "a huge integer": (_with(w=9).replace(b"9", b"1" + b"0" * 400), "w must be finite"),
    "w above 1": (_with(w=7, d=5), "need w <= 1"),
    "d not positive": (_with(d=-0.5), "need d > 0"),
    "c >= s": (_with(c=0.03), "need 0 < c < s < b"),
    "q above v": (_with(q=0.5), "need q <= v"),
    "the completeness condition": (_with(d=0.66), "completeness condition fails"),
    "samples beyond 2^53": (_with(c=1e-200, s=2e-200, b=5e-200), "party A's error c"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_params_file_is_refused_naming_the_file(tmp_path: Path, case: str) -> None:
    data, expected = BAD_FILES[case]
    path = tmp_path / "params.json"
    path.write_bytes(data)
    with pytest.raises(ProtocolError) as info:
        resolve_params(str(path), 1.0, 10)
    message = str(info.value)
    assert str(path) in message and expected in message
    assert "\n" not in message


NEED_K_AND_T = {"the completeness condition", "samples beyond 2^53"}


@pytest.mark.parametrize("case", sorted(set(BAD_FILES) - NEED_K_AND_T))
def test_check_params_spec_refuses_without_k_or_t(tmp_path: Path, case: str) -> None:
    data, expected = BAD_FILES[case]
    path = tmp_path / "params.json"
    path.write_bytes(data)
    for spec in (str(path), f"{path}:strict"):
        with pytest.raises(ProtocolError) as info:
            check_params_spec(spec)
        assert str(path) in str(info.value) and expected in str(info.value)


def test_check_params_spec_passes_good_specs(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(_with(d=0.66))  # fails only once K and T are known
    for spec in ("paper", "lean", "paper:strict", "lean:strict", str(path), f"{path}:strict"):
        check_params_spec(spec)
    with pytest.raises(ProtocolError, match="cannot read"):
        check_params_spec("papr")


def test_infinite_w_no_longer_gives_a_negative_soundness_target(tmp_path: Path) -> None:
    # On c5c9194 this file was accepted with soundness target 1 - d = -4.
    path = tmp_path / "p.json"
    path.write_text('{"c":0.01,"s":0.02,"b":0.05,"q":0.001,"v":0.01,"w":Infinity,"d":5}')
    with pytest.raises(ProtocolError, match="Infinity is not allowed"):
        resolve_params(str(path), 1.0, 10)
    path.write_text('{"c":0.01,"s":0.02,"b":0.05,"q":0.001,"v":0.01,"w":70,"d":5}')
    with pytest.raises(ProtocolError, match="need w <= 1"):
        resolve_params(str(path), 1.0, 10)


@pytest.mark.parametrize("spec", ["missing.json", "."])
def test_unreadable_params_file_is_refused(tmp_path: Path, spec: str) -> None:
    with pytest.raises(ProtocolError, match="cannot read"):
        resolve_params(str(tmp_path / spec), 1.0, 10)


def test_a_good_file_still_resolves_also_strict(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(_with())
    params = resolve_params(str(path), 1.0, 10)
    assert params.name == "custom" and params.soundness_target == pytest.approx(0.4)
    strict = resolve_params(f"{path}:strict", 1.0, 10)
    assert strict.strict_deterministic and strict.name == "custom:strict"


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"c": "0.01"}, "c must be a number"),
        ({"w": float("inf"), "d": 5}, "w must be finite"),
        ({"d": float("nan")}, "d must be finite"),
        ({"v": True}, "v must be a number"),
    ],
)
def test_lean_params_checks_value_types(kwargs: dict[str, object], expected: str) -> None:
    with pytest.raises(ProtocolError, match=expected):
        lean_params(1.0, 10, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 0, -1, "150"])
def test_paper_params_checks_its_scale(scale: object) -> None:
    with pytest.raises(ProtocolError, match="scale must be a finite positive number"):
        paper_params(1.0, 10, scale=scale)  # type: ignore[arg-type]


def test_paper_params_refuses_sample_counts_beyond_two_to_the_53() -> None:
    with pytest.raises(ProtocolError, match=r"2\^53"):
        paper_params(1e6, 10)
    assert isinstance(ProtocolError("x"), ProofgamesError)
