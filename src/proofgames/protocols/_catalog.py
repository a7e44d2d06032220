"""The registry of protocols, each with the metadata its paper figure declares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._oracle import Oracle
from .._registry import NameRegistry
from ..errors import ProtocolError
from ._batch import Batch
from ._common import Outcome


@dataclass(frozen=True)
class Instance:
    """What a debate is about, resolved from a spec.

    Attributes:
        spec: the spec it was resolved from (``"bb5"``, ``"tm:..."``, ``"sat-planted-40"``).
        name: the name outcome records use.
        kind: ``"configuration"``, ``"transcript"``, ``"witness"``, ``"stochastic"`` or
            ``"stochastic-witness"``.
        target: the machine or problem the protocol plays on.
        steps: T.
        truth: the true output (1 = accepts, or: a witness exists) if known to the set-up.
        oracle: the oracle the machine queries, if any.
        p_accept: P[M = 1] for stochastic machines, if known.
        description: a plain description a separate process can rebuild it from.
    """

    spec: str
    name: str
    kind: str
    target: Any
    steps: int
    truth: int | None = None
    oracle: Oracle | None = None
    p_accept: float | None = None
    description: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    """How a debate is played (the same for every protocol).

    Attributes:
        seed: the root seed.
        timeout: seconds allowed per party call (pre-emptive under process isolation).
        params: stochastic protocols: ``"paper"``, ``"lean"``, a JSON file, or parameters.
        progress: callback fed with simulated steps.
        sampling: stochastic protocols: how samples are drawn.
    """

    seed: int | None = 0
    timeout: float | None = None
    params: Any = None
    progress: Callable[[int], None] | None = None
    sampling: str = "binomial"


@dataclass(frozen=True)
class Defaults:
    """What the harness plays when the user names nothing.

    Attributes:
        machine: the default instance spec.
        honest_a, liar_a: A's strategy for a true and for a false claim.
        disputer_b, honest_b: B's strategy against a true and against a false claim.
        params: stochastic protocols' default parameter set.
    """

    machine: str
    honest_a: str = "honest"
    liar_a: str = "flip-step"
    disputer_b: str = "random"
    honest_b: str = "honest"
    params: str | None = None


def refuse_params(options: Options, protocol: str) -> None:
    """Deterministic protocols take no stochastic parameters: say so rather than ignore them."""
    if options.params is not None:
        raise ProtocolError(f"--params applies to the stochastic protocols, not to {protocol}")


RunOne = Callable[[Instance, int, Any, Any, Options], Outcome]
RunBatch = Callable[[Instance, int, Any, Any, Options, int], Batch]


@dataclass(frozen=True)
class ProtocolInfo:
    """What a protocol is and what its theorem promises.

    Attributes:
        name: registry name (also the CLI's).
        figure: the paper figure that states the rules.
        theorem: the theorem that proves its guarantees.
        instance: what it debates (``"transcript"``, ``"configuration"`` or ``"witness"``).
        completeness: the theorem's lower bound on P[V accepts] for a true claim, honest A.
        soundness: the theorem's upper bound on P[V accepts] for a false claim, honest B.
        verifier_cost: V's reads and oracle queries, as the theorem bounds them.
        play: the function that plays one debate (its own signature).
        defaults: what the harness plays when nothing is named.
        run: the harness's uniform entry: ``run(instance, claim, a, b, options)``.
        run_batch: many debates at once (lockstep protocols), or ``None``.
        messages: the schema of each message, ``{kind: description}`` (``docs/wire.md``).
    """

    name: str
    figure: str
    theorem: str
    instance: str
    completeness: float
    soundness: float
    verifier_cost: str
    play: Callable[..., Any]
    defaults: Defaults
    run: RunOne
    run_batch: RunBatch | None = None
    messages: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly metadata (without the functions)."""
        skip = ("play", "run", "run_batch", "defaults")
        out = {k: v for k, v in self.__dict__.items() if k not in skip}
        return out | {"defaults": dict(self.defaults.__dict__)}


_PROTOCOLS: NameRegistry[ProtocolInfo] = NameRegistry("protocol")


def register_protocol(info: ProtocolInfo) -> ProtocolInfo:
    """Add a protocol to the registry."""
    return _PROTOCOLS.add(info.name, info)


def get_protocol(name: str) -> ProtocolInfo:
    """Look a protocol up by name."""
    return _PROTOCOLS.get(name)


def protocol_names() -> list[str]:
    """Registered protocol names, in registration order."""
    return [name for name, _ in _PROTOCOLS.items()]
