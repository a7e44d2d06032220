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


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """A fresh cache, and counts of the module's zlib compressions and inflations."""
    monkeypatch.setattr(wire, "_PACKED", wire._Packed())
    calls = {"compress": 0, "inflate": 0}
    real_compress, real_inflater = zlib.compress, zlib.decompressobj

    def compress(data: bytes, level: int) -> bytes:
        calls["compress"] += 1
        return real_compress(data, level)

    def inflater() -> object:
        calls["inflate"] += 1
        return real_inflater()

    monkeypatch.setattr(wire.zlib, "compress", compress)
    monkeypatch.setattr(wire.zlib, "decompressobj", inflater)
    return calls


def test_a_value_sent_again_is_not_compressed_or_inflated_again(monkeypatch) -> None:
    calls = _counting(monkeypatch)
    tape = bytes([0, 1, 1, 0] * 4000)
    first, again = (wire.encode({"tape": tape}, compress=True) for _ in range(2))
    assert first == again and calls == {"compress": 1, "inflate": 0}
    assert wire.decode(first) == wire.decode(again) == {"tape": tape}
    assert calls["inflate"] == 0  # its text is known: the cached bytes come back
    equal = bytes(bytearray(tape))  # equal, another object: compressed anew, same text
    assert equal is not tape and wire.encode({"tape": equal}, compress=True) == first
    assert calls["compress"] == 2


def test_a_received_value_goes_on_in_this_process_s_own_encoding(monkeypatch) -> None:
    """A party's compressed text is read (and its bytes found again when it comes back),
    but never sent on: another party gets V's own compression, so no choice of deflate
    encoding (a covert channel) crosses V."""
    tape = bytes([2, 0] * 3000)
    theirs = base64.b64encode(zlib.compress(tape, 9)).decode()  # the peer's own choice
    ours = base64.b64encode(zlib.compress(tape, 1)).decode()
    assert theirs != ours
    calls = _counting(monkeypatch)  # (it counts every zlib call: so only from here)
    got = wire.decode(json.dumps({"mid": {"__zlib__": theirs}}).encode())["mid"]
    assert got == tape and calls["inflate"] == 1
    line = wire.encode([got, got], compress=True)  # V sends it on, twice
    assert theirs.encode() not in line and line.count(ours.encode()) == 2
    assert calls["compress"] == 1  # compressed once, then found by identity
    assert wire.decode(json.dumps({"again": {"__zlib__": theirs}}).encode()) == {"again": tape}
    assert wire.decode(line) == [tape, tape] and calls["inflate"] == 1  # both texts known


def test_the_cache_is_small_and_keeps_no_large_values(monkeypatch) -> None:
    _counting(monkeypatch)
    packed = wire._PACKED
    values = [bytes([k % 256]) * 2048 + bytes(2048) for k in range(packed.CACHED + 5)]
    for v in values:
        wire.encode(v, compress=True)
    assert len(packed._texts) == len(packed._datas) == packed.CACHED
    assert packed.text(values[0]) is None and packed.text(values[-1]) is not None
    large = bytes(packed.CACHED_BYTES + 1)
    assert wire.decode(wire.encode(large, compress=True)) == large
    assert packed.text(large) is None  # sent and read, but not kept


def test_cached_values_still_count_against_a_message_s_limit(monkeypatch) -> None:
    _counting(monkeypatch)
    line = wire.encode([bytes(6000)], compress=True)
    assert wire.decode(line) == [bytes(6000)]  # now cached both ways
    monkeypatch.setattr(wire, "MAX_LINE", 10_000)
    twice = json.dumps(json.loads(line) * 2).encode()
    with pytest.raises(wire.Malformed, match="inflate to more than 10000 bytes"):
        wire.decode(twice)


def test_threads_sharing_the_cache_each_get_their_own_values(monkeypatch) -> None:
    import threading

    _counting(monkeypatch)
    errors: list[str] = []

    def worker(k: int) -> None:
        for i in range(150):
            tape = bytes([k, i % 7]) * 1500
            line = wire.encode({"t": tape, "k": k}, compress=True)
            back = wire.decode(line)
            if back != {"t": tape, "k": k}:
                errors.append(f"thread {k}, value {i}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
