"""The debate protocols, one file each, and what a new protocol is built from.

A protocol is one file: its rules and bounds in the docstring, its roles declared once
(:mod:`proofgames.protocols.roles`), V's play as pure code over :class:`Debate` (the one
driver of calls into the parties: forfeits, timeouts, the message log and the costs),
and one :func:`register_protocol` call.  ``docs/extending.md`` walks through one.

Each protocol's module is imported when it is first looked up (see
:mod:`proofgames._builtins`) or when one of its names below is first used, so a debate
loads its own protocol only.

Example:
    >>> from proofgames.protocols import get_protocol, play_bisection
    >>> get_protocol("bisection").play is play_bisection
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import roles
from ._catalog import (
    Defaults,
    Instance,
    Options,
    ProtocolInfo,
    get_protocol,
    has_protocol,
    protocol_names,
    register_protocol,
)
from ._common import Costs, Debate, Forfeit, GameContext, Message, Outcome

if TYPE_CHECKING:  # imported on first use: see __getattr__
    from ._batch import Batch, BatchResult
    from ._lockstep import ForfeitCount, Round
    from .bisection import BisectionState, play_bisection, recurse
    from .cross_examination import play_cross_examination
    from .stochastic import play_stochastic, play_stochastic_batch
    from .stochastic_witness import play_stochastic_witness
    from .witness import WitnessProblem, play_witness

#: The names each protocol's module (or the lockstep machinery) provides, loaded on use.
_LAZY = {
    "Batch": "_batch",
    "BatchResult": "_batch",
    "ForfeitCount": "_lockstep",
    "Round": "_lockstep",
    "BisectionState": "bisection",
    "play_bisection": "bisection",
    "recurse": "bisection",
    "play_cross_examination": "cross_examination",
    "play_stochastic": "stochastic",
    "play_stochastic_batch": "stochastic",
    "play_stochastic_witness": "stochastic_witness",
    "WitnessProblem": "witness",
    "play_witness": "witness",
}

__all__ = [
    "Batch",
    "BatchResult",
    "BisectionState",
    "Defaults",
    "ForfeitCount",
    "Instance",
    "Options",
    "Round",
    "Costs",
    "Debate",
    "Forfeit",
    "GameContext",
    "Message",
    "Outcome",
    "ProtocolInfo",
    "WitnessProblem",
    "get_protocol",
    "play_bisection",
    "play_cross_examination",
    "play_stochastic",
    "play_stochastic_batch",
    "play_stochastic_witness",
    "play_witness",
    "has_protocol",
    "protocol_names",
    "recurse",
    "register_protocol",
    "roles",
]


def __getattr__(name: str) -> Any:
    """A protocol's own names, from its module, imported when first asked for.

    Example:
        >>> import proofgames.protocols as protocols
        >>> protocols.no_such_name
        Traceback (most recent call last):
        AttributeError: module 'proofgames.protocols' has no attribute 'no_such_name'
    """
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
