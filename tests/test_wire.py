"""The wire codec: compressed bytes, and the limits on what a message may inflate to."""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np
import pytest

from proofgames import wire
from proofgames._configuration import Configuration


def test_long_compressible_bytes_travel_compressed_and_come_back_equal() -> None:
    tape = bytes([0, 1, 1, 0] * 4000)
    msg = {"args": [Configuration(2, 7, tape), [tape, b"short"]]}
    line = wire.encode(msg, compress=True)
    assert line.count(b"__zlib__") == 2 and len(line) < 400
    back = wire.decode(line)
    assert back["args"][0] == {"state": 2, "head": 7, "tape": tape}
    assert back["args"][1] == [tape, b"short"]
    assert wire.decode(wire.encode(msg)) == back  # the plain form decodes to the same
    assert b"__zlib__" not in wire.encode(msg)


def test_short_or_incompressible_bytes_stay_plain() -> None:
    noise = np.random.default_rng(0).integers(0, 256, 8192, dtype=np.uint8).tobytes()
    short = bytes(wire.COMPRESS_MIN - 1)
    line = wire.encode([noise, short], compress=True)
    assert b"__zlib__" not in line
    assert wire.decode(line) == [noise, short]


def test_a_message_inflates_to_at_most_the_line_limit_in_all(monkeypatch) -> None:
    monkeypatch.setattr(wire, "MAX_LINE", 10_000)
    packed = {"__zlib__": base64.b64encode(zlib.compress(bytes(6000))).decode()}
    assert wire.decode(json.dumps([packed]).encode()) == [bytes(6000)]
    with pytest.raises(wire.Malformed, match="inflate to more than 10000 bytes"):
        wire.decode(json.dumps([packed, packed]).encode())  # each fits, both do not


@pytest.mark.parametrize(
    ("msg", "listed"),
    [
        ({"type": "ready"}, False),
        ({"type": "ready", "encodings": []}, False),
        ({"type": "ready", "encodings": ["br", "zlib"]}, True),
        ({"type": "ready", "encodings": ["gzip"]}, False),
        ("ready", False),
    ],
)
def test_accepts_reads_the_listed_encodings(msg: object, listed: bool) -> None:
    assert wire.accepts(msg) is listed


@pytest.mark.parametrize("names", ["zlib", [b"zlib"], None, [["zlib"]]])
def test_accepts_refuses_a_malformed_list(names: object) -> None:
    with pytest.raises(wire.Malformed, match="encodings must be a list of strings"):
        wire.accepts({"type": "hello", "encodings": names})
