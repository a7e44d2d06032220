"""An isolated prover builds its Turing machine from the hello: no run to size its tape.

V sizes the window (a run, or a recorded window) and sends it in the hello; the prover's
process builds the machine from it.  It must not run the machine again to find it, and it
must refuse a window that cannot be right, saying why, rather than play on it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from proofgames.errors import ProofgamesError
from proofgames.harness import resolve_instance
from proofgames.isolation.party import Channel, Session, rebuild_instance
from proofgames.machines import _engine, turing


@pytest.fixture
def engine_runs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every run of the Turing-machine engine: (which, steps asked for)."""
    runs: list[tuple[str, int]] = []

    def counted(name: str, fn: Callable[..., Any], at: int) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            runs.append((name, args[at]))
            return fn(*args)

        return run

    monkeypatch.setattr(turing, "measure_span", counted("measure_span", turing.measure_span, 1))
    for name, method in (("span_kernel", "span"), ("run_kernel", "run")):  # args[4]: steps
        wrapped = counted(name, getattr(_engine.Kernel, method), 4)
        monkeypatch.setattr(_engine.Kernel, method, wrapped)
    yield runs


def hello(protocol: str, description: dict[str, Any], role: str = "A") -> dict[str, Any]:
    return {"type": "hello", "protocol": protocol, "role": role, "claim": 1, "seed": 3,
            "instance": description}  # fmt: skip


@pytest.mark.parametrize("protocol", ["bisection", "cross-examination"])
@pytest.mark.parametrize("spec", ["bb4", "tm:1RB0LB_1LA0RZ"])
def test_the_prover_builds_its_machine_from_the_hello_without_running_it(
    protocol: str, spec: str, engine_runs: list[tuple[str, int]]
) -> None:
    """No sizing run (it ran all T steps): one step, which loads the compiled engine."""
    steps = None if spec == "bb4" else 9
    inst = resolve_instance(protocol, spec, steps=steps)
    engine_runs.clear()  # V's set-up may run it (tm:<text> is not recorded); not the prover
    channel = Channel(io.BytesIO(), io.BytesIO())
    server = Session("honest", hello(protocol, inst.description), channel)
    assert engine_runs == [("run_kernel", 1)]
    tm = server.inst.target if protocol == "bisection" else server.inst.target.machine
    v_tm = inst.target if protocol == "bisection" else inst.target.machine
    assert (tm.size, tm.origin, tm.program.text) == (v_tm.size, v_tm.origin, v_tm.program.text)
    assert server.inst.description == inst.description


def test_the_rebuilt_machine_plays_as_v_s_own() -> None:
    inst = resolve_instance("bisection", "tm:1RB1LB_1LA1RZ", steps=6)
    tm = rebuild_instance("bisection", inst.description).target
    start = inst.target.initial()
    assert tm.initial() == start
    assert tm.advance(tm.initial(), 6) == inst.target.advance(start, 6)


BB4 = resolve_instance("bisection", "bb4").description
TM = resolve_instance("bisection", "tm:1RB0LB_1LA0RZ", steps=9).description


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        (BB4 | {"space": BB4["space"] + 1}, "not bb4's recorded window"),
        (BB4 | {"origin": BB4["origin"] - 1}, "not bb4's recorded window"),
        (TM | {"space": 11}, "not the window of a run of T = 9 steps"),
        (TM | {"origin": TM["space"]}, "not the window of a run of T = 9 steps"),
        (BB4 | {"space": 10**15}, "not the window of a run of T = 107 steps"),
        (BB4 | {"space": 0}, "space must be an integer >= 1"),
        (BB4 | {"origin": -1}, "origin must be an integer >= 0"),
        (BB4 | {"space": "14"}, "space must be an integer >= 1"),
        (BB4 | {"space": True}, "space must be an integer >= 1"),
        (BB4 | {"steps": 0}, "steps must be an integer >= 1"),
        (BB4 | {"program": TM["program"]}, "program is not the one 'bb4' names"),
        (TM | {"spec": "tm:1RB1LB_1LA1RZ"}, "program is not the one"),
        (BB4 | {"states": 5}, "differs from V's"),
        (BB4 | {"extra": 1}, "differs from V's"),
        (BB4 | {"steps": 10**12}, "over the limit"),
    ],
)
def test_a_window_that_cannot_be_right_is_refused_with_the_reason(
    description: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ProofgamesError, match=reason):
        rebuild_instance("bisection", description)


def test_a_prover_process_answers_a_hostile_window_with_an_error_and_exits() -> None:
    """Through the real runner: one error line naming the window, no traceback, exit 1."""
    bad = hello("bisection", BB4 | {"space": 10**15})
    proc = subprocess.run(
        [sys.executable, "-m", "proofgames.isolation.party", "honest"],
        input=json.dumps(bad) + "\n", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    answer = json.loads(proc.stdout)
    assert proc.returncode == 1 and answer["type"] == "error"
    assert "tape window" in answer["message"] and "Traceback" not in proc.stderr


def test_the_runner_lets_the_strategy_get_ahead_after_each_answer_is_out() -> None:
    """``anticipate`` runs after the answer is written and before the next call is read,
    so the work it does is on nobody's clock; one that raises changes nothing."""
    from proofgames.isolation.party import serve

    events: list[str] = []
    calls = [{"type": "call", "method": "m", "args": [k]} for k in range(3)]

    class Wire:
        compress = False

        def receive(self) -> Any:
            events.append("read")
            return calls.pop(0) if calls else None

        def encode(self, message: object) -> bytes:
            return json.dumps(message).encode()

        def write(self, line: bytes) -> None:
            events.append(f"wrote {json.loads(line)['value']}")

    class Server:
        def call(self, method: object, args: Any) -> int:
            return int(args[0])

        def costs(self) -> dict[str, int]:
            return {"work": 0, "queries": 0}

        def anticipate(self) -> None:
            events.append("ahead")

    assert serve(Server(), Wire()) == 0  # type: ignore[arg-type]
    one = ["read", "wrote {}", "ahead"]
    assert events == [e.format(k) for k in range(3) for e in one] + ["read"]

    inst = resolve_instance("bisection", "bb3")
    hello = {"type": "hello", "protocol": "bisection", "role": "B", "claim": 1, "seed": 0,
             "instance": inst.description, "timeout": 5.0}  # fmt: skip
    session = Session("honest", hello, Channel(io.BytesIO(), io.BytesIO()))

    def broken(ctx: object) -> None:
        raise RuntimeError("lost its way")

    session.player.anticipate = broken
    session.anticipate()  # dropped, as a failing prepare is: its calls then do the work
