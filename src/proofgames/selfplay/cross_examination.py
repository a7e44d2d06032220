"""Cross-examination (Figure 4) as a self-play game, on a Turing machine's tableau.

The transcript is the machine's Cook--Levin tableau (:class:`~proofgames.TableauTranscript`:
``(T + 2) * space`` entries, alphabet ``symbols * (states + 3)``).  The moves, in order:

1. A, ``claim`` (only when the claim is not fixed by the ``claim`` parameter): 0 or 1;
2. A, ``commit``: the transcript, one entry per move, position 0 first -- A commits to all
   of it before B moves, which is what cross-examination's independent copies enforce;
3. V reads the output entry: if it is not the claim, A loses at once;
4. B, ``challenge``: the position B disputes;
5. V recomputes that step from the entries of its relevant set (the machine's own
   ``step``) and accepts iff A's entry equals it.

V's checks and their reasons are :func:`proofgames.protocols.play_cross_examination`'s.
Actions are entry values (``0 .. alphabet - 1``) while A commits and positions while B
challenges; the action space is wide enough for both on every instance of a family
(``horizon`` sets the longest transcript).  Perfect information: B sees every entry.

Example:
    The 2-state busy beaver on 4 cells halts by T = 6; A commits to the true tableau and
    B challenges its last entry:

    >>> rules = CrossExaminationRules("1RB1LB_1LA1RZ", space=4, origin=2, steps=6, claim=1)
    >>> s = rules.initial()
    >>> for entry in rules.machine.run().tolist():
    ...     s = rules.apply(s, entry)
    >>> s.phase, rules.legal(s)[-1]
    ('challenge', 31)
    >>> s = rules.apply(s, 31)
    >>> s.verdict, s.reason
    (1, 'step 31 checks out (1)')

"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ProtocolError
from ..machines.tableau import TableauTranscript
from ..machines.turing import TuringMachine
from ..protocols.cross_examination import NAME
from .family import program_table
from .rules import (
    TERMINAL,
    A,
    B,
    FloatArray,
    Node,
    Rules,
    RulesEntry,
    as_action,
    check_claim,
    check_steps,
    observe_header,
    register_rules,
)

__all__ = ["CrossExaminationNode", "CrossExaminationRules"]

CLAIM, COMMIT, CHALLENGE, OVER = "claim", "commit", "challenge", "terminal"
PHASES = (CLAIM, COMMIT, CHALLENGE, OVER)


@dataclass(frozen=True)
class CrossExaminationNode(Node):
    """A cross-examination game state.

    Attributes:
        entries: the entries A has committed so far, position 0 first.
        challenged: the position B disputed, once it has.

    """

    entries: tuple[int, ...] = ()
    challenged: int | None = None


class CrossExaminationRules(Rules[CrossExaminationNode]):
    """The cross-examination game on one Turing machine's tableau.

    Args:
        program: the machine's program in the standard text format.
        space: tape cells of its window.
        origin: the head's starting cell.
        steps: T.
        claim: the output A must defend (0 or 1), or -1 to let A choose it first.
        horizon: the largest T of the family (sizes the action space and scales times).

    """

    protocol = NAME

    def __init__(
        self,
        program: str,
        space: int,
        origin: int,
        steps: int,
        claim: int = -1,
        horizon: int = 0,
    ) -> None:
        check_steps(steps)
        check_claim(claim)
        self.program, self.space, self.origin = program, space, origin
        self.steps, self.claim, self.horizon = steps, claim, max(horizon, steps)
        self.machine = TableauTranscript(TuringMachine(program, space, origin), steps)
        self.length, self.alphabet = int(self.machine.length), int(self.machine.alphabet)
        self.max_positions = (self.horizon + 2) * space
        self.num_actions = max(self.alphabet, self.max_positions, 2)
        self.max_length = 2 + self.length
        self._table = program_table(self.machine.machine)
        self.program_size = self._table.size
        self.observation_size = (
            len(PHASES) + 2 + 3 + self._table.size + self.max_positions * (self.alphabet + 1) + 2
        )
        self._initial = (
            CrossExaminationNode(CLAIM, A, None)
            if claim == -1
            else CrossExaminationNode(COMMIT, A, claim)
        )

    # ------------------------------------------------------------------- rules
    def initial(self) -> CrossExaminationNode:
        """A's first move is due: its claim, or its first entry if the claim is set."""
        return self._initial

    def _width(self, state: CrossExaminationNode) -> int:
        if state.phase == CLAIM:
            return 2
        return self.alphabet if state.phase == COMMIT else self.length

    def legal(self, state: CrossExaminationNode) -> list[int]:
        """Claims: 0 and 1; entries: the alphabet; challenges: every position."""
        return [] if state.terminal else list(range(self._width(state)))

    def mask(self, state: CrossExaminationNode) -> NDArray[np.int8]:
        """1 at each legal action (a fresh array)."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if not state.terminal:
            m[: self._width(state)] = 1
        return m

    def apply(self, state: CrossExaminationNode, action: object) -> CrossExaminationNode:
        """Play ``action``; an illegal one is a loss for whoever played it."""
        if state.terminal:
            raise ProtocolError("the game is over; no action can be applied")
        a, width = as_action(action), self._width(state)
        if a is None or not 0 <= a < width:
            who = "A" if state.player == A else "B"
            reason = f"{who} loses: {who} played {action!r} as its {state.phase}, "
            reason += f"not an action in 0..{width - 1}"
            return _over(replace(state, moves=state.moves + 1), int(who == "B"), reason, who)
        s = replace(state, moves=state.moves + 1)
        if s.phase == CLAIM:
            return replace(s, phase=COMMIT, claim=a)
        if s.phase == COMMIT:
            s = replace(s, entries=(*s.entries, a))
            if len(s.entries) < self.length:
                return s
            out = s.entries[self.machine.output_position]
            if out != s.claim:  # V reads the output first, as cross_examine does
                reason = f"A loses: A's transcript ends in {out}, not in its claim {s.claim}"
                return _over(s, 0, reason)
            return replace(s, phase=CHALLENGE, player=B)
        return self._check(replace(s, challenged=a), a)

    def _check(self, s: CrossExaminationNode, t: int) -> CrossExaminationNode:
        """V recomputes step ``t`` from A's relevant entries (as ``_recompute`` does)."""
        inputs = [s.entries[p] for p in self.machine.checked_relevant(t)]
        expected = self.machine.step(t, inputs)
        if expected == s.entries[t]:
            return _over(s, 1, f"step {t} checks out ({expected})")
        return _over(s, 0, f"step {t} is wrong: A wrote {s.entries[t]}, it should be {expected}")

    # ------------------------------------------------------------ observations
    def observe(self, state: CrossExaminationNode, out: FloatArray) -> None:
        """Phase, player, claim, the program, the entries so far (one-hot), progress, T.

        The layout is documented in ``docs/selfplay.md``; every entry lies in ``[0, 1]``.
        """
        i = observe_header(PHASES, state, out)
        out[i : i + self._table.size] = self._table
        i += self._table.size
        width = self.alphabet + 1  # one-hot value, then "not written yet"
        cells = out[i : i + self.max_positions * width].reshape(self.max_positions, width)
        n = len(state.entries)
        if n:
            cells[np.arange(n), np.asarray(state.entries)] = 1.0
        cells[n : self.length, self.alphabet] = 1.0
        i += self.max_positions * width
        out[i], out[i + 1] = n / self.max_positions, self.steps / self.horizon

    def describe(self, state: CrossExaminationNode) -> str:
        """Phase, claim, the committed entries (and the challenge and verdict)."""
        text = f"{state.phase} claim={state.claim} T={self.steps} entries="
        text += ",".join(map(str, state.entries))
        if state.challenged is not None:
            text += f" challenge={state.challenged}"
        if state.terminal:
            text += f" verdict={state.verdict} ({state.reason})"
        return text

    def action_name(self, state: CrossExaminationNode, action: int) -> str:
        """``claim 1``, ``entry 7 = 3``, or ``challenge 12``."""
        if state.phase == COMMIT:
            return f"entry {len(state.entries)} = {action}"
        return f"{state.phase} {action}"

    def params(self) -> dict[str, Any]:
        """The constructor's arguments."""
        return {"program": self.program, "space": self.space, "origin": self.origin,
                "steps": self.steps, "claim": self.claim, "horizon": self.horizon}  # fmt: skip


def _over(s: CrossExaminationNode, verdict: int, reason: str, by: str = "") -> CrossExaminationNode:
    return replace(s, phase=OVER, player=TERMINAL, verdict=verdict, reason=reason,
                   forfeited_by=by)  # fmt: skip


DEFAULTS: dict[str, int | float | str | bool] = {
    "program": "1RB1LB_1LA1RZ",
    "space": 2,
    "origin": 0,
    "steps": 2,
    "claim": -1,
    "horizon": 0,
}
"""The game's parameters by default (a 2-step machine on 2 cells); the baselines share them."""

register_rules(
    NAME,
    RulesEntry(
        CrossExaminationRules,
        DEFAULTS,
        "Cross-examination (Figure 4): A's tableau entry by entry, B's challenged position",
    ),
)
