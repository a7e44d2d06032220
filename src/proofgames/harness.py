"""One harness for every protocol: resolve an instance, build the players, play, record.

:func:`play` plays one debate of any registered protocol and returns an
:class:`~proofgames.protocols.Outcome`; :func:`play_batch` plays many and returns one
:class:`~proofgames.protocols.Batch`.  The command line calls only these.  Players are
given as registered strategy specs (``"flip-step:at=0.3"``), as objects with the role's
methods, or -- with ``isolation="process"`` -- as programs run in their own OS process
(see :mod:`proofgames.isolation`).

Example:
    >>> from proofgames.harness import play, resolve_instance
    >>> out = play("bisection", resolve_instance("bisection", "tm:1RB1LB_1LA1RZ", steps=6),
    ...            claim=0, a="flip-step", b="honest", seed=0)
    >>> out.winner, out.forfeit
    ('B', None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._registry import check_instance, make_strategy
from .errors import ProofgamesError
from .instances import resolve_instance
from .protocols import Outcome, get_protocol, has_protocol, protocol_names
from .protocols._catalog import Instance, Options, ProtocolInfo

if TYPE_CHECKING:  # the batch types load with the protocols that play in batches
    from .protocols import Batch

__all__ = ["Instance", "Options", "play", "play_batch", "resolve_instance"]
ISOLATIONS = ("in-process", "process")
Player = Any  # a spec string, a player object, or (process isolation) a command


def build_player(
    protocol: str, role: str, player: Player, default: str, instance: Instance | None = None
) -> object:
    """A player from a registered spec string (its limits checked on ``instance``), or the object.

    Raises:
        ProofgamesError: for an unknown strategy, bad arguments, or an instance beyond the
            strategy's limits (raised before play, never a forfeit).
    """
    if player is None:
        player = default
    if isinstance(player, str):
        try:
            built = make_strategy(protocol, role, player)
            if instance is not None:
                check_instance(built, instance.target)
        except ProofgamesError as exc:  # name the input that is wrong
            raise type(exc)(f"prover {role} {player!r}: {exc}") from None
        return built
    return player


def default_claim(protocol: str, instance: Instance) -> int:
    """The claim A makes when none is given: the truth, else 1."""
    claims = get_protocol(protocol).claims
    if len(claims) == 1:
        return claims[0]
    if instance.truth is not None:
        return instance.truth
    return 1


def default_players(protocol: str, instance: Instance, claim: int) -> tuple[str, str]:
    """Honest A against the default disputer for a true claim, else a liar against honest B."""
    d = get_protocol(protocol).defaults
    true = instance.truth is None or instance.truth == claim
    if instance.p_accept is not None:
        true = (instance.p_accept if claim == 1 else 1 - instance.p_accept) >= 0.5
    return (d.honest_a, d.disputer_b) if true else (d.liar_a, d.honest_b)


def play(
    protocol: str,
    instance: Instance | str | None = None,
    claim: int | None = None,
    a: Player = None,
    b: Player = None,
    *,
    seed: int | None = 0,
    isolation: str = "in-process",
    timeout: float | None = None,
    params: Any = None,
    progress: Callable[[int], None] | None = None,
    steps: int | None = None,
) -> Outcome:
    """Play one debate of any registered protocol and return its :class:`Outcome`.

    Args:
        protocol: a registered protocol name.
        instance: an :class:`Instance`, or a spec string for :func:`resolve_instance`.
        claim: what A asserts (default: the truth when known).
        a: A's registered strategy spec or player object (default: the protocol's
            default for this claim); with ``isolation="process"``, a spec string or a
            command (a list of arguments) that runs the party as a program.
        b: B's, as ``a``.
        seed: root seed of every random choice.
        isolation: ``"in-process"`` or ``"process"`` (each prover in its own OS process).
        timeout: seconds per party call; under process isolation an overrun kills the
            party's process.
        params: stochastic protocols' parameters (``"paper"``, ``"lean"``, a file).
        progress: callback for long simulations.
        steps: T, when ``instance`` is given as a spec.

    Example:
        With nothing named, A claims the truth and plays it honestly against a disputer; a
        false claim is argued by a liar against honest B:

        >>> from proofgames import play
        >>> out = play("cross-examination", "bb2")
        >>> out.claim, out.winner, out.prover_a.label, out.prover_b.label
        (1, 'A', 'honest', 'random')
        >>> out = play("cross-examination", "bb2", claim=0)
        >>> out.winner, out.prover_a.label, out.reason
        ('B', 'flip-step(at=0.5)', 'step 13 is wrong: A wrote 8, it should be 4')
    """
    info, inst, claim, pa, pb = _prepare(protocol, instance, claim, a, b, steps, isolation)
    opts = Options(seed, timeout, params, progress)
    if isolation == "in-process":
        return info.run(inst, claim, pa, pb, opts)
    from .isolation import isolated_players

    with isolated_players(protocol, inst, claim, pa, pb, opts) as (xa, xb):
        out = info.run(inst, claim, xa, xb, opts)
    return replace(out, isolation="process")


def play_batch(
    protocol: str,
    instance: Instance | str | None = None,
    claim: int | None = None,
    a: Player = None,
    b: Player = None,
    *,
    debates: int = 1,
    seed: int | None = 0,
    timeout: float | None = None,
    params: Any = None,
    sampling: str = "binomial",
    steps: int | None = None,
) -> Batch:
    """Play ``debates`` debates and return one :class:`Batch`.

    Stochastic protocols run the debates in lockstep; deterministic ones play them one by
    one, debate ``i`` seeded by the ``i``-th child of ``SeedSequence(seed)``.

    Example:
        The optimal liar (:func:`~proofgames.stochastic.optimal.optimal_liar`) claims that a
        majority of 3 votes, each 1 with probability 0.8, comes out 0.  Over 1000 debates it
        is accepted about as often as its exact game value, 0.134, says:

        >>> from proofgames import play_batch
        >>> batch = play_batch("stochastic", "majority:n=3,p=0.8", claim=0, a="optimal",
        ...                    b="honest", debates=1000, params="lean", seed=0)
        >>> batch.debates, batch.acceptance, batch.forfeit_counts()
        (1000, 0.131, {'A': 0, 'B': 0})
    """
    if type(debates) is not int or debates <= 0:
        raise ProofgamesError(f"debates must be a positive integer, got {debates!r}")
    info, inst, claim, pa, pb = _prepare(protocol, instance, claim, a, b, steps, "in-process")
    opts = Options(seed, timeout, params, None, sampling)
    if info.run_batch is not None:
        return info.run_batch(inst, claim, pa, pb, opts, debates)
    return _one_by_one(info.run, protocol, inst, claim, (a, b), opts, debates)


def _prepare(
    protocol: str,
    instance: Instance | str | None,
    claim: int | None,
    a: Player,
    b: Player,
    steps: int | None,
    isolation: str,
) -> tuple[ProtocolInfo, Instance, int, Any, Any]:
    if not has_protocol(protocol):
        raise ProofgamesError(
            f"unknown protocol {protocol!r}; choose one of {', '.join(protocol_names())}"
        )
    if isolation not in ISOLATIONS:
        raise ProofgamesError(f"isolation must be one of {ISOLATIONS}, got {isolation!r}")
    info = get_protocol(protocol)
    if instance is not None and not isinstance(instance, (Instance, str)):
        raise ProofgamesError(
            f"instance must be a spec string or an Instance, got a {type(instance).__name__}; "
            f"play a machine object with the protocol's own function (say, play_bisection)"
        )
    inst = (
        instance if isinstance(instance, Instance) else resolve_instance(protocol, instance, steps)
    )
    if claim is None:
        claim = default_claim(protocol, inst)
    if claim not in (0, 1):
        raise ProofgamesError(f"claim must be 0 or 1, got {claim!r}")
    da, db = default_players(protocol, inst, claim)
    if isolation == "process":  # the isolation layer builds its own players from specs
        return info, inst, claim, a if a is not None else da, b if b is not None else db
    pa = build_player(protocol, "A", a, da, inst)
    return info, inst, claim, pa, build_player(protocol, "B", b, db, inst)


def _one_by_one(
    run: Callable[..., Outcome],
    protocol: str,
    inst: Instance,
    claim: int,
    given: tuple[Player, Player],
    opts: Options,
    debates: int,
) -> Batch:
    """Deterministic protocols: fresh players and an independent seed per debate."""
    from .protocols._batch import Batch
    from .protocols._lockstep import ForfeitLog

    seeds = np.random.SeedSequence(opts.seed).spawn(debates)
    verdicts = np.zeros(debates, dtype=np.int64)
    log = ForfeitLog(debates)
    queries: dict[str, list[int]] = {"A": [], "B": [], "V": []}
    rounds = 0
    da, db = default_players(protocol, inst, claim)
    first: Outcome | None = None
    for i, s in enumerate(seeds):
        pa = _fresh(protocol, "A", given[0], da, inst)
        pb = _fresh(protocol, "B", given[1], db, inst)
        out = run(inst, claim, pa, pb, replace(opts, seed=int(s.generate_state(1)[0])))
        first = first or out
        verdicts[i] = out.verdict
        if out.forfeit is not None:
            log.record(out.forfeit, out.reason.split(": ", 1)[-1], np.array([i]))
        queries["V"].append(out.costs.verifier_queries)
        for p in ("A", "B"):
            queries[p].append(out.costs.prover_queries[p])
        rounds = max(rounds, out.costs.rounds)
    assert first is not None
    return Batch(
        protocol, inst.name, claim, verdicts, log.by, log.counts(),
        {p: np.asarray(v, dtype=np.int64) for p, v in queries.items()},
        {p: int(sum(v)) for p, v in queries.items()}, np.full(debates, -1, dtype=np.int64),
        rounds, first.prover_a, first.prover_b, opts.seed,
    )  # fmt: skip


def _fresh(protocol: str, role: str, given: Player, default: str, inst: Instance) -> object:
    import copy

    if given is None or isinstance(given, str):
        return build_player(protocol, role, given, default, inst)
    return copy.deepcopy(given)


def protocols_with_goldens() -> Sequence[str]:
    """Every registered protocol (each has a golden playthrough under tests/protocols/golden)."""
    return protocol_names()
