#!/usr/bin/env python3
"""An honest bisection prover A that knows nothing of proofgames but its wire format.

It imports only the standard library, numpy and numba.  It speaks ``docs/wire.md`` on
stdin/stdout (one JSON object per line): it reads the hello, rebuilds the Turing machine
from the plain instance description (the Busy Beaver text format, the tape window S, the
head's starting cell), simulates the whole run once with a compiled loop while keeping
evenly spaced checkpoints, answers ``{"type": "ready"}``, and then answers ``final`` and
``midpoint`` truthfully: a midpoint is recomputed from the nearest checkpoint.  Where the
hello lists ``"zlib"`` in its ``encodings`` (proofgames' V does), it sends its tapes
compressed (``__zlib__``): bb5's 12,289-cell tape in about 90 bytes instead of 16 KB.

Play it against proofgames' honest B (it should win: its claims are all true)::

    from proofgames.harness import play
    out = play("bisection", "bb5", claim=1,
               a=[sys.executable, "examples/standalone_bisection_prover.py"],
               b="honest", isolation="process")
    assert out.winner == "A"

Step semantics (as ``proofgames.machines.turing``): states are numbered 0..n-1, HALT is n
and OVERFLOW n+1; both are absorbing.  A step reads the symbol under the head, writes,
moves and changes state; a move off the tape window writes the symbol, leaves the head
where it is and enters OVERFLOW.  ``Z`` (and ``H`` for machines with fewer than 8 states)
is the halt state; ``---`` halts without writing or moving.
"""

from __future__ import annotations

import base64
import json
import sys
import zlib
from typing import Any

import numpy as np
from numba import njit

MEMORY = 64 << 20  # bytes of checkpoints
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def parse(text: str, states: int, symbols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat transition tables ``write, move, next`` indexed by ``state * symbols + symbol``."""
    groups = text.strip().split("_")
    if len(groups) != states or any(len(g) != 3 * symbols for g in groups):
        raise ValueError(f"program {text!r} is not {states} states x {symbols} symbols")
    halts = {"Z"} | ({"H"} if states < 8 else set())
    write = np.zeros(states * symbols, dtype=np.uint8)
    move = np.zeros(states * symbols, dtype=np.int64)
    nxt = np.zeros(states * symbols, dtype=np.int64)
    for q, group in enumerate(groups):
        for s in range(symbols):
            i, tr = q * symbols + s, group[3 * s : 3 * s + 3]
            if tr == "---":
                write[i], move[i], nxt[i] = s, 0, states
                continue
            write[i], move[i] = int(tr[0]), 1 if tr[1] == "R" else -1
            nxt[i] = states if tr[2] in halts else LETTERS.index(tr[2])
    return write, move, nxt


@njit(cache=True)
def advance(write, move, nxt, nsym, halt, overflow, tape, head, state, steps):  # type: ignore[no-untyped-def]
    """Run at most ``steps`` steps in place; return ``(head, state, steps simulated)``."""
    size = tape.shape[0]
    done = 0
    while done < steps and state < halt:
        i = state * nsym + tape[head]
        h = head + move[i]
        tape[head] = write[i]
        if 0 <= h < size:
            head = h
            state = nxt[i]
        else:
            state = overflow
        done += 1
    return head, state, done


@njit(cache=True)
def checkpointed(write, move, nxt, nsym, halt, overflow, tape, head, state, steps, every,
                 tapes, heads, states):  # type: ignore[no-untyped-def]  # fmt: skip
    """The whole run, storing the configuration at every multiple of ``every`` steps."""
    work = 0
    tapes[0, :] = tape
    heads[0], states[0] = head, state
    for k in range(1, tapes.shape[0]):
        n = min(every, steps - (k - 1) * every)
        head, state, done = advance(write, move, nxt, nsym, halt, overflow, tape, head, state, n)
        work += done
        tapes[k, :] = tape
        heads[k], states[k] = head, state
    return work


class Run:
    """The honest run of the described machine, with checkpoints."""

    def __init__(self, desc: dict[str, Any], compress: bool = False) -> None:
        self.compress = compress
        if desc.get("kind") != "turing-machine":
            raise ValueError(f"this prover plays plain Turing machines, not {desc.get('kind')!r}")
        self.states, self.symbols = int(desc["states"]), int(desc["symbols"])
        self.halt, self.overflow = int(desc["halt"]), int(desc["overflow"])
        self.tables = parse(desc["program"], self.states, self.symbols)
        self.steps, self.space, origin = int(desc["steps"]), int(desc["space"]), int(desc["origin"])
        count = max(2, min(self.steps + 1, MEMORY // max(1, self.space + 16)))
        self.every = max(1, -(-self.steps // (count - 1)))
        count = -(-self.steps // self.every) + 1
        self.tapes = np.zeros((count, self.space), dtype=np.uint8)
        self.heads = np.zeros(count, dtype=np.int64)
        self.states_at = np.zeros(count, dtype=np.int64)
        tape = np.zeros(self.space, dtype=np.uint8)
        self.work = int(
            checkpointed(*self.tables, self.symbols, self.halt, self.overflow, tape, origin, 0,
                         self.steps, self.every, self.tapes, self.heads, self.states_at)
        )  # fmt: skip

    def at(self, t: int) -> dict[str, Any]:
        """The configuration after ``t`` steps, in the wire format."""
        if not 0 <= t <= self.steps:
            raise ValueError(f"time {t} is outside [0, {self.steps}]")
        k = t // self.every
        tape, head, state = self.tapes[k].copy(), int(self.heads[k]), int(self.states_at[k])
        head, state, done = advance(*self.tables, self.symbols, self.halt, self.overflow, tape,
                                    head, state, t - k * self.every)  # fmt: skip
        self.work += int(done)
        data = tape.tobytes()
        form = {"__bytes__": base64.b64encode(data).decode()}
        if self.compress:
            form = {"__zlib__": base64.b64encode(zlib.compress(data, 1)).decode()}
        return {"state": int(state), "head": int(head), "tape": form}


def send(out: Any, message: dict[str, Any]) -> None:
    """One message per line, flushed."""
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    out.flush()


def answer(run: Run, message: Any) -> dict[str, Any]:
    """The reply to one call."""
    if not isinstance(message, dict) or message.get("type") != "call":
        return {"type": "error", "message": "expected a call"}
    method, args = message.get("method"), message.get("args") or []
    if method == "final":
        value = run.at(run.steps)
    elif method == "midpoint":
        state = args[0]
        value = run.at(int(state["start_time"]) + int(state["length"]) // 2)
    else:
        return {"type": "error", "message": f"bisection prover A has no method {method!r}"}
    return {"type": "result", "value": value, "work": run.work}


def main() -> int:
    """Read the hello, simulate, say ready, answer calls until stdin closes."""
    out = sys.stdout
    hello = json.loads(sys.stdin.readline() or "null")
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        return 1
    try:
        if (hello.get("protocol"), hello.get("role")) != ("bisection", "A"):
            raise ValueError("this program plays only prover A of the bisection protocol")
        encodings = hello.get("encodings")
        run = Run(hello["instance"], isinstance(encodings, list) and "zlib" in encodings)
    except (ValueError, KeyError, TypeError) as exc:
        send(out, {"type": "error", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    send(out, {"type": "ready"})
    for line in sys.stdin:
        try:
            reply = answer(run, json.loads(line))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            reply = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
        send(out, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
