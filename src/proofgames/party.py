"""The party's side of process isolation: ``python -m proofgames.party SPEC``.

Runs one registered strategy as a separate process that speaks the wire format of
``docs/wire.md`` on its stdin and stdout.  It reads the hello, rebuilds the instance from
its plain description (:func:`proofgames.harness.resolve_instance`), builds its *own*
:class:`~proofgames.protocols.GameContext` (its own machine, its own oracle ledger, its
own ``np.random.default_rng(seed)``), answers ``{"type": "ready"}``, and then serves V's
calls one by one: each call's plain arguments are decoded into the typed objects the
strategy expects (:class:`Configuration`, :class:`BisectionState`, a
:class:`~proofgames.protocols.Round` whose ``estimate`` draws from this process's own
sampler), and the strategy's answer goes back as ``{"type": "result", "value": ...,
"work": ..., "queries": ...}`` -- or ``{"type": "error", "message": ...}`` if it raised.

Anything the strategy prints goes to stderr: the process's real stdout is the channel.

Example (what the isolation layer runs; see :mod:`proofgames.isolation`)::

    python -m proofgames.party flip-step:at=0.25
"""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO

import numpy as np

from . import wire
from ._oracle import OracleLedger
from .errors import ProtocolError
from .harness import resolve_instance
from .isolation import ROLE_METHODS
from .protocols import get_protocol
from .protocols._catalog import Instance
from .protocols._common import GameContext, describe_exception
from .protocols._lockstep import LockstepParty, Round, Sampler
from .protocols.bisection import BisectionState
from .stochastic.params import StochasticParams
from .strategies import make_strategy

USAGE = "usage: python -m proofgames.party STRATEGY-SPEC  (speaks docs/wire.md on stdin/stdout)"


class Channel:
    """The party's end of the wire: stdin in, the *real* stdout out.

    File descriptor 1 is pointed at stderr, so a strategy's ``print`` cannot corrupt the
    channel; messages go to a private duplicate of the original stdout.
    """

    def __init__(self, inp: BinaryIO | None = None, out: BinaryIO | None = None) -> None:
        self._in = inp if inp is not None else sys.stdin.buffer
        if out is None:
            sys.stdout.flush()
            out = os.fdopen(os.dup(1), "wb")
            os.dup2(2, 1)
            sys.stdout = sys.stderr
        self._out = out

    def send(self, message: object) -> None:
        """Write one message (encoding errors raise before anything is written)."""
        self.write(wire.encode(message))

    def write(self, line: bytes) -> None:
        """Write one encoded line and flush it."""
        self._out.write(line)
        self._out.flush()

    def receive(self) -> Any:
        """The next message, or ``None`` once V has closed the channel."""
        line = self._in.readline()
        return None if not line else wire.decode(line)


def rebuild_instance(protocol: str, description: object) -> Instance:
    """The instance V described, rebuilt here; refuse if the rebuild differs."""
    if type(description) is not dict or type(description.get("spec")) is not str:
        raise ProtocolError("the hello's instance has no spec to rebuild it from")
    kind = get_protocol(protocol).instance
    steps = description.get("steps") if kind in ("configuration", "transcript") else None
    inst = resolve_instance(
        protocol,
        description["spec"],
        steps,
        max_steps=description.get("max_steps"),
        max_sat_work=description.get("max_sat_work"),
    )
    if inst.description != description:
        raise ProtocolError(f"the instance rebuilt here differs from V's: {inst.description}")
    return inst


def _int(msg: dict[str, Any], key: str) -> int:
    return wire.as_int(msg.get(key), f"the hello's {key}")


class Server:
    """One registered strategy playing one role, with its own context and randomness.

    Args:
        spec: the strategy spec (``"honest"``, ``"flip-step:at=0.25"``).
        hello: the decoded hello message.
        channel: the wire, for reads during ``challenge``.
    """

    def __init__(self, spec: str, hello: dict[str, Any], channel: Channel) -> None:
        self.protocol = wire.as_choice(hello.get("protocol"), tuple(ROLE_METHODS), "protocol")
        self.role = wire.as_choice(hello.get("role"), ("A", "B"), "role")
        self.claim, seed = _int(hello, "claim"), _int(hello, "seed")
        self.sampling = str(hello.get("sampling", "binomial"))
        self.inst = rebuild_instance(self.protocol, hello.get("instance"))
        self.player: Any = make_strategy(self.protocol, self.role, spec)
        self.rng = np.random.default_rng(seed)
        self._sample_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.view = OracleLedger(self.inst.oracle).view(self.role)
        self.channel = channel
        self._party: LockstepParty | None = None
        self._counts = np.zeros(0, dtype=np.int64)
        self._revealed = 0
        target = self.inst.target
        if "witness" in hello and self.protocol == "stochastic-witness":
            target = target.machine(target.validate_witness(wire.as_bytes(hello["witness"], "w")))
        self.machine = target
        steps = self.inst.steps if self.protocol == "bisection" else self._length(target)
        self.ctx = GameContext(target, steps, self.claim, self.view, self.rng)

    @staticmethod
    def _length(machine: Any) -> int:
        return int(getattr(machine, "steps", getattr(machine, "length", 0)))

    def costs(self) -> dict[str, int]:
        """What this process reports: the strategy's work and its oracle queries (or samples)."""
        work = getattr(self.player, "work", 0)
        stochastic = self.protocol.startswith("stochastic")
        queries = int(self._counts.sum()) if stochastic else self.view.queries
        return {"work": work if type(work) is int and work >= 0 else 0, "queries": queries}

    def call(self, method: object, args: object) -> Any:
        """Run one role method on the decoded arguments."""
        if type(method) is not str or method not in ROLE_METHODS[self.protocol][self.role]:
            raise ProtocolError(f"prover {self.role} of {self.protocol} has no method {method!r}")
        if type(args) is not list:
            raise ProtocolError("a call's args must be a list")
        return getattr(self, "_" + method)(*args)

    # ---------------------------------------------------------- deterministic roles
    def _final(self) -> Any:
        return self.player.final(self.ctx)

    def _midpoint(self, state: Any) -> Any:
        return self.player.midpoint(self.ctx, bisection_state(state))

    def _dispute(self, state: Any, midpoint: Any) -> Any:
        mid = wire.as_configuration(midpoint, "midpoint")
        return self.player.dispute(self.ctx, bisection_state(state), mid)

    def _commit(self) -> Any:
        return self.player.commit(self.ctx)

    def _entries(self, positions: Any) -> Any:
        return self.player.entries(self.ctx, np.array(wire.as_positions(positions, "positions")))

    def _witness(self) -> Any:
        value = self.player.witness(self.ctx)
        try:  # mirror V: once a well-formed witness is sent, A plays on M(x, w)
            w = self.inst.target.validate_witness(wire.as_bytes(value, "witness"))
        except Exception:
            return value
        self._play_on(self.inst.target.machine(w))
        return value

    def _challenge(self, *witness: Any) -> Any:
        if self.protocol == "witness":
            problem = self.inst.target
            self._play_on(problem.machine(problem.validate_witness(witness[0])))
        return self.player.challenge(self.ctx, self._read)

    def _play_on(self, machine: Any) -> None:
        self.ctx = GameContext(machine, machine.length, self.claim, self.view, self.rng)

    def _read(self, positions: Any) -> Any:
        """B's questions to A, relayed through V (which answers or refuses)."""
        self.channel.send({"type": "read", "positions": wire.as_positions(positions, "read")})
        msg = self.channel.receive()
        if type(msg) is dict and msg.get("type") == "entries":
            return np.array(msg.get("values"), dtype=np.int64)
        if type(msg) is dict and msg.get("type") == "error":
            raise ProtocolError(f"V refused the read: {msg.get('message')}")
        raise ProtocolError("V did not answer the read")

    # ------------------------------------------------------------- stochastic roles
    def _witnesses(self, n: Any) -> Any:
        return self.player.witnesses(self.inst.target, wire.as_int(n, "n"), self.rng)

    def _announce(self, r: Any) -> Any:
        return self._with_round(r, lambda rr: self.player.announce(rr, self.rng))

    def _coin(self, r: Any) -> Any:
        return self._with_round(r, lambda rr: self.player.coin(rr, self.rng))

    def _abort(self, r: Any, announced: Any, bits: Any) -> Any:
        ann = np.asarray(announced, dtype=np.float64)
        seen = None if bits is None else np.asarray(bits, dtype=np.int64)
        return self._with_round(r, lambda rr: self.player.abort(rr, self.rng, ann, seen))

    def _with_round(self, r: Any, move: Any) -> Any:
        return move(self.round(r))

    def round(self, d: Any) -> Round:
        """The party's :class:`Round` from its plain form, sampled by this process.

        The first round sets up this process's own lockstep party (machine, parameters,
        sampler, transcript); every round then reveals the bits of the prefix not yet seen.
        """
        t = wire.as_int(d["t"], "t")
        rows = np.asarray(d["rows"], dtype=np.int64)
        if self._party is None:
            size = int(rows.max()) + 1 if rows.size else 1
            self._counts = np.zeros(size, dtype=np.int64)
            sampler = Sampler(
                self.machine, self.sampling, self._sample_rng, self._counts, self.view
            )
            params = StochasticParams(**d["params"])
            self._party = LockstepParty(self.role, self.player, self.machine, params, sampler)
            self._party.start(size)
        if rows.size and int(rows.max()) >= self._counts.size:
            raise ProtocolError("a round names a debate that was not running at the start")
        prefix = np.asarray(d["prefix"], dtype=np.int64).reshape(rows.size, t)
        for done in range(self._revealed, t):
            self._party.reveal(rows, done, prefix[:, done])
        self._revealed = max(self._revealed, t)
        values = np.asarray(d["values"], dtype=np.int64)
        p = np.asarray(d["p"], dtype=np.float64)
        return self._party.round(t, rows, values, p, self.claim)


def bisection_state(d: Any) -> BisectionState:
    """A :class:`BisectionState` from its plain form (``isolation.state_dict``)."""
    if type(d) is not dict:
        raise ProtocolError("a bisection state must be an object")
    return BisectionState(
        wire.as_configuration(d.get("start"), "start"),
        wire.as_configuration(d.get("end"), "end"),
        wire.as_int(d.get("length"), "length"),
        wire.as_int(d.get("start_time"), "start_time"),
        wire.as_int(d.get("round"), "round"),
    )


def serve(server: Server, channel: Channel) -> int:
    """Answer calls until V closes the channel."""
    while (msg := channel.receive()) is not None:
        try:
            if type(msg) is not dict or msg.get("type") != "call":
                raise ProtocolError("expected a call")
            value = server.call(msg.get("method"), msg.get("args"))
            line = wire.encode({"type": "result", "value": value, **server.costs()})
        except (Exception, SystemExit) as exc:  # the strategy failed: report, keep serving
            line = wire.encode({"type": "error", "message": describe_exception(exc)[:2000]})
        channel.write(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: play the strategy ``argv[0]`` over stdin/stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    channel = Channel()
    hello = channel.receive()
    if hello is None:
        return 0
    try:
        if type(hello) is not dict or hello.get("type") != "hello":
            raise ProtocolError("the first message must be the hello")
        server = Server(args[0], hello, channel)
    except Exception as exc:
        channel.send({"type": "error", "message": describe_exception(exc)[:2000]})
        return 1
    channel.send({"type": "ready"})
    return serve(server, channel)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # nothing left to tear down: skip the interpreter's slow shutdown
