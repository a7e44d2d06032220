"""Compressed bytes on the wire: offered in the hello, used only for a party that lists it.

A party that lists ``"zlib"`` in its ready gets long tapes as ``__zlib__``; one that does
not (the standalone example, any program written to the plain format) gets ``__bytes__``.
Whatever a party sends compressed must inflate to one whole stream within the message
limit, or the party forfeits with the reason.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import pytest

from proofgames import wire
from proofgames.harness import play
from tests.isolation.test_isolation import _all_dead, _child

# A prover A that claims bb5 halts with a blank halting configuration, then records the
# line of V's next call (a midpoint whose state carries bb5's 12,289-cell tapes) and gives up.
RECORDER = """
hello = call()
send({ready})
inst = hello["instance"]
call()
tape = {{"__bytes__": base64.b64encode(bytes(inst["space"])).decode()}}
send({{"type": "result", "value": {{"state": inst["halt"], "head": inst["origin"], "tape": tape}}}})
line = sys.stdin.readline()
with open({log!r}, "w") as f:
    f.write(line)
send({{"type": "error", "message": "recorded"}})
"""


@pytest.mark.parametrize("listed", [True, False], ids=["lists-zlib", "plain"])
def test_v_compresses_only_for_a_party_that_lists_zlib(tmp_path: Path, listed: bool) -> None:
    ready = {"type": "ready", "encodings": ["zlib"]} if listed else {"type": "ready"}
    log = tmp_path / "call.json"
    cmd, pids = _child(tmp_path, "import base64\n" + RECORDER.format(ready=ready, log=str(log)))
    out = play("bisection", "bb5", claim=1, a=cmd, b="honest", isolation="process")
    assert (out.forfeit, out.reason.endswith("recorded")) == ("A", True), out.reason
    line = log.read_bytes()
    start = json.loads(line)["args"][0]["start"]["tape"]
    assert list(start) == (["__zlib__"] if listed else ["__bytes__"])
    assert wire.decode(line)["args"][0]["start"]["tape"] == bytes(12289)
    assert len(line) < 2000 if listed else len(line) > 2 * 12289
    _all_dead(pids)


def _zlib(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("packed", "why"),
    [
        (_zlib(b"not zlib at all"), "not valid zlib data"),
        (_zlib(zlib.compress(bytes(40))[:-3]), "not one whole zlib stream"),
        (_zlib(zlib.compress(bytes(40)) + b"more"), "not one whole zlib stream"),
        (_zlib(zlib.compress(bytes(2 << 20))), "inflate to more than 1048576 bytes"),
        ("!!", "not valid base64"),
    ],
    ids=["garbage", "truncated", "trailing", "bomb", "not-base64"],
)
def test_bad_compressed_bytes_lose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packed: str, why: str
) -> None:
    monkeypatch.setattr(wire, "MAX_LINE", 1 << 20)  # V's limit; the bomb inflates to 2 MiB
    result = {"type": "result", "value": {"state": 0, "head": 0, "tape": {"__zlib__": packed}}}
    body = f'hello = call()\nsend({{"type": "ready"}})\ncall()\nsend({result!r})\n'
    cmd, pids = _child(tmp_path, body)
    out = play("bisection", "bb3", claim=1, a=cmd, b="honest", isolation="process")
    assert (out.winner, out.forfeit) == ("B", "A")
    assert why in out.reason, out.reason
    _all_dead(pids)


@pytest.mark.parametrize("encodings", ["zlib", [1], {"zlib": True}])
def test_a_ready_with_malformed_encodings_loses(tmp_path: Path, encodings: object) -> None:
    ready = {"type": "ready", "encodings": encodings}
    cmd, pids = _child(tmp_path, f"hello = call()\nsend({ready!r})\ncall()\n")
    out = play("bisection", "bb3", claim=1, a=cmd, b="honest", isolation="process")
    assert (out.winner, out.forfeit) == ("B", "A")
    assert "malformed ready: encodings must be a list of strings" in out.reason, out.reason
    _all_dead(pids)


def test_v_starts_its_own_runners_with_openblas_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    # The prover processes V starts load NumPy at once: their idle OpenBLAS threads would
    # spin ~0.1 s of CPU beside the other prover's run (proofgames._blas).
    from proofgames import isolation

    seen: list[dict[str, str] | None] = []
    real = isolation.ChildProcess

    def recording(argv, label, env=None, *args, **kw):  # type: ignore[no-untyped-def]
        seen.append(None if env is None else dict(env))
        return real(argv, label, env, *args, **kw)

    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    monkeypatch.setattr(isolation, "ChildProcess", recording)
    out = play("bisection", "bb2", claim=1, a="honest", b="honest", isolation="process")
    assert out.winner == "A"
    assert [e and e.get("OPENBLAS_THREAD_TIMEOUT") for e in seen] == ["4", "4"]
