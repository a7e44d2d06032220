"""Red team: strategy code attacks the verifier from inside the process, and must lose.

Each test is an attack a hostile prover can mount without breaking a protocol rule: it
controls only its own code and what it returns.  Every attack must lose (or gain nothing),
with a recorded reason, and V's cost claims must stay true.  The deterministic attacks use
the 5-state champion on a 1,000-step window and the 2-state champion; the stochastic ones
use the paper's constants, where the theorem bounds a false claim's acceptance by 2/5.
"""

from __future__ import annotations

import contextlib
import math
import signal
from typing import Any

import numpy as np
import pytest

from proofgames import Configuration, ProofgamesError, ProtocolError
from proofgames.interrupts import Interrupted
from proofgames.machines import TableauTranscript, TuringMachine
from proofgames.machines.sat import SatProblem
from proofgames.protocols import (
    Forfeit,
    play_bisection,
    play_cross_examination,
    play_witness,
)
from proofgames.strategies import make_strategy

from .redteam_support import reachable

BB5 = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA"


def honest(protocol: str, role: str) -> Any:
    return make_strategy(protocol, role, "honest")


@pytest.fixture(scope="module")
def bb5() -> TuringMachine:
    return TuringMachine.sized(BB5, 1000)  # still running at T = 1000: the truth is 0


@pytest.fixture(scope="module")
def bb2() -> TuringMachine:
    return TuringMachine.sized("1RB1LB_1LA1RZ", 6)  # halts at 6: the truth is 1


def cost_claims_hold(out: Any) -> None:
    """V's reads stay within the theorem's constant, whatever the parties did."""
    if out.protocol == "bisection":
        assert out.costs.verifier_reads <= math.ceil(math.log2(max(2, out.steps))) + 2
    else:
        assert out.costs.verifier_reads <= 5
    assert out.costs.verifier_queries <= 1


# ----------------------------------------------------------- raising the library's own errors


class FramingA:
    """A liar that ends the game by raising the library's Forfeit, naming B."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def final(self, ctx: Any) -> Any:
        raise self.exc

    commit = witness = final


class FramingB:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def dispute(self, ctx: Any, state: Any, mid: Any) -> Any:
        raise self.exc

    def challenge(self, ctx: Any, read: Any) -> Any:
        raise self.exc


THROWN = [
    Forfeit("B", "B cheated"),
    Forfeit("A", "A cheated"),
    ProtocolError("the protocol is broken"),
    ProofgamesError("library failure"),
    SystemExit(0),
    KeyboardInterrupt(),
    Interrupted(signal.SIGINT),  # the user's interrupt, forged: no signal came
    GeneratorExit(),
]


@pytest.mark.parametrize("exc", THROWN, ids=lambda e: type(e).__name__ + str(e.args[:1]))
def test_a_liar_raising_any_exception_loses_a_false_claim(bb2, exc):
    out = play_bisection(bb2, 6, 0, FramingA(exc), honest("bisection", "B"))
    assert (out.winner, out.forfeit) == ("B", "A") and out.reason.startswith("A loses: final")
    out = play_cross_examination(TableauTranscript(bb2, 6), 0, FramingA(exc), honest(CX, "B"))
    assert (out.winner, out.forfeit) == ("B", "A")
    unsat = SatProblem.from_dimacs("p cnf 1 2\n1 0\n-1 0\n", name="unsat")
    out = play_witness(unsat, 1, FramingA(exc), honest("witness", "B"))
    assert (out.winner, out.forfeit) == ("B", "A")


@pytest.mark.parametrize("exc", THROWN, ids=lambda e: type(e).__name__ + str(e.args[:1]))
def test_a_disputer_raising_any_exception_cannot_beat_a_true_claim(bb2, exc):
    out = play_bisection(bb2, 6, 1, honest("bisection", "A"), FramingB(exc))
    assert (out.winner, out.forfeit) == ("A", "B") and "B loses: dispute raised" in out.reason
    out = play_cross_examination(TableauTranscript(bb2, 6), 1, honest(CX, "A"), FramingB(exc))
    assert (out.winner, out.forfeit) == ("A", "B")


CX = "cross-examination"


# ------------------------------------------------------------ lying objects as messages


class AlwaysEqual(Configuration):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = Configuration.__hash__


class ShapeShifter(int):
    """An int whose every conversion answers differently."""

    calls = 0

    def __index__(self) -> int:
        ShapeShifter.calls += 1
        return ShapeShifter.calls

    __int__ = __index__

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True


class LyingStr(str):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("first")


class LiarWithObjects:
    """Claims the non-halting bb5 run halts, with objects V might keep or compare.

    ``eq``: every configuration it sends compares equal to anything.  ``mutate``: it sends a
    halted final configuration and true midpoints, and in the last round rewrites the final
    configuration it sent (and the state it was shown) into the true configuration, so that
    a V holding A's objects would see one valid step at the end.
    """

    def __init__(self, kind: str) -> None:
        self.kind, self.inner = kind, honest("bisection", "A")
        self.halted: Configuration | None = None

    def final(self, ctx: Any) -> Any:
        self.inner.final(ctx)
        init = ctx.machine.initial()
        cls = AlwaysEqual if self.kind == "eq" else Configuration
        self.halted = cls(ctx.machine.program.halt, init.head, init.tape)
        return self.halted

    def midpoint(self, ctx: Any, state: Any) -> Any:
        mid = self.inner.midpoint(ctx, state)
        if self.kind == "eq":
            return AlwaysEqual(mid.state, mid.head, mid.tape)
        if state.length == 2:  # next V checks step(mid) == the final configuration
            true_end = ctx.machine.step(mid)
            for name in ("state", "head", "tape"):
                object.__setattr__(self.halted, name, getattr(true_end, name))
            object.__setattr__(state, "end", true_end)
        return mid


@pytest.mark.parametrize("kind", ["eq", "mutate"])
def test_configurations_that_lie_or_change_after_sending_cannot_win(bb5, kind):
    out = play_bisection(bb5, 1000, 1, LiarWithObjects(kind), honest("bisection", "B"))
    assert out.winner == "B", out.reason
    cost_claims_hold(out)


def test_a_configuration_subclass_is_refused_even_when_honest(bb2):
    class Sub(Configuration):
        pass

    class SubA:
        def final(self, ctx: Any) -> Any:
            c = ctx.machine.advance(ctx.machine.initial(), 6, ctx.oracle)
            return Sub(c.state, c.head, c.tape)

    out = play_bisection(bb2, 6, 1, SubA(), honest("bisection", "B"))
    assert out.forfeit == "A" and "must be a Configuration, got a Sub" in out.reason


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (LyingStr("first"), "dispute must be one of"),
        ("both", "dispute must be one of"),
        (None, "dispute must be one of"),
        (b"first", "dispute must be one of"),
    ],
)
def test_a_dispute_that_is_not_a_plain_choice_loses(bb2, value, why):
    class B:
        def dispute(self, ctx: Any, state: Any, mid: Any) -> Any:
            return value

    out = play_bisection(bb2, 6, 1, honest("bisection", "A"), B())
    assert out.forfeit == "B" and why in out.reason


BAD_POSITIONS = [
    ShapeShifter(3),
    True,
    -1,
    10**30,
    float("nan"),
    3.0,
    np.float64(2.0),
    "3",
    np.array([3]),
]


@pytest.mark.parametrize("value", BAD_POSITIONS, ids=repr)
def test_a_challenge_that_is_not_a_plain_position_loses(bb2, value):
    class B:
        def challenge(self, ctx: Any, read: Any) -> Any:
            return value

    out = play_cross_examination(TableauTranscript(bb2, 6), 1, honest(CX, "A"), B())
    assert (out.winner, out.forfeit) == ("A", "B"), out.reason
    assert "B loses: sent a malformed challenge" in out.reason


class Entries:
    """A's transcript answers: honest except for what ``spoil`` does to them."""

    def __init__(self, spoil: Any) -> None:
        self.inner, self.spoil = honest(CX, "A"), spoil

    def commit(self, ctx: Any) -> None:
        self.inner.commit(ctx)

    def entries(self, ctx: Any, positions: Any) -> Any:
        return self.spoil(self.inner.entries(ctx, positions))


class Shifty(np.ndarray):
    """An array subclass whose values change once they have been read."""

    def __array_finalize__(self, obj: Any) -> None:
        pass


SPOILS = {
    "float dtype": lambda v: v.astype(np.float64),
    "nan": lambda v: np.full(v.shape, np.nan),
    "inf": lambda v: np.full(v.shape, np.inf),
    "negative": lambda v: -np.ones_like(v),
    "huge python ints": lambda v: [2**70] * len(v),
    "bools": lambda v: [True] * len(v),
    "wrong shape": lambda v: np.zeros(len(v) + 1, dtype=np.int64),
    "2-d": lambda v: v.reshape(1, -1),
    "object dtype": lambda v: v.astype(object),
    "ndarray subclass": lambda v: v.view(Shifty),
    "lying ints": lambda v: [ShapeShifter(int(x)) for x in v],
    "a generator": lambda v: (int(x) for x in v),
}


@pytest.mark.parametrize("spoil", SPOILS, ids=str)
def test_malformed_entries_lose_for_a(bb2, spoil):
    out = play_cross_examination(
        TableauTranscript(bb2, 6), 1, Entries(SPOILS[spoil]), honest(CX, "B")
    )
    assert (out.winner, out.forfeit) == ("B", "A"), (spoil, out.reason)
    cost_claims_hold(out)


def test_an_array_changed_after_sending_does_not_change_what_v_holds(bb2):
    kept: list[np.ndarray] = []

    def keep(v: np.ndarray) -> np.ndarray:
        kept.append(v)
        for earlier in kept[:-1]:
            earlier[:] = 0  # rewrite every answer V has already received
        return v

    out = play_cross_examination(TableauTranscript(bb2, 6), 1, Entries(keep), honest(CX, "B"))
    assert out.winner == "A" and out.forfeit is None, out.reason


# ------------------------------------------------------------- reaching beyond your context


class Spy:
    """Records everything V hands it, then plays honestly."""

    def __init__(self, protocol: str, role: str) -> None:
        self.inner, self.got = honest(protocol, role), []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def spy(*args: Any) -> Any:
            self.got.append(args)
            return method(*args)

        return spy


def test_a_context_reaches_only_its_own_generator_machine_and_ledger(bb2):
    a, b = Spy("bisection", "A"), Spy("bisection", "B")
    out = play_bisection(bb2, 6, 1, a, b)
    assert out.winner == "A"
    objs_a, objs_b = reachable(a.got), reachable(b.got)
    gens_a = {id(o) for o in objs_a if isinstance(o, np.random.Generator)}
    gens_b = {id(o) for o in objs_b if isinstance(o, np.random.Generator)}
    assert len(gens_a) == 1 and len(gens_b) == 1 and gens_a.isdisjoint(gens_b)
    assert all(o is not bb2 for o in objs_a + objs_b)  # never V's machine
    ledgers_a = {id(o) for o in objs_a if type(o).__name__ == "OracleLedger"}
    ledgers_b = {id(o) for o in objs_b if type(o).__name__ == "OracleLedger"}
    assert ledgers_a.isdisjoint(ledgers_b)


class Patcher:
    """A liar that monkeypatches the machine it is given, then lies about the output."""

    def final(self, ctx: Any) -> Any:
        ctx.machine.step = lambda *args, **kw: self.halted
        ctx.machine.accepts = lambda c: 1
        ctx.machine.validate = lambda c: c
        init = ctx.machine.initial()
        self.halted = Configuration(ctx.machine.program.halt, init.head, init.tape)
        return self.halted

    def midpoint(self, ctx: Any, state: Any) -> Any:
        return self.halted


def test_patching_the_machine_in_a_context_changes_nothing_v_uses(bb5):
    out = play_bisection(bb5, 1000, 1, Patcher(), honest("bisection", "B"))
    assert out.winner == "B", out.reason
    assert bb5.accepts(bb5.initial()) == 0 and "step" not in vars(bb5)


class Charger:
    """A asks the oracle through every ledger it can find, hoping to bill B or V."""

    def __init__(self) -> None:
        self.inner = honest("bisection", "A")

    def final(self, ctx: Any) -> Any:
        ledger = ctx.oracle.ledger
        for party in ("B", "V"):
            with contextlib.suppress(Exception):
                ledger.view(party).ask(b"\x00")
        return self.inner.final(ctx)

    def midpoint(self, ctx: Any, state: Any) -> Any:
        return self.inner.midpoint(ctx, state)


def test_a_party_cannot_charge_another_partys_oracle_ledger():
    from proofgames.harness import resolve_instance

    inst = resolve_instance("bisection", "screening")
    out = play_bisection(
        inst.target, inst.steps, 1, Charger(), make_strategy("bisection", "B", "first"),
        oracle=inst.oracle,
    )  # fmt: skip
    ref = play_bisection(
        inst.target, inst.steps, 1, honest("bisection", "A"),
        make_strategy("bisection", "B", "first"), oracle=inst.oracle,
    )  # fmt: skip
    assert out.costs.prover_queries["B"] == ref.costs.prover_queries["B"]
    assert out.costs.verifier_queries == ref.costs.verifier_queries


# ---------------------------------------------------------------------------- re-entrancy


class Nested:
    """B plays a whole debate of its own inside its move, then keeps the read function."""

    def __init__(self) -> None:
        self.inner, self.read = honest(CX, "B"), None

    def challenge(self, ctx: Any, read: Any) -> Any:
        tm = TuringMachine.sized("1RB1LB_1LA1RZ", 6)
        inner = play_cross_examination(
            TableauTranscript(tm, 6), 0, make_strategy(CX, "A", "lie-output"), honest(CX, "B")
        )
        assert inner.winner == "B"  # the nested debate is its own game
        self.read = read
        return self.inner.challenge(ctx, read)


def test_reentrant_calls_into_the_protocol_do_not_disturb_the_outer_debate(bb2):
    b = Nested()
    out = play_cross_examination(TableauTranscript(bb2, 6), 1, honest(CX, "A"), b)
    assert out.winner == "A" and out.forfeit is None, out.reason
    with pytest.raises(ProtocolError, match="closed"):
        b.read([0])  # a read after the move ended is refused


# -------------------------------------------------------------------------- time and size


def test_a_party_over_its_time_limit_loses(bb2):
    import time

    class Slow:
        def dispute(self, ctx: Any, state: Any, mid: Any) -> str:
            time.sleep(0.3)
            return "first"

    out = play_bisection(bb2, 6, 1, honest("bisection", "A"), Slow(), timeout=0.1)
    assert out.forfeit == "B" and "timed out" in out.reason


def test_a_reader_asking_for_the_whole_tableau_pays_itself_and_v_reads_stay_constant(bb2):
    class Greedy:
        def challenge(self, ctx: Any, read: Any) -> int:
            read(np.arange(ctx.machine.length))
            return 0

    out = play_cross_examination(TableauTranscript(bb2, 6), 1, honest(CX, "A"), Greedy())
    cost_claims_hold(out)
    assert out.costs.prover_reads["B"] >= TableauTranscript(bb2, 6).length


def test_each_witness_gets_fresh_players():
    from proofgames.protocols.stochastic_witness import play_stochastic_witness
    from proofgames.stochastic import lean_params
    from proofgames.stochastic.problems import PanelChoice

    played: list[tuple[int, str]] = []

    made = iter(range(10**6))

    class Caching:
        def __init__(self) -> None:
            self.inner = make_strategy("stochastic", "A", "honest")

        def witnesses(self, problem: Any, n: int, rng: Any) -> Any:
            return [c for c, _ in zip(problem.candidates() * n, range(n), strict=False)]

        def announce(self, r: Any, rng: Any) -> Any:
            # numbered when it first plays (copies of an unplayed player get their own
            # number); not id(self), which a freed player's successor can reuse
            number = self.__dict__.setdefault("number", next(made))
            played.append((number, r.machine.name))
            return self.inner.announce(r, rng)

        def coin(self, r: Any, rng: Any) -> Any:
            return rng.random(r.n)

    problem = PanelChoice((0.2, 0.9, 0.4))
    res = play_stochastic_witness(
        problem, lean_params(problem.lipschitz, problem.steps), Caching(),
        make_strategy("stochastic-witness", "B", "honest"), debates=30,
    )  # fmt: skip
    assert sum(res.details["witnesses"].values()) == 30
    machines_per_player: dict[int, set[str]] = {}
    for player, machine in played:
        machines_per_player.setdefault(player, set()).add(machine)
    assert all(len(m) == 1 for m in machines_per_player.values())
    assert len({m for ms in machines_per_player.values() for m in ms}) == 3


def test_a_strategy_beyond_its_limits_is_refused_before_play_not_scored():
    from proofgames.harness import play, play_batch

    with pytest.raises(ProtocolError, match="T = 100 > 14"):
        play("stochastic", "copy-chain:t=100", claim=1, a="optimal")
    with pytest.raises(ProtocolError, match="T = 100 > 14"):
        play_batch("stochastic", "copy-chain:t=100", claim=1, b="optimal", debates=10)


def test_an_oversized_answer_is_refused_before_v_copies_it(bb2):
    import tracemalloc

    huge = np.zeros(5_000_000, dtype=np.int64)  # 40 MB, sent for a handful of positions
    tracemalloc.start()
    out = play_cross_examination(
        TableauTranscript(bb2, 6), 1, Entries(lambda v: huge), honest(CX, "B")
    )
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert out.forfeit == "A" and "shape" in out.reason
    assert peak < huge.nbytes / 4  # V never made its own copy of the 40 MB
