"""Where proofgames' own protocols and strategies are defined, imported on first use.

A registry looks a built-in name up here when it first misses it and imports the module
that registers it, so a command loads only the protocol it plays: ``proofgames debate
bisection`` never imports the stochastic protocols, their strategies or their parameter
machinery.  Listing a registry imports every module here first, in this order.
Plugins (:mod:`proofgames.plugins`) register themselves and are not listed here.

The conformance suite checks that each module registers exactly the names declared for
it, so a protocol added without an entry here is caught.

Example:
    >>> PROTOCOLS["bisection"], STRATEGIES["bisection"]
    ('proofgames.protocols.bisection', 'proofgames.strategies.bisection')
"""

from __future__ import annotations

__all__ = ["PROTOCOLS", "STRATEGIES"]

#: Each built-in protocol's name and the module that registers it, in listing order.
PROTOCOLS: dict[str, str] = {
    "bisection": "proofgames.protocols.bisection",
    "cross-examination": "proofgames.protocols.cross_examination",
    "stochastic": "proofgames.protocols.stochastic",
    "stochastic-witness": "proofgames.protocols.stochastic_witness",
    "witness": "proofgames.protocols.witness",
}

#: The module that registers each built-in protocol's strategies (both roles).
STRATEGIES: dict[str, str] = {
    "bisection": "proofgames.strategies.bisection",
    "cross-examination": "proofgames.strategies.cross_examination",
    "stochastic": "proofgames.strategies.stochastic",
    "stochastic-witness": "proofgames.strategies.stochastic_witness",
    "witness": "proofgames.strategies.witness",
}
