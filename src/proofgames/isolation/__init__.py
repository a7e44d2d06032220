"""Process isolation: each prover in its own OS process, reached only through the wire format.

With ``play(..., isolation="process")`` the harness hands V two *proxies* instead of
player objects.  A proxy has the role's methods; each call sends the arguments as plain
data (:mod:`proofgames.wire`, one JSON object per line) to the party's process, waits
for the answer under a deadline, and returns the decoded plain data, which V then
canonicalizes exactly as it does an in-process party's answer.  A party is either a
registered strategy spec (run as ``python -m proofgames.isolation.party SPEC``) or any command
(a list of arguments) that speaks the format of ``docs/wire.md``.

What this closes: a party can no longer raise into V's code, patch V's classes, modules
or closures, walk the garbage collector to V's objects, or stall past its timeout (the
wait is pre-empted and the party's process group killed).  Whatever goes wrong with the
process -- it dies, writes garbage, sends a line over ``wire.MAX_LINE``, closes its
output, answers out of turn or reports an error -- raises inside the proxy's call, which
V records as that party's forfeit.  What it does not close: a prover's costs (``work``,
``queries``) are *self-reported* by its process; V's own costs are V's measurements.

Example:
    >>> from proofgames.harness import play
    >>> out = play("bisection", "bb2", claim=1, a="honest", b="second", isolation="process")
    >>> out.winner, out.isolation, out.prover_a.name
    ('A', 'process', 'honest')
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import plugins, wire
from .._blas import quiet
from .._registry import StrategySpec, check_instance, make_strategy
from ..errors import ProofgamesError
from ..protocols import get_protocol, has_protocol, protocol_names
from ..protocols._catalog import Instance, Options
from ..protocols._common import describe_exception
from ..protocols._lockstep import round_dict
from ..protocols.bisection import state_dict
from ..protocols.roles import Method, wire_arguments
from ._child import ChildFailed, ChildProcess
from ._served import launcher

__all__ = [
    "DEFAULT_TIMEOUT",
    "STARTUP_SECONDS",
    "IsolatedPlayer",
    "PartyError",
    "isolated_players",
    "party_command",
]

DEFAULT_TIMEOUT = 600.0  # seconds per call when the debate sets no timeout
STARTUP_SECONDS = 60.0  # seconds a party's process has to answer the hello (or the timeout)
CLOSE_GRACE = 1.0  # seconds the processes get to exit on their own at the end
#: The library's own party runners (``python -m ...``): they get our source path and plugins.
RUNNERS = (["-m", "proofgames.isolation.party"], ["-m", "proofgames.language.step_party"])
Party = str | Sequence[str]
__all__ += ["round_dict", "state_dict"]  # plain forms, kept here for earlier releases' callers


def __getattr__(name: str) -> Any:
    """``ROLE_METHODS``, as earlier releases had it: derived from the protocols' roles."""
    if name == "ROLE_METHODS":
        return {p: get_protocol(p).role_methods() for p in protocol_names()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class PartyError(Exception):
    """A party's process broke the protocol or reported an error (its forfeit)."""


class _Reported(PartyError):
    """The party's own ``{"type": "error"}`` answer (its process is left running)."""


def party_command(party: Party) -> list[str]:
    """The command that runs ``party``: a spec string runs ``python -m proofgames.isolation.party``.

    Example:
        >>> party_command("honest")[1:]
        ['-m', 'proofgames.isolation.party', 'honest']
        >>> party_command(["./prover", "--fast"])
        ['./prover', '--fast']
    """
    if isinstance(party, str):
        return [sys.executable, "-m", "proofgames.isolation.party", party]
    return list(party)


def _check_party(protocol: str, role: str, party: object, inst: Instance) -> StrategySpec:
    """Who plays: a registered spec (checked here, before any process starts) or a command.

    A spec is built once here, so that an unknown name, bad arguments or an instance
    beyond the strategy's limits raise before play, exactly as in-process.
    """
    if isinstance(party, str):
        built = make_strategy(protocol, role, party)
        check_instance(built, inst.target)
        return built.spec
    if isinstance(party, (list, tuple)) and party and all(isinstance(x, str) and x for x in party):
        argv = [str(x) for x in party]
        _check_program(role, argv)
        name = _program_name(argv)
        return StrategySpec(protocol, role, f"program:{name}", (("command", shlex.join(argv)),))
    raise ProofgamesError(
        f"under process isolation prover {role} must be a registered strategy spec or a "
        f"command (a list of strings), got {type(party).__name__}"
    )


def _check_program(role: str, argv: list[str]) -> None:
    """Refuse a prover's program that cannot start: a path typo is the run's error.

    A program that starts and then fails is the prover's forfeit; one that is not there
    (or a Python script that is not there) never got to move.
    """
    if shutil.which(argv[0]) is None:
        raise ProofgamesError(
            f"prover {role}'s program {argv[0]!r} cannot be run: no such executable"
        )
    script = next((x for x in argv[1:] if not x.startswith("-")), "")
    python = os.path.basename(argv[0]).startswith("python")
    if python and script.endswith(".py") and not os.path.isfile(script):
        raise ProofgamesError(f"prover {role}'s script {script!r} does not exist")


def _program_name(argv: list[str]) -> str:
    """``prover.py`` for ``[python, prover.py, ...]``, else the program's own basename."""
    first = os.path.basename(argv[0])
    rest = [x for x in argv[1:] if not x.startswith("-")]
    if first.startswith("python") and rest:
        return os.path.basename(rest[0])
    return first


@dataclass
class _Game:
    """What every proxy of one debate shares: the public set-up and the processes."""

    protocol: str
    inst: Instance
    claim: int
    timeout: float
    startup: float
    sampling: str
    links: list[_Link] = field(default_factory=list)

    def close(self) -> None:
        """Let every process exit on its own (stdin closed), then kill what is left."""
        for link in self.links:
            link.child_close_input()
        end = time.monotonic() + CLOSE_GRACE
        for link in self.links:
            link.close(max(0.0, end - time.monotonic()))


class _Link:
    """One party's process as a role player: the hello, the ready, then calls."""

    def __init__(self, argv: list[str], label: str, hello: dict[str, Any], startup: float) -> None:
        self.label = label
        self.child: ChildProcess | None = None
        self.failure: BaseException | None = None
        self._ready = False
        self._startup = startup
        self._failed: Exception | None = None
        env = None
        if argv[1:3] in RUNNERS:  # our own runners: they import us, and every plugin
            src = str(Path(__file__).resolve().parent.parent)  # we registered
            old = os.environ.get("PYTHONPATH")
            env = dict(os.environ, PYTHONPATH=src + (os.pathsep + old if old else ""))
            env = plugins.child_environment(env)
            quiet(env)  # they load NumPy at once: its idle threads must not spin
        try:
            first = wire.encode(hello)  # the child reads it as soon as it starts
            launch = launcher(argv, env, first)
            self.child = ChildProcess(argv, label, env, launch=launch, first=first, startup=startup)
        except (OSError, ChildFailed, TimeoutError) as exc:
            self._broken(PartyError(f"{label}'s process could not be started: {exc}"))

    def _broken(self, exc: BaseException) -> None:
        if self.failure is None:
            self.failure = exc
        if self.child is not None:
            self.child.kill()

    def ready(self) -> ChildProcess:
        if self.failure is not None:
            raise self.failure
        assert self.child is not None
        if not self._ready:
            try:
                deadline = self.child.started + self._startup
                msg = self.child.receive(deadline, self._startup, "its ready message")
            except (ChildFailed, TimeoutError, wire.Malformed) as exc:
                self._broken(PartyError(f"{self.label} failed to start: {_text(exc)}"))
                raise self.failure from None  # type: ignore[misc]
            if _kind(msg) == "error":
                self._broken(PartyError(f"{self.label} refused the game: {_message(msg)}"))
                raise self.failure  # type: ignore[misc]
            if _kind(msg) != "ready":
                self._broken(PartyError(f"{self.label} sent {_shown(msg)} instead of ready"))
                raise self.failure  # type: ignore[misc]
            try:
                self.child.compress = wire.accepts(msg)
            except wire.Malformed as exc:
                self._broken(PartyError(f"{self.label} sent a malformed ready: {exc.reason}"))
                raise self.failure from None  # type: ignore[misc]
            self._ready = True
        return self.child

    def call(
        self, method: str, args: list[Any], read: Callable[[Any], Any] | None, timeout: float
    ) -> dict[str, Any]:
        """Send one call and return its result message (raise for anything else).

        A failure of V's own ``read`` callback is answered with an error message and
        raised again once the call has ended, so the forfeit V recorded in it stands.
        """
        child = self.ready()
        self._failed = None
        try:
            msg = self._exchange(child, method, args, read, timeout)
        except _Reported:
            if self._failed is not None:
                raise self._failed from None
            raise
        except (ChildFailed, TimeoutError, wire.Malformed, PartyError) as exc:
            if isinstance(exc, wire.Malformed):
                exc = PartyError(f"{self.label} sent a malformed message: {exc.reason}")
            self._broken(exc)
            if self._failed is not None:
                raise self._failed from None
            raise exc from None
        if self._failed is not None:
            raise self._failed
        return msg

    def _exchange(
        self,
        child: ChildProcess,
        method: str,
        args: list[Any],
        read: Callable[[Any], Any] | None,
        timeout: float,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        child.send({"type": "call", "method": method, "args": args}, deadline)
        while True:
            msg = child.receive(deadline, timeout, f"its answer to {method}")
            kind = _kind(msg)
            if kind == "result" and "value" in msg:
                return msg  # type: ignore[no-any-return]
            if kind == "error":
                raise _Reported(f"{self.label} reported an error: {_message(msg)}")
            if kind != "read" or read is None:
                raise PartyError(f"{self.label} sent {_shown(msg)} in answer to {method}")
            start = time.monotonic()
            try:
                reply: dict[str, Any] = {"type": "entries", "values": read(msg.get("positions"))}
            except Exception as exc:  # V's own callback raised (say, a forfeit it recorded)
                self._failed = self._failed or exc
                reply = {"type": "error", "message": describe_exception(exc)}
            deadline += time.monotonic() - start  # the reads' time is not this party's
            child.send(reply, deadline)

    def child_close_input(self) -> None:
        if self.child is not None and self.child.proc.stdin is not None:
            with suppress(OSError):
                self.child.proc.stdin.close()

    def close(self, grace: float) -> None:
        if self.child is not None:
            self.child.close(grace)


class IsolatedPlayer:
    """V's handle on a party that runs in its own OS process: a proxy with the role's methods.

    Each method V calls (the methods the protocol's role declares: ``final``,
    ``entries``, ``abort``, ...) is sent to the process as ``{"type": "call", ...}``; the
    decoded ``value`` of its result is returned, for V to canonicalize.  ``work`` and
    ``queries`` are the process's own reports (self-reported costs).

    Attributes:
        spec: who plays (the registered spec, or ``program:<name>`` for a command).
        work: machine steps the process reports having simulated so far.
        queries: oracle queries (stochastic protocols: samples) it reports so far.
    """

    isolated = True  # its costs are the process's own reports (see Party.reported_queries)

    def __init__(
        self, game: _Game, role: str, party: Party, seed: int, witness: bytes | None = None
    ) -> None:
        self.spec = _check_party(game.protocol, role, party, game.inst)
        self.work = 0
        self.queries = 0
        self._game, self._role, self._party = game, role, party
        self._methods = {m.name: m for m in get_protocol(game.protocol).roles[role].methods}
        self._seeds = np.random.SeedSequence(seed)
        hello: dict[str, Any] = {
            "type": "hello", "protocol": game.protocol, "role": role,
            "instance": game.inst.description, "claim": game.claim, "seed": seed,
            "timeout": game.timeout, "sampling": game.sampling, "encodings": list(wire.ENCODINGS),
        }  # fmt: skip
        if witness is not None:
            hello["witness"] = witness
        self._link = _Link(party_command(party), f"prover {role}", hello, game.startup)
        game.links.append(self._link)

    def wait_ready(self) -> None:
        """Wait (up to the start-up limit) until the process says it is ready.

        No call's time then includes the start-up; a failure is kept, and raised by the
        first call (the party's forfeit).
        """
        with suppress(Exception):
            self._link.ready()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name in self.__dict__.get("_methods", ()):
            return functools.partial(self._forward, name)
        raise AttributeError(f"prover {self.__dict__.get('_role', '?')} has no method {name!r}")

    def __deepcopy__(self, memo: dict[int, Any]) -> IsolatedPlayer:
        raise TypeError("an isolated player cannot be deep-copied; use .fresh(witness)")

    def fresh(self, witness: bytes | None = None) -> IsolatedPlayer:
        """A new player like this one, in a new process (a debate on M(x, ``witness``))."""
        seed = int(self._seeds.spawn(1)[0].generate_state(1, np.uint64)[0])
        player = IsolatedPlayer(self._game, self._role, self._party, seed, witness)
        player.wait_ready()
        return player

    def _forward(self, name: str, *args: Any) -> Any:
        method: Method = self._methods[name]
        encoded, read = wire_arguments(method, args)
        msg = self._link.call(name, encoded, read, self._game.timeout)
        for key in ("work", "queries"):
            if key in msg:
                n = msg[key]
                if type(n) is not int or n < 0:
                    raise PartyError(f"{self._link.label} reported {key} that is not a count")
                setattr(self, key, n)
        return msg["value"]


def _kind(msg: object) -> str | None:
    if type(msg) is dict and type(msg.get("type")) is str:
        return str(msg["type"])
    return None


def _message(msg: dict[str, Any]) -> str:
    text = msg.get("message")
    return text[:300] if type(text) is str else "(no message)"


def _shown(msg: object) -> str:
    kind = _kind(msg)
    return f"a {kind[:40]!r} message" if kind is not None else "a message without a type"


def _text(exc: BaseException) -> str:
    return exc.reason if isinstance(exc, wire.Malformed) else str(exc)


@contextmanager
def isolated_players(
    protocol: str, inst: Instance, claim: int, a: Party, b: Party, opts: Options
) -> Iterator[tuple[IsolatedPlayer, IsolatedPlayer]]:
    """Start both parties' processes; yield their proxies; kill every process at the end.

    Args:
        protocol: a registered protocol.
        inst: the instance (its ``description`` goes to each process).
        claim: what A asserts.
        a, b: registered strategy specs or commands.
        opts: the debate's options (``timeout``: seconds per call, default
            :data:`DEFAULT_TIMEOUT`; ``seed``: each process gets its own seed from it).

    Raises:
        ProofgamesError: an unknown spec, a party that is neither spec nor command, or an
            instance without a description.
    """
    if not has_protocol(protocol):
        raise ProofgamesError(f"unknown protocol {protocol!r}")
    if not inst.description:
        raise ProofgamesError(f"instance {inst.name!r} has no description to send a party")
    timeout = DEFAULT_TIMEOUT if opts.timeout is None else float(opts.timeout)
    startup = max(STARTUP_SECONDS, timeout if opts.timeout is not None else 0.0)
    game = _Game(protocol, inst, claim, timeout, startup, opts.sampling)
    for role, party in (("A", a), ("B", b)):  # refuse bad specs before starting anything
        _check_party(protocol, role, party, inst)
    sa, sb = (
        int(s.generate_state(1, np.uint64)[0]) for s in np.random.SeedSequence(opts.seed).spawn(2)
    )
    try:
        with ThreadPoolExecutor(1) as pool:  # both start at once (a served fork waits)
            started = pool.submit(IsolatedPlayer, game, "B", b, sb)
            xa = IsolatedPlayer(game, "A", a, sa)
            xb = started.result()
        xa.wait_ready()  # both processes start at once; no call is charged for start-up
        xb.wait_ready()
        yield xa, xb
    finally:
        game.close()
