"""The debate protocols as self-play games: OpenSpiel games and PettingZoo environments.

* :mod:`~proofgames.selfplay.rules`: a protocol's rules as pure functions over immutable
  states (legal actions, transitions, V's verdict, observations), and their registry;
* :mod:`~proofgames.selfplay.bisection`: bisection (Figure 3) as such rules;
* :mod:`~proofgames.selfplay.cross_examination`: cross-examination (Figure 4) on a Turing
  machine's tableau;
* :mod:`~proofgames.selfplay.stochastic`: the stochastic protocol (Figure 1) on a small
  stochastic machine, with chance nodes for the coin, honest A's samples and V's check;
* :mod:`~proofgames.selfplay.baselines`: consultancy and no debate on cross-examination's
  tableau, the baselines learned provers are compared with;
* :mod:`~proofgames.selfplay.family`: small Turing machines generated, and held out, by
  seed, and a few small machines of the stochastic zoo;
* :mod:`~proofgames.selfplay.openspiel`: the rules registered as OpenSpiel games, and their
  exact values from OpenSpiel's minimax solver or a memoized expectiminimax (needs the
  ``selfplay`` extra);
* :mod:`~proofgames.selfplay.pettingzoo`: a PettingZoo AEC environment over a family
  (needs the ``selfplay`` extra).

Importing this package imports neither OpenSpiel nor PettingZoo.  See ``docs/selfplay.md``.
"""

from . import baselines, bisection, cross_examination, stochastic  # each registers its rules
from .family import StochasticFamily, StochasticInstance, TuringFamily, TuringInstance
from .rules import Rules, make_rules, rules_names

__all__ = [
    "Rules",
    "baselines",
    "bisection",
    "cross_examination",
    "stochastic",
    "StochasticFamily",
    "StochasticInstance",
    "TuringFamily",
    "TuringInstance",
    "make_rules",
    "rules_names",
]
