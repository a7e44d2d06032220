"""The two baselines of issue 38 as self-play games on the same tableau: consultancy, no debate.

Both keep cross-examination's environment -- the same observation, the same action space,
A's claim and its committed tableau, entry by entry (:mod:`.cross_examination`) -- and
change only what V does once A has committed:

* **consultancy** (``"consultancy"``): there is no B.  V reads the output entry (a
  transcript that does not end in the claim loses at once, as in cross-examination) and
  then spot-checks *one* position drawn uniformly at random (a chance node with
  ``length`` equally likely outcomes), recomputing it from A's entries as
  cross-examination's V does.  A liar whose transcript has ``w`` wrong steps is accepted
  with probability ``1 - w / length``;
* **no debate** (``"no-debate"``): V accepts the claim, whatever A wrote.

They exist so that learned provers can be compared across protocols in one environment:
under these rules a prover assigned the false claim *gains* by lying, and the report
(``reports/self-play/``) measures whether a trained one does.

Example:
    A consultant defends the false claim 0 on a machine that halts at T = 1: its tableau
    is the true one but for the output chain, so one of the six steps is wrong:

    >>> rules = ConsultancyRules("1RZ1RZ", space=2, origin=0, steps=1, claim=0)
    >>> true = rules.machine.run().tolist()
    >>> s = rules.initial()
    >>> for entry in true[:-2] + [0, 0]:
    ...     s = rules.apply(s, entry)
    >>> s.phase, s.player, len(rules.chance_outcomes(s))
    ('challenge', -1, 6)
    >>> accepted = [rules.apply(s, o).verdict for o, _ in rules.chance_outcomes(s)]
    >>> sum(accepted), len(accepted)  # only the step that should say "halted" is caught
    (5, 6)

"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from .cross_examination import (
    CHALLENGE,
    COMMIT,
    DEFAULTS,
    CrossExaminationNode,
    CrossExaminationRules,
)
from .cross_examination import _over as over
from .rules import CHANCE, RulesEntry, as_action, register_rules

__all__ = ["CONSULTANCY", "NO_DEBATE", "ConsultancyRules", "NoDebateRules"]

CONSULTANCY, NO_DEBATE = "consultancy", "no-debate"


class ConsultancyRules(CrossExaminationRules):
    """Cross-examination's tableau with B replaced by one uniformly random spot check.

    The arguments are :class:`~.cross_examination.CrossExaminationRules`'s.
    """

    protocol = CONSULTANCY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_chance_outcomes = self.max_positions

    def legal(self, state: CrossExaminationNode) -> list[int]:
        """A's actions as in cross-examination; none at V's spot check (a chance node)."""
        return [] if state.player == CHANCE else super().legal(state)

    def mask(self, state: CrossExaminationNode) -> NDArray[np.int8]:
        """1 at each legal action (all 0 at the spot check)."""
        if state.player == CHANCE:
            return np.zeros(self.num_actions, dtype=np.int8)
        return super().mask(state)

    def chance_outcomes(self, state: CrossExaminationNode) -> list[tuple[int, float]]:
        """At the spot check: every position, each with probability ``1 / length``."""
        if state.player != CHANCE:
            return []
        return [(t, 1.0 / self.length) for t in range(self.length)]

    def apply(self, state: CrossExaminationNode, action: object) -> CrossExaminationNode:
        """A's entries as in cross-examination; at the spot check, the position V checks."""
        if state.player == CHANCE and not state.terminal:
            t = as_action(action)
            if t is None or not 0 <= t < self.length:
                raise ProtocolError(f"{action!r} is not a position V can spot-check")
            return self._check(replace(state, moves=state.moves + 1, challenged=t), t)
        s = super().apply(state, action)
        if s.phase == CHALLENGE and not s.terminal:
            return replace(s, player=CHANCE)
        return s


class NoDebateRules(CrossExaminationRules):
    """Cross-examination's tableau, read by nobody: V accepts A's claim.

    The arguments are :class:`~.cross_examination.CrossExaminationRules`'s.
    """

    protocol = NO_DEBATE

    def apply(self, state: CrossExaminationNode, action: object) -> CrossExaminationNode:
        """A's entries as in cross-examination; after the last one V accepts the claim."""
        a = as_action(action)
        last = state.phase == COMMIT and len(state.entries) == self.length - 1
        if not state.terminal and last and a is not None and 0 <= a < self.alphabet:
            s = replace(state, moves=state.moves + 1, entries=(*state.entries, a))
            return over(s, 1, f"no debate: V accepts the claim {s.claim}")
        return super().apply(state, action)


register_rules(
    CONSULTANCY,
    RulesEntry(
        ConsultancyRules,
        DEFAULTS,
        "Consultancy (baseline): A's tableau, one position spot-checked uniformly at random",
        chance=True,
    ),
)
register_rules(
    NO_DEBATE,
    RulesEntry(NoDebateRules, DEFAULTS, "No debate (baseline): V accepts A's claim"),
)
