"""The debate protocols, one file each."""

from ._common import Costs, Forfeit, GameContext, Message, Outcome
from .bisection import BisectionState, play_bisection, recurse
from .cross_examination import play_cross_examination

__all__ = [
    "BisectionState",
    "Costs",
    "Forfeit",
    "GameContext",
    "Message",
    "Outcome",
    "play_bisection",
    "play_cross_examination",
    "recurse",
]
