"""Strategies for the debate with a witness (Figure 2).

Prover A sends a witness and then commits to a transcript of ``M(x, w)``:

* ``honest``: a witness from the problem's complete search (DPLL for SAT) and the true
  transcript; when no witness exists it sends its best-effort assignment, still truthfully.
* ``guess``: the best-effort assignment (local search) and the true transcript.
* ``lie-output``, ``flip-step:at=F``, ``random-step``: the best-effort assignment, then the
  matching cross-examination lie so that the transcript ends in 1.
* ``malformed:kind=length|symbols``: a witness of the wrong length (or with a symbol that
  is not a bit), to exercise forfeits.

Prover B names a step, exactly as in cross-examination: ``honest``, ``random``, ``first``,
``last``.
"""

from __future__ import annotations

from .._registry import Player, register_strategy
from .._transcript import IntArray
from ..errors import ProtocolError
from ..protocols._common import GameContext
from ..protocols.witness import WitnessA
from . import cross_examination as cx
from ._runs import require_range

P = "witness"


class _A(Player, WitnessA):
    """Chooses a witness by ``search`` and delegates the transcript to a cross-examination A."""

    def __init__(self, search: str, inner: cx._A) -> None:
        self._search = search
        self._inner = inner

    def witness(self, ctx: GameContext) -> bytes:
        problem = ctx.machine
        if self._search == "solve":
            found: bytes | None = problem.solve()
            if found is not None:
                return found
        return bytes(problem.best_effort(ctx.rng))

    def commit(self, ctx: GameContext) -> None:
        self._inner.commit(ctx)
        self.work = self._inner.work

    def entries(self, ctx: GameContext, positions: IntArray) -> IntArray:
        out = self._inner.entries(ctx, positions)
        self.work = self._inner.work
        return out


class _MalformedA(Player, WitnessA):
    def __init__(self, kind: str) -> None:
        self._kind = kind

    def witness(self, ctx: GameContext) -> bytes:
        n = int(ctx.machine.witness_length)
        if self._kind == "length":
            return bytes(n + 1)
        return bytes([2]) + bytes(max(0, n - 1))

    def commit(self, ctx: GameContext) -> None:  # pragma: no cover - never reached
        raise ProtocolError("a malformed witness ends the debate before the commitment")

    def entries(self, ctx: GameContext, positions: IntArray) -> IntArray:  # pragma: no cover
        raise ProtocolError("a malformed witness ends the debate before any read")


@register_strategy(P, "A", "honest", honest=True)
def honest_a() -> _A:
    """A witness from complete search (else its best guess) and the true transcript."""
    return _A("solve", cx.honest_a())


@register_strategy(P, "A", "guess")
def guess_a() -> _A:
    """The best assignment local search finds, and the true transcript of M(x, w)."""
    return _A("guess", cx.honest_a())


@register_strategy(P, "A", "lie-output")
def lie_output_a() -> _A:
    """Best-effort witness; the true transcript with its output changed to 1."""
    return _A("guess", cx.lie_output_a())


@register_strategy(P, "A", "flip-step")
def flip_step_a(at: float = 0.5) -> _A:
    """Best-effort witness; one step near fraction ``at`` altered so the output becomes 1."""
    require_range("at", at, 0.0, 1.0)
    return _A("guess", cx.flip_step_a(at))


@register_strategy(P, "A", "random-step")
def random_step_a() -> _A:
    """Best-effort witness; like ``flip-step`` at a uniformly random step."""
    return _A("guess", cx.random_step_a())


@register_strategy(P, "A", "malformed")
def malformed_a(kind: str = "length") -> _MalformedA:
    """Sends a malformed witness: one symbol too many (``length``) or a 2 (``symbols``)."""
    if kind not in ("length", "symbols"):
        raise ProtocolError(f"malformed kind must be 'length' or 'symbols', got {kind!r}")
    return _MalformedA(kind)


@register_strategy(P, "B", "honest", honest=True)
def honest_b() -> cx._HonestB:
    """Runs M(x, w) itself and challenges A's first wrong entry."""
    return cx.honest_b()


@register_strategy(P, "B", "random")
def random_b() -> cx._FixedB:
    """Challenges a uniformly random step."""
    return cx.random_b()


@register_strategy(P, "B", "first")
def first_b() -> cx._FixedB:
    """Always challenges step 0."""
    return cx.first_b()


@register_strategy(P, "B", "last")
def last_b() -> cx._FixedB:
    """Always challenges the output step."""
    return cx.last_b()
