"""Shared pieces of every protocol: the driver's party calls, forfeits, costs, records.

The trust boundary lives here.  A party is untrusted code: V calls it only through
:class:`Party`, copies and canonicalizes what it sends (:mod:`proofgames.wire`), hands it
only its own context (:class:`GameContext`), and decides forfeits from its own record
(:attr:`Debate.blamed`).  See ``docs/trust-model.md`` for what in-process play cannot rule
out.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from .. import interrupts
from .._oracle import PARTIES, Oracle, OracleLedger, OracleView
from .._registry import StrategySpec
from .._seeds import check_seed, check_timeout
from ..errors import ProofgamesError
from ..wire import Malformed
from ._calls import (
    THREADED_STEPS,
    Raised,
    SetUp,
    check_reply,
    describe_exception,
    run_move,
    shown_exception,
)
from ._outcome import TALLIED, Costs, DebateCosts, Message, Outcome, ProverReply, copy_tallied

__all__ = [
    "Costs", "Debate", "DebateCosts", "Forfeit", "GameContext", "Message", "Outcome",
    "Party", "ProverReply", "describe_exception", "player_spec", "reported_queries",
    "spawn_rngs",
]  # fmt: skip

T = TypeVar("T")


class Forfeit(Exception):
    """Raised by V's own code once a party has lost; the loser is the debate's record.

    A party cannot end a game by raising this: whatever escapes a party's call is that
    party's forfeit (see :meth:`Party.call`), and the verdict is taken from
    :attr:`Debate.blamed`, never from an exception's arguments.
    """

    def __init__(self, party: str, reason: str) -> None:
        super().__init__(f"{party} forfeits: {reason}")
        self.party = party
        self.reason = reason


@dataclass
class GameContext:
    """What a player sees when the game starts: the public instance and its own resources.

    Every field is the party's own: ``machine`` is a private copy of the instance (changing
    it changes nothing V uses), ``oracle`` counts only this party's queries, and ``rng`` is
    this party's stream alone.

    Attributes:
        machine: the party's copy of the machine under debate.
        steps: T.
        claim: the output A asserts.
        oracle: this player's counted oracle access.
        rng: this player's own random generator.
        progress: optional callback for long simulations (steps done).
        witness: the witness V accepted, when the debate is on M(x, w) (public).

    """

    machine: Any
    steps: int
    claim: int
    oracle: OracleView
    rng: np.random.Generator
    progress: Callable[[int], None] | None = None
    witness: bytes | None = None


class Party:
    """V's handle on one untrusted party: every call into it goes through :meth:`call`.

    Args:
        name: ``"A"`` or ``"B"``.
        player: the party's object (a registered strategy or any object with the role's
            methods).
        debate: the debate whose record a forfeit goes into.
        timeout: seconds allowed per call: :meth:`call` checks it when the call returns,
            :meth:`acall` pre-empts the call.
        trusted: the library's own model-backed party (its model client runs on the
            run's event loop, and its ``debate.stop_on`` errors stop the run instead of
            losing); every other party is untrusted.
    """

    def __init__(
        self, name: str, player: object, debate: Debate, timeout: float | None,
        trusted: bool = False,
    ) -> None:  # fmt: skip
        self.name, self._player, self._debate, self._timeout = name, player, debate, timeout
        self._trusted = trusted
        self._setup: SetUp | None = None
        self.sets_up = True  # False: no set-up in a thread (its calls do the work)

    def set_up(self, ctx: GameContext) -> None:
        """Start the party's own set-up, its ``prepare(ctx)`` if it has one, in a thread.

        V goes on meanwhile (with the other party's set-up, or its own calls); the
        party's next call waits for it, and that wait is part of the call's time (its
        timeout included).  V also waits for it before the verdict, so that the steps a
        party reports never depend on where its set-up was when the game ended.  On a
        run shorter than :data:`~._calls.THREADED_STEPS` steps, or for one object that
        plays both roles (its set-up would run beside its own calls), there is no set-up:
        the party's calls do the work, as they must when ``prepare`` fails.
        """
        self.settle()  # one set-up at a time: a new context waits for the last one's
        try:
            hook = getattr(self._player, "prepare", None)
        except Exception:  # a hostile attribute: no set-up (its calls do the work)
            hook = None
        long_run = type(ctx.steps) is int and ctx.steps >= THREADED_STEPS
        if callable(hook) and long_run and self.sets_up:
            self._setup = SetUp(hook, ctx, self.name)

    def settle(self, since: float | None = None) -> bool:
        """Wait for the party's set-up, up to its timeout; ``False`` if it overran.

        ``since``: when the call that waits began (its time counts against the timeout).
        """
        setup, self._setup = self._setup, None
        if setup is None or self._timeout is None:
            return setup is None or setup.wait(None)
        spent = 0.0 if since is None else time.perf_counter() - since
        return setup.wait(max(0.0, self._timeout - spent))

    def call(
        self,
        what: str,
        method: str,
        *args: Any,
        parse: Callable[[Any], T] | None = None,
    ) -> Any:
        """Call ``method`` of the party; return ``parse`` of what it sent (V's own copy).

        Whatever escapes the call (any exception, ``Forfeit``, ``SystemExit`` and a
        ``KeyboardInterrupt`` the party raises included), an overrun of the timeout, and
        a message ``parse`` refuses, make this party forfeit. The user's SIGINT or
        SIGTERM during the call is no move of the party's: it raises
        :class:`~proofgames.interrupts.Interrupted` and decides nothing.  A forfeit
        recorded during the call (say, by a callback V handed to it) stands, whatever the
        party did with the exception.
        """
        d = self._debate
        d.check()
        start = time.perf_counter()
        with interrupts.guard():
            if not self.settle(start):
                d.forfeit(self.name, f"{what} timed out (its set-up ran past {self._timeout:.3g}s)")
            try:
                raw = getattr(self._player, method)(*args)
            except BaseException as exc:
                if interrupts.by_user(exc):
                    raise
                d.blame(self.name, f"{what} raised {shown_exception(exc)}")
                raw = None
            interrupts.check()  # a party that swallowed the user's signal cannot hide it
        d.check()
        elapsed = time.perf_counter() - start
        if self._timeout is not None and elapsed > self._timeout:
            d.forfeit(self.name, f"{what} timed out ({elapsed:.3g}s > {self._timeout:.3g}s)")
        return self._parsed(what, raw, parse)

    async def acall(
        self, what: str, method: str, *args: Any, parse: Callable[[Any], T] | None = None,
    ) -> Any:  # fmt: skip
        """:meth:`call` for a party whose moves may be coroutines or may block.

        The same forfeit rule, with the timeout pre-empting the call: an untrusted party
        runs in a daemon thread of its own (:func:`~._calls.run_move`), abandoned at the
        timeout; a trusted one is awaited on the run's loop, and only its
        ``debate.stop_on`` errors pass (the run stops; no one forfeits).  A
        :class:`ProverReply` is unwrapped and its reported costs, once checked, go into
        ``debate.tally``; costs out of range are the party's forfeit.
        """
        import asyncio  # here, not at the top: only async callers pay its import

        d = self._debate
        d.check()
        if self._setup is not None:  # waited for off the run's loop, within the timeout
            start = time.perf_counter()
            if not await asyncio.to_thread(self.settle, start):
                d.forfeit(self.name, f"{what} timed out (its set-up ran past {self._timeout:g} s)")
        try:
            with interrupts.guard():
                if self._trusted:
                    move = getattr(self._player, method)(*args)
                else:
                    move = run_move(self._player, method, args)
                raw = await asyncio.wait_for(move, self._timeout)
                interrupts.check()
        except asyncio.TimeoutError:
            d.forfeit(self.name, f"{what} timed out after {self._timeout:g} s")
        except Raised as carried:
            d.forfeit(self.name, f"{what} raised {shown_exception(carried.raised)}")
        except BaseException as exc:
            if interrupts.by_user(exc) or (self._trusted and isinstance(exc, d.stop_on)):
                raise
            d.forfeit(self.name, f"{what} raised {shown_exception(exc)}")
        d.check()
        if type(raw) is ProverReply:
            wrong = check_reply(raw)
            if wrong is not None:
                d.forfeit(self.name, wrong)
            d.tally.prover_input_tokens += raw.input_tokens
            d.tally.prover_output_tokens += raw.output_tokens
            d.tally.prover_calls[self.name] = d.tally.prover_calls.get(self.name, 0) + raw.calls
            d.tally.add_money(None if raw.cost_usd is None else float(raw.cost_usd))
            raw = raw.value
        return self._parsed(what, raw, parse)

    def _parsed(self, what: str, raw: Any, parse: Callable[[Any], T] | None) -> Any:
        """``parse(raw)``, V's own copy; a message it refuses is this party's forfeit."""
        if parse is None:
            return raw
        d = self._debate
        try:
            return parse(raw)
        except Malformed as exc:
            d.forfeit(self.name, f"sent a malformed {what}: {exc.reason}")
        except (ProofgamesError, OverflowError, ValueError, TypeError) as exc:
            d.forfeit(self.name, f"sent a malformed {what}: {shown_exception(exc)}")
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def reported_queries(self) -> int:
        """Oracle queries a party in its own process reports (V cannot count them itself)."""
        return reported_queries(self._player)

    @property
    def work(self) -> int:
        """Machine steps the party reports having simulated (self-reported; 0 if not an int)."""
        try:
            w = getattr(self._player, "work", 0)
        except BaseException:
            return 0
        return int(w) if type(w) in (int, np.int64) and w >= 0 else 0


def reported_queries(player: object) -> int:
    """What an isolated player's process reports it queried; 0 for in-process players."""
    if not getattr(type(player), "isolated", False):
        return 0
    q = getattr(player, "queries", 0)
    return q if type(q) is int and q >= 0 else 0


def player_spec(player: object, protocol: str, role: str) -> StrategySpec:
    """Who played, read once and copied: a registered spec, or the class name of a custom one.

    ``None`` (no one plays the role, as B in a one-prover baseline) is ``"none"``.
    """
    if player is None:
        return StrategySpec(protocol, role, "none")
    try:
        spec = getattr(player, "spec", None)
    except BaseException:
        spec = None
    if type(spec) is StrategySpec:
        args = tuple(
            (str(k), v if type(v) in (int, float, str, bool, type(None)) else repr(v)[:80])
            for k, v in spec.args
        )
        return StrategySpec(str(spec.protocol), str(spec.role), str(spec.name), args)
    name = type.__getattribute__(type(player), "__name__")
    return StrategySpec(protocol, role, f"custom:{name}")


class Debate:
    """Bookkeeping every protocol shares: clock, ledgers, party RNGs, forfeits, message log.

    Each party gets its own oracle ledger (over its own copy of the oracle) and its own
    random stream; V keeps its ledger, its stream and its machine to itself.

    Args:
        protocol: the protocol's name.
        prover_a: A's player.
        prover_b: B's player.
        oracle: the oracle the machine queries.
        seed: root seed; A, B and V get independent streams split from it.
        timeout: seconds allowed per party call.
        trusted: the classes of the library's own model-backed parties (see
            :class:`Party`); a party is trusted only if its type is one of them exactly.
        stop_on: what a trusted party may raise to stop the run (its model failed).
    """

    def __init__(
        self,
        protocol: str,
        prover_a: object,
        prover_b: object,
        oracle: Oracle | None,
        seed: int | None,
        timeout: float | None = None,
        *,
        trusted: tuple[type, ...] = (),
        stop_on: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.protocol, self.seed, self.stop_on = protocol, seed, stop_on
        timeout = check_timeout(timeout)
        self.specs = {
            "A": player_spec(prover_a, protocol, "A"),
            "B": player_spec(prover_b, protocol, "B"),
        }
        self.parties = {
            p: Party(p, player, self, timeout, type(player) in trusted)
            for p, player in (("A", prover_a), ("B", prover_b))
        }
        if prover_a is prover_b:  # one object plays both roles: no set-up beside its calls
            for party in self.parties.values():
                party.sets_up = False
        self.tally = DebateCosts()  # what judges and provers report, as the debate runs
        self.start = time.perf_counter()
        self.ledger = OracleLedger(oracle)
        self._party_ledgers = {p: OracleLedger(copy.deepcopy(oracle)) for p in ("A", "B")}
        self.rng = dict(zip(PARTIES, spawn_rngs(seed, 3), strict=True))
        self.messages: list[Message] = []
        self.blamed: tuple[str, str] | None = None
        self._progress_lock = threading.Lock()

    def blame(self, party: str, reason: str) -> None:
        """Record that ``party`` lost (only the first forfeit of a debate counts)."""
        if self.blamed is None:
            self.blamed = (party, reason)

    def forfeit(self, party: str, reason: str) -> None:
        """Record ``party``'s loss and stop the game."""
        self.blame(party, reason)
        self.check()

    def check(self) -> None:
        """Stop the game if a party has lost."""
        if self.blamed is not None:
            raise Forfeit(*self.blamed)

    def context(
        self,
        party: str,
        machine: Any,
        steps: int,
        claim: int,
        progress: Callable[[int], None] | None,
        witness: bytes | None = None,
    ) -> GameContext:
        """What ``party`` sees: its own copy of the instance, its oracle view and its RNG.

        The party's set-up starts with it (:meth:`Party.set_up`): both provers' set-ups run
        at once, each in a thread of its own, as isolated provers' processes do.
        """
        ctx = GameContext(
            copy.deepcopy(machine),
            steps,
            claim,
            self._party_ledgers[party].view(party),
            self.rng[party],
            None if progress is None else self._serialized(progress),
            witness,
        )
        self.parties[party].set_up(ctx)
        return ctx

    def _serialized(self, progress: Callable[[int], None]) -> Callable[[int], None]:
        """``progress``, called by one party at a time (set-ups run in threads)."""
        lock = self._progress_lock

        def report(steps: int) -> None:
            with lock:
                progress(steps)

        return report

    def say(self, round: int, sender: str, kind: str, content: Any) -> None:
        """Append a message to the transcript."""
        self.messages.append(Message(round, sender, kind, content))

    def loss(self) -> tuple[int, str]:
        """The verdict and reason once a party has forfeited."""
        if self.blamed is None:  # pragma: no cover - V raises Forfeit only after blaming
            raise RuntimeError("a Forfeit was raised without a recorded loser")
        party, reason = self.blamed
        return (0 if party == "A" else 1), f"{party} loses: {reason}"

    def outcome(
        self,
        machine: str,
        steps: int,
        claim: int,
        verdict: int,
        reason: str,
        *,
        rounds: int,
        reads: int,
        unit: str,
        bits: int,
        verifier_steps: int,
        b_reads: int,
        queries: int | None = None,
    ) -> Outcome:
        """Close the debate: log V's verdict and assemble the record with every cost.

        ``queries``: V's oracle queries where V's oracle is not the debate's oracle
        ledger (a judge's calls, counted by the caller).
        """
        self.say(self.messages[-1].round if self.messages else 0, "V", "verdict", verdict)
        for party in self.parties.values():
            party.settle()  # its reported steps, once its set-up is over
        party_counts = {
            p: ledger.counts()[p] + self.parties[p].reported_queries
            for p, ledger in self._party_ledgers.items()
        }
        costs = Costs(
            rounds=rounds,
            verifier_reads=reads,
            verifier_read_unit=unit,
            verifier_bits=bits,
            verifier_queries=self.ledger.counts()["V"] if queries is None else queries,
            verifier_steps=verifier_steps,
            prover_steps={p: self.parties[p].work for p in ("A", "B")},
            prover_queries=party_counts,
            prover_reads={"A": 0, "B": b_reads},
            seconds=time.perf_counter() - self.start,
            **{k: copy_tallied(getattr(self.tally, k)) for k in TALLIED},
        )
        return Outcome(
            self.protocol,
            machine,
            steps,
            claim,
            verdict,
            "A" if verdict else "B",
            reason,
            self.specs["A"],
            self.specs["B"],
            self.seed,
            tuple(self.messages),
            costs,
            forfeit=self.blamed[0] if self.blamed else None,
        )


def spawn_rngs(seed: int | None, n: int) -> list[np.random.Generator]:
    """Independent generators for the parties, split from one seed."""
    seq = np.random.SeedSequence(check_seed(seed))
    return [np.random.default_rng(s) for s in seq.spawn(n)]
