"""The registry of protocols, each with the metadata its paper figure declares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._registry import NameRegistry
from ._common import Outcome


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
        play: the function that plays one debate.
    """

    name: str
    figure: str
    theorem: str
    instance: str
    completeness: float
    soundness: float
    verifier_cost: str
    play: Callable[..., Outcome]

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly metadata (without the play function)."""
        return {k: v for k, v in self.__dict__.items() if k != "play"}


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
