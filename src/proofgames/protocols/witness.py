r"""Debate with a witness (Figure 2, Theorem 7.1), deterministic oracle.

Rules (a witness problem: instance ``x`` and checker machine ``M(x, w)`` of T steps).  A
claims that ``x`` is in the language, i.e. that some witness makes ``M`` output 1; B
disputes it.

1. A sends a witness ``w``.  V checks its format (length and alphabet); a malformed
   witness loses on the spot.
2. Cross-examination (Figure 4, :mod:`proofgames.protocols.cross_examination`) runs on the
   transcript machine ``M(x, w)`` with claim 1: A commits to a transcript of ``M(x, w)``,
   B names a step, V recomputes it from the relevant entries and witness bits.

The claim is always 1: the protocol proves membership (a witness exists); there is no
witness for non-membership, so a claim of 0 is refused.

Bounds claimed by the theorem (for ``L`` in NP with oracle, checker time T, queries of
length l): completeness 1 (an honest A sends a valid witness and wins against any B),
soundness 0 (if no witness exists, ``M(x, w) = 0`` for whatever A sends and honest B wins),
provers O(T) beyond finding the witness, V reads O(l log T) bits -- a constant number of
transcript entries plus at most the witness bits the checked step reads (counted one bit
each in ``verifier_bits``) -- and makes O(1) oracle queries.

Example:
    >>> from proofgames.machines.sat import SatProblem
    >>> from proofgames.protocols import play_witness
    >>> from proofgames.strategies import make_strategy
    >>> problem = SatProblem.from_dimacs("p cnf 2 2\n1 2 0\n-1 0\n", name="tiny")
    >>> out = play_witness(problem, 1, make_strategy("witness", "A", "honest"),
    ...                    make_strategy("witness", "B", "honest"), seed=0)
    >>> out.winner, out.messages[0].content, out.costs.verifier_reads
    ('A', '01', 3)

"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from typing import Protocol, runtime_checkable

import numpy as np

from .._oracle import Oracle
from .._transcript import TranscriptMachine
from ..errors import ProtocolError, require_type
from ..wire import Malformed, as_bytes
from ._catalog import Defaults, Instance, Options, ProtocolInfo, refuse_params, register_protocol
from ._common import Debate, Forfeit, GameContext, Outcome
from .cross_examination import (
    COMMIT,
    ENTRIES,
    CrossExaminationA,
    CrossExaminationB,
    cross_examine,
)
from .roles import CONTEXT, READ, Method, PartySide, Role, sent

NAME = "witness"


@runtime_checkable
class WitnessProblem(Protocol):
    """What the witness protocol needs from a problem (e.g. :class:`~.machines.sat.SatProblem`).

    Attributes:
        name: name used in outcome records.
        witness_length: symbols in a well-formed witness.
        steps: T, the transcript length of ``M(x, w)`` (the same for every witness).

    """

    name: str

    @property
    def witness_length(self) -> int:
        """Symbols in a well-formed witness."""

    @property
    def steps(self) -> int:
        """T, the transcript length of ``M(x, w)``."""

    def validate_witness(self, w: object) -> bytes:
        """``w`` as bytes, or raise a ``ValueError`` naming what is malformed."""

    def machine(self, w: object) -> TranscriptMachine:
        """The checker ``M(x, w)`` as a transcript machine (its inputs are the witness)."""

    def solve(self) -> bytes | None:
        """A witness, or ``None`` if there is none (the honest prover's search)."""

    def best_effort(self, rng: np.random.Generator) -> bytes:
        """The best witness a heuristic search finds (for provers without a valid one)."""


class WitnessA(CrossExaminationA, Protocol):
    """Prover A's role: a witness, then cross-examination's commitment and reads on M(x, w).

    :meth:`witness` sees a context whose ``machine`` is (a copy of) the problem; ``commit``
    and ``entries`` see one whose ``machine`` is ``M(x, w)``.  The witness is sent as plain
    data: ``bytes``, a ``bytearray`` or a list of ints.
    """

    def witness(self, ctx: GameContext) -> object:
        """Return the claimed witness."""
        ...


WitnessB = CrossExaminationB  # B's part is cross-examination's: it names a step


def render_witness(w: bytes) -> str:
    """A witness as a message: ``"0110..."`` for digits, else its hex."""
    if all(s < 10 for s in w):
        return "".join(map(str, w))
    return w.hex()[:240]


def play_witness(
    problem: WitnessProblem,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    oracle: Oracle | None = None,
    seed: int | None = 0,
    timeout: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> Outcome:
    """Play one debate with a witness and return its record.

    Args:
        problem: the witness problem (instance and checker).
        claim: must be 1: A asserts that a witness exists.
        prover_a: a :class:`WitnessA` player (see :func:`proofgames.strategies.make_strategy`).
        prover_b: a cross-examination B player registered for ``"witness"``.
        oracle: the oracle the checker queries.
        seed: root seed; A, B and V get independent streams.
        timeout: seconds allowed per strategy call (checked after it returns).
        progress: callback for long simulations.

    Raises:
        ProtocolError: if ``claim`` is not 1.

    Example:
        Three pigeons do not fit in two holes, so no assignment satisfies this formula.  A
        sends one anyway and falsifies a step of the checker; honest B finds that step:

        >>> from proofgames import make_strategy, play_witness, resolve_instance
        >>> php = resolve_instance("witness", "sat-php-3-2").target
        >>> a = make_strategy("witness", "A", "flip-step")
        >>> b = make_strategy("witness", "B", "honest")
        >>> out = play_witness(php, 1, a, b, seed=0)
        >>> out.winner, out.details["witness"], out.reason
        ('B', '100001', 'step 18 is wrong: A wrote 1, it should be 0')
        >>> play_witness(php, 0, a, b)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: the witness protocol proves membership, so the claim ...

    """
    require_type("problem", problem, WitnessProblem, "SatProblem(...)")
    if claim != 1:
        why = (
            "a witness can show that a solution exists, never that none does"
            if claim == 0
            else f"got {claim!r}"
        )
        raise ProtocolError(
            f"the witness protocol proves membership, so the claim must be 1: {why}"
        )
    d = Debate(NAME, prover_a, prover_b, oracle, seed, timeout)
    ctx_a = d.context("A", problem, problem.steps, claim, progress)

    def witness(raw: object) -> bytes:
        w = as_bytes(raw, "witness")
        try:
            return problem.validate_witness(w)
        except ValueError as exc:
            raise Malformed(str(exc)) from None

    try:
        w = d.parties["A"].call("witness", "witness", ctx_a, parse=witness)
        d.say(0, "A", "witness", render_witness(w))
        machine = problem.machine(w)
    except Forfeit:
        verdict, reason = d.loss()
        return d.outcome(
            problem.name,
            problem.steps,
            claim,
            verdict,
            reason,
            rounds=1,
            reads=0,
            unit="entries",
            bits=0,
            verifier_steps=0,
            b_reads=0,
        )
    ctx_a = d.context("A", machine, machine.length, claim, progress, witness=w)
    ctx_b = d.context("B", machine, machine.length, claim, progress, witness=w)
    out = cross_examine(d, machine, claim, ctx_a, ctx_b, input_bits=1)
    details = {"witness": render_witness(w)}
    return replace(out, machine=problem.name, steps=problem.steps, details=details)


def _play_on_sent(side: PartySide, value: object) -> None:
    """A's own process, once its witness is sent: play on M(x, w) (as V will, if well formed)."""
    with suppress(Exception):  # a malformed witness is A's forfeit, decided by V
        side.play_on(value)


WITNESS = Method(
    "witness", (CONTEXT,), "bytes (or a list of ints) of witness_length symbols", _play_on_sent
)
#: B's context travels as the witness V accepted: B's process plays on M(x, w).
ON_WITNESS = sent(
    "ctx", "bytes: the witness V accepted", decode=lambda w, side: side.play_on(w),
    encode=lambda ctx: ctx.witness,
)  # fmt: skip
CHALLENGE = Method(
    "challenge", (ON_WITNESS, READ), "as cross-examination, on M(x, w) (reads allowed)"
)


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    refuse_params(opts, NAME)
    return play_witness(
        inst.target, claim, a, b, oracle=inst.oracle, seed=opts.seed, timeout=opts.timeout,
        progress=opts.progress,
    )  # fmt: skip


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure 2 (deterministic oracle: cross-examination of M(x, w))",
        theorem="Theorem 7.1",
        instance="witness",
        completeness=1.0,
        soundness=0.0,
        verifier_cost="reads a constant number of entries of M(x, w) and the witness bits "
        "the checked step reads; at most 1 oracle query",
        play=play_witness,
        defaults=Defaults("sat-planted-40"),
        run=_run,
        roles={
            "A": Role(WitnessA, (WITNESS, COMMIT, ENTRIES)),
            "B": Role(CrossExaminationB, (CHALLENGE,)),
        },
        claims=(1,),
    )
)
