"""The party's side of process isolation: ``python -m proofgames.isolation.party SPEC``.

Runs one registered strategy as a separate process that speaks the wire format of
``docs/wire.md`` on its stdin and stdout.  It reads the hello, rebuilds the instance from
its plain description (a Turing machine from its program and V's window, without running
it; other kinds by :func:`proofgames.harness.resolve_instance`), builds its *own*
:class:`~proofgames.protocols.GameContext` (its own machine, its own oracle ledger, its
own ``np.random.default_rng(seed)``), answers ``{"type": "ready"}``, and then serves V's
calls one by one: each call's plain arguments are decoded into the typed objects the
strategy expects (:class:`Configuration`, :class:`BisectionState`, a
:class:`~proofgames.protocols.Round` whose ``estimate`` draws from this process's own
sampler), and the strategy's answer goes back as ``{"type": "result", "value": ...,
"work": ..., "queries": ...}`` -- or ``{"type": "error", "message": ...}`` if it raised.

Anything the strategy prints goes to stderr: the process's real stdout is the channel.

Example (what the isolation layer runs; see :mod:`proofgames.isolation`)::

    python -m proofgames.isolation.party flip-step:at=0.25
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from .. import plugins, wire
from .._oracle import OracleLedger
from .._registry import make_strategy
from ..errors import ProofgamesError, ProtocolError
from ..instances import get_instance_kind, resolve_instance
from ..protocols import get_protocol, protocol_names
from ..protocols._catalog import Instance
from ..protocols._common import GameContext, describe_exception
from ..protocols.roles import party_arguments

USAGE = (
    "usage: python -m proofgames.isolation.party STRATEGY-SPEC"
    "  (speaks docs/wire.md on stdin/stdout)"
)


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
        self.compress = False  # V reads compressed bytes (its hello said so)

    def send(self, message: object) -> None:
        """Write one message (encoding errors raise before anything is written)."""
        self.write(self.encode(message))

    def encode(self, message: object) -> bytes:
        """One message as V reads it (compressed where the hello allowed)."""
        return wire.encode(message, compress=self.compress)

    def write(self, line: bytes) -> None:
        """Write one encoded line and flush it."""
        self._out.write(line)
        self._out.flush()

    def receive(self) -> Any:
        """The next message, or ``None`` once V has closed the channel."""
        line = self._in.readline()
        return None if not line else wire.decode(line)


def rebuild_instance(protocol: str, description: object) -> Instance:
    """The instance V described, rebuilt here; refuse if the rebuild differs.

    A kind that can (a plain Turing machine) builds it from the description alone, without
    V's set-up work (:attr:`~proofgames.instances.InstanceKind.rebuild`).
    """
    if type(description) is not dict or type(description.get("spec")) is not str:
        raise ProtocolError("the hello's instance has no spec to rebuild it from")
    kind = get_instance_kind(get_protocol(protocol).instance)
    inst = None if kind.rebuild is None else kind.rebuild(description)
    if inst is None:
        limits = {k: description[k] for k in kind.options if description.get(k) is not None}
        inst = resolve_instance(protocol, description["spec"], **limits)
    if inst.description != description:
        raise ProtocolError(f"the instance rebuilt here differs from V's: {inst.description}")
    return inst


def _int(msg: dict[str, Any], key: str) -> int:
    return wire.as_int(msg.get(key), f"the hello's {key}")


class Session:
    """One registered strategy playing one role, with its own context and randomness.

    Everything protocol-specific comes from the protocol's declared roles
    (:class:`~proofgames.protocols.ProtocolInfo` ``.roles``): which methods may be
    called, how each call's plain arguments become the typed ones the strategy expects,
    and what happens after an answer.  This class implements
    :class:`~proofgames.protocols.roles.PartySide`, what those declarations see.

    Args:
        spec: the strategy spec (``"honest"``, ``"flip-step:at=0.25"``).
        hello: the decoded hello message.
        channel: the wire, for reads during a call that relays them.
    """

    def __init__(self, spec: str, hello: dict[str, Any], channel: Channel) -> None:
        protocol = wire.as_choice(hello.get("protocol"), tuple(protocol_names()), "protocol")
        self.info = get_protocol(protocol)
        self.role = wire.as_choice(hello.get("role"), ("A", "B"), "role")
        claim, seed = _int(hello, "claim"), _int(hello, "seed")
        self.sampling = str(hello.get("sampling", "binomial"))
        self.inst = rebuild_instance(protocol, hello.get("instance"))
        self.player: Any = make_strategy(protocol, self.role, spec)
        self.rng = np.random.default_rng(seed)
        self.sample_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.view = OracleLedger(self.inst.oracle).view(self.role)
        self.channel = channel
        self.samples: Any = None
        self.state: dict[str, Any] = {}
        self.target: Any = self.inst.target
        if "witness" in hello:  # a fresh player for one witness's debate: play on M(x, w)
            w = self.target.validate_witness(wire.as_bytes(hello["witness"], "witness"))
            self.target = self.target.machine(w)
        self.ctx = GameContext(self.target, self.inst.steps, claim, self.view, self.rng)

    def costs(self) -> dict[str, int]:
        """What this process reports: the strategy's work and its oracle queries (or samples)."""
        work = getattr(self.player, "work", 0)
        queries = self.view.queries if self.samples is None else int(self.samples.sum())
        return {"work": work if type(work) is int and work >= 0 else 0, "queries": queries}

    def prepare(self) -> None:
        """Let the strategy do its heavy set-up now (``prepare(ctx)``, if it has one).

        The runner calls this right after the ready, so both isolated provers simulate at
        once, each in its own process, while V still calls them in protocol order.  A
        failure here is dropped: the strategy's calls then do (or fail at) the work.
        """
        hook = getattr(self.player, "prepare", None)
        if callable(hook):
            with contextlib.suppress(Exception):
                hook(self.ctx)

    def anticipate(self) -> None:
        """Let the strategy get ahead between calls (``anticipate(ctx)``, if it has one).

        The runner calls this right after each answer is written, before it reads V's
        next call: work the next call will need (the honest bisection B's next midpoint)
        is then done while V and the other prover take their turns.  A failure here is
        dropped, as in :meth:`prepare`.
        """
        hook = getattr(self.player, "anticipate", None)
        if callable(hook):
            with contextlib.suppress(Exception):
                hook(self.ctx)

    def call(self, method: object, args: object) -> Any:
        """Run one role method on the decoded arguments."""
        try:
            m = self.info.roles[self.role].method(method)
        except ProtocolError as exc:
            raise ProtocolError(f"prover {self.role} of {self.info.name}: {exc}") from None
        value = getattr(self.player, m.name)(*party_arguments(m, args, self))
        if m.after is not None:
            m.after(self, value)
        return value

    def play_on(self, witness: object) -> GameContext:
        """Switch to M(x, ``witness``) (a witness V accepted) and return the new context."""
        w = self.inst.target.validate_witness(wire.as_bytes(witness, "witness"))
        if self.ctx.witness != w:
            machine = self.inst.target.machine(w)
            self.ctx = GameContext(
                machine, machine.length, self.ctx.claim, self.view, self.rng, witness=w
            )
        return self.ctx

    def read(self, positions: Any) -> Any:
        """B's questions to A, relayed through V (which answers or refuses)."""
        self.channel.send({"type": "read", "positions": wire.as_positions(positions, "read")})
        msg = self.channel.receive()
        if type(msg) is dict and msg.get("type") == "entries":
            return np.array(msg.get("values"), dtype=np.int64)
        if type(msg) is dict and msg.get("type") == "error":
            raise ProtocolError(f"V refused the read: {msg.get('message')}")
        raise ProtocolError("V did not answer the read")


Server = Session  # the name of earlier releases


def serve(server: Session, channel: Channel) -> int:
    """Answer calls until V closes the channel (the strategy may get ahead between them)."""
    ahead = getattr(server, "anticipate", None)
    while (msg := channel.receive()) is not None:
        try:
            if type(msg) is not dict or msg.get("type") != "call":
                raise ProtocolError("expected a call")
            value = server.call(msg.get("method"), msg.get("args"))
            line = channel.encode({"type": "result", "value": value, **server.costs()})
        except (Exception, SystemExit) as exc:  # the strategy failed: report, keep serving
            line = channel.encode({"type": "error", "message": describe_exception(exc)[:2000]})
        channel.write(line)
        if callable(ahead):
            ahead()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: play the strategy ``argv[0]`` over stdin/stdout."""
    return run_party(sys.argv[1:] if argv is None else argv, Session, USAGE, load_plugins=True)


def run_party(
    args: list[str], build: Callable[[str, dict[str, Any], Channel], Any], usage: str,
    *, load_plugins: bool = False,
) -> int:  # fmt: skip
    """A party runner: its one argument, the hello, ``build(name, hello, channel)``, serve.

    ``build`` returns what answers calls (``call(method, args)`` and ``costs()``); a
    failure before the ready is one ``error`` message and exit status 1.
    """
    if len(args) != 1 or args[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    channel = Channel()
    try:
        if load_plugins:
            plugins.load_if_named()
    except ProofgamesError as exc:
        channel.send({"type": "error", "message": str(exc)[:2000]})
        return 1
    hello = channel.receive()
    if hello is None:
        return 0
    try:
        if type(hello) is not dict or hello.get("type") != "hello":
            raise ProtocolError("the first message must be the hello")
        channel.compress = wire.accepts(hello)
        server = build(args[0], hello, channel)
    except Exception as exc:
        channel.send({"type": "error", "message": describe_exception(exc)[:2000]})
        return 1
    channel.send({"type": "ready", "encodings": list(wire.ENCODINGS)})
    prepare = getattr(server, "prepare", None)
    if callable(prepare):
        prepare()  # heavy set-up overlaps the other prover's (V's first call waits for it)
    return serve(server, channel)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # nothing left to tear down: skip the interpreter's slow shutdown
