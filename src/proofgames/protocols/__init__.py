"""The debate protocols, one file each, and what a new protocol is built from.

A protocol is one file: its rules and bounds in the docstring, its roles declared once
(:mod:`proofgames.protocols.roles`), V's play as pure code over :class:`Debate` (the one
driver of calls into the parties: forfeits, timeouts, the message log and the costs),
and one :func:`register_protocol` call.  ``docs/extending.md`` walks through one.
"""

from . import roles
from ._batch import Batch, BatchResult
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
from ._lockstep import ForfeitCount, Round
from .bisection import BisectionState, play_bisection, recurse
from .cross_examination import play_cross_examination
from .stochastic import play_stochastic, play_stochastic_batch
from .stochastic_witness import play_stochastic_witness
from .witness import WitnessProblem, play_witness

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
