"""Bisection (Figure 3) as a self-play game: A's configurations, B's disputes, V's one check.

The moves, in order (player, phase, actions):

1. A, ``claim`` (only when the claim is not fixed by the ``claim`` parameter): 0 or 1;
2. A, ``final``: the configuration A says the machine is in after T steps;
3. per round while the disputed stretch is longer than one step:
   A, ``midpoint``: the configuration at the stretch's midpoint time;
   B, ``dispute``: 0 for the first half, 1 for the second;
4. V checks the one remaining step (or, at once, a final configuration whose output is
   not the claim) and the game ends.

Every configuration is one action: ``(state, head, tape)`` in mixed radix, state most
significant and tape cell 0 the most significant tape digit -- the order
:func:`proofgames.exhaustive.bisection_value` enumerates configurations in, so action ``i``
is its configuration ``i``.  A configuration action is ``(states + 2) * space *
symbols**space`` wide; the claim and the dispute use actions 0 and 1.  Both players share
that one action space.

The game's transitions are the protocol's own: :func:`proofgames.protocols.bisection.recurse`
picks the half B disputes, and V's rules are the protocol's -- the final configuration's
output must be the claim (``machine.accepts``), and the last step must be one step of the
machine (``machine.step``); the reasons are worded as :func:`play_bisection` words them.

Example:
    A claims the 2-state busy beaver (window of 1 cell) has not halted after 3 steps
    -- true -- and B disputes the second half each time:

    >>> rules = BisectionRules("1RB1LB_1LA1RZ", space=1, origin=0, steps=3, claim=0)
    >>> tm = rules.machine
    >>> s = rules.initial()
    >>> honest = [tm.advance(tm.initial(), t) for t in range(4)]
    >>> s = rules.apply(s, rules.action_of(honest[3]))
    >>> s.phase, s.dispute.length
    ('midpoint', 3)
    >>> s = rules.apply(rules.apply(s, rules.action_of(honest[1])), 1)
    >>> s = rules.apply(rules.apply(s, rules.action_of(honest[2])), 1)
    >>> s.verdict, s.reason, rules.returns(s)
    (1, 'the step at time 2 is valid', (1.0, -1.0))

"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._configuration import Configuration
from ..errors import ProtocolError
from ..machines.turing import TuringMachine
from ..protocols.bisection import FIRST, NAME, SECOND, BisectionState, recurse
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

__all__ = ["BisectionNode", "BisectionRules"]

CLAIM, FINAL, MIDPOINT, DISPUTE, OVER = "claim", "final", "midpoint", "dispute", "terminal"
PHASES = (CLAIM, FINAL, MIDPOINT, DISPUTE, OVER)
HALVES = (FIRST, SECOND)


@dataclass(frozen=True)
class BisectionNode(Node):
    """A bisection game state.

    Attributes:
        dispute: the claim under dispute (the protocol's own :class:`BisectionState`);
            its ``end`` is meaningless until A has sent its final configuration.
        midpoint: A's midpoint of this round, once sent (B's turn), else ``None``.

    """

    dispute: BisectionState | None = None
    midpoint: Configuration | None = None


class BisectionRules(Rules[BisectionNode]):
    """The bisection game on one Turing machine.

    Args:
        program: the machine's program in the standard text format.
        space: tape cells of its window.
        origin: the head's starting cell.
        steps: T.
        claim: the output A must defend (0 or 1), or -1 to let A choose it as its first move.
        horizon: the T that observations are scaled by (default: ``steps``; give a
            family's ``max_steps`` so every instance is scaled alike).

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
        self.machine = TuringMachine(program, space=space, origin=origin)
        if self.machine.query_mask.any():
            raise ProtocolError("self-play bisection takes machines without query states")
        self.program, self.space, self.origin = program, space, origin
        self.steps, self.claim, self.horizon = steps, claim, max(horizon, steps)
        p = self.machine.program
        self.n_states, self.symbols = int(p.states) + 2, int(p.symbols)
        self.tapes: int = self.symbols**space
        self.n_configs = self.n_states * space * self.tapes
        self.num_actions = max(self.n_configs, 2)
        self.max_rounds = math.ceil(math.log2(self.horizon)) if self.horizon > 1 else 0
        rounds = math.ceil(math.log2(steps)) if steps > 1 else 0
        self.max_length = 2 + 2 * rounds
        self._conf = self.n_states + space + space * self.symbols
        self._table = program_table(self.machine)
        self._configs: dict[int, Configuration] = {}  # decoded actions, kept
        self._after: dict[Configuration, Configuration] = {}  # machine.step, memoized
        start = self.machine.initial()
        first = BisectionState(start, start, steps)
        self._initial = (
            BisectionNode(CLAIM, A, None, dispute=first)
            if claim == -1
            else BisectionNode(FINAL, A, claim, dispute=first)
        )
        self.observation_size = len(PHASES) + 2 + 3 + self._table.size + 3 * self._conf + 2 + 5

    # ------------------------------------------------------------------ actions
    def configuration(self, action: int) -> Configuration:
        """The configuration that ``action`` names (``0 <= action < n_configs``)."""
        known = self._configs.get(action)
        if known is None:
            known = self._configs[action] = self._decode(action)
        return known

    def _decode(self, action: int) -> Configuration:
        state, rest = divmod(action, self.space * self.tapes)
        head, tape = divmod(rest, self.tapes)
        cells = bytearray(self.space)
        for j in range(self.space - 1, -1, -1):
            tape, cells[j] = divmod(tape, self.symbols)
        return Configuration(state, head, bytes(cells))

    def action_of(self, config: Configuration) -> int:
        """The action that names ``config`` (the inverse of :meth:`configuration`)."""
        tape = 0
        for c in config.tape:
            tape = tape * self.symbols + c
        return (config.state * self.space + config.head) * self.tapes + tape

    def action_features(self) -> NDArray[np.float32]:
        """Per action, its configuration's parts one-hot: state, head, each cell's symbol.

        Example:
            >>> rules = BisectionRules("1RZ1LZ", space=2, origin=0, steps=2)
            >>> rules.action_features()[rules.action_of(Configuration(1, 1, bytes([0, 1])))]
            array([0., 1., 0., 0., 1., 1., 0., 0., 1.], dtype=float32)

        """
        out = np.zeros((self.num_actions, self._conf), dtype=np.float32)
        for a in range(self.n_configs):
            self._put_conf(out[a], 0, self.configuration(a))
        return out

    # ------------------------------------------------------------------- rules
    def initial(self) -> BisectionNode:
        """A's first move is due: its claim, or its final configuration if the claim is set."""
        return self._initial

    def legal(self, state: BisectionNode) -> list[int]:
        """Claims and disputes: 0 and 1; configurations: every well-formed one."""
        if state.terminal:
            return []
        if state.phase in (CLAIM, DISPUTE):
            return [0, 1]
        return list(range(self.n_configs))

    def mask(self, state: BisectionNode) -> NDArray[np.int8]:
        """1 at each legal action (a fresh array; the same as :meth:`legal`, faster)."""
        m = np.zeros(self.num_actions, dtype=np.int8)
        if not state.terminal:
            m[: 2 if state.phase in (CLAIM, DISPUTE) else self.n_configs] = 1
        return m

    def apply(self, state: BisectionNode, action: object) -> BisectionNode:
        """Play ``action``; an illegal one is a loss for whoever played it."""
        if state.terminal:
            raise ProtocolError("the game is over; no action can be applied")
        a = as_action(action)
        width = 2 if state.phase in (CLAIM, DISPUTE) else self.n_configs
        if a is None or not 0 <= a < width:
            return self._forfeit(state, action, width)
        s = replace(state, moves=state.moves + 1)
        d = s.dispute
        assert d is not None
        if s.phase == CLAIM:
            return replace(s, phase=FINAL, claim=a)
        if s.phase == FINAL:
            final = self.configuration(a)
            out = self.machine.accepts(final)
            if out != s.claim:  # V's check as play_bisection makes it
                reason = (
                    f"A loses: A's final configuration has output {out}, not its claim {s.claim}"
                )
                return self._over(s, 0, reason)
            return self._next_round(replace(s, dispute=replace(d, end=final)))
        if s.phase == MIDPOINT:
            return replace(s, phase=DISPUTE, player=B, midpoint=self.configuration(a))
        assert s.midpoint is not None
        return self._next_round(replace(s, dispute=recurse(d, s.midpoint, HALVES[a])))

    def _next_round(self, s: BisectionNode) -> BisectionNode:
        d = s.dispute
        assert d is not None
        if d.length > 1:
            return replace(s, phase=MIDPOINT, player=A, midpoint=None)
        after = self._after.get(d.start)
        if after is None:  # V's one step, as play_bisection checks it (memoized: pure)
            after = self._after[d.start] = self.machine.step(d.start)
        ok = after == d.end
        if ok:
            return self._over(s, 1, f"the step at time {d.start_time} is valid")
        reason = (
            f"A's configurations at times {d.start_time} and {d.start_time + 1} "
            "are not one step apart"
        )
        return self._over(s, 0, reason)

    def _over(self, s: BisectionNode, verdict: int, reason: str, by: str = "") -> BisectionNode:
        return replace(s, phase=OVER, player=TERMINAL, verdict=verdict, reason=reason,
                       forfeited_by=by, midpoint=None)  # fmt: skip

    def _forfeit(self, s: BisectionNode, action: object, width: int) -> BisectionNode:
        who = "A" if s.player == A else "B"
        reason = f"{who} loses: {who} played {action!r} as its {s.phase}, "
        reason += f"not an action in 0..{width - 1}"
        return self._over(replace(s, moves=s.moves + 1), int(who == "B"), reason, who)

    # ------------------------------------------------------------ observations
    def _put_conf(self, out: FloatArray, at: int, c: Configuration | None) -> int:
        if c is not None:
            out[at + c.state] = 1.0
            out[at + self.n_states + c.head] = 1.0
            base = at + self.n_states + self.space
            for j, sym in enumerate(c.tape):
                out[base + j * self.symbols + sym] = 1.0
        return at + self._conf

    def observe(self, state: BisectionNode, out: FloatArray) -> None:
        """Phase, player, claim, the program, start/end/midpoint, times scaled by the horizon.

        The layout is documented in ``docs/selfplay.md``; every entry lies in ``[0, 1]``.
        """
        i = observe_header(PHASES, state, out)
        out[i : i + self._table.size] = self._table
        i += self._table.size
        d = state.dispute
        assert d is not None
        has_end = state.phase not in (CLAIM, FINAL)
        i = self._put_conf(out, i, d.start)
        i = self._put_conf(out, i, d.end if has_end else None)
        i = self._put_conf(out, i, state.midpoint)
        out[i], out[i + 1] = float(has_end), float(state.midpoint is not None)
        i += 2
        h = float(self.horizon)
        out[i : i + 5] = (d.length / h, d.start_time / h, d.midpoint_time / h,
                          self.steps / h, d.round / max(1, self.max_rounds))  # fmt: skip

    def describe(self, state: BisectionNode) -> str:
        """Phase, claim, the disputed stretch and A's pending midpoint (and the verdict)."""
        d = state.dispute
        assert d is not None
        text = f"{state.phase} claim={state.claim} T={self.steps} round={d.round} "
        text += f"t={d.start_time}+{d.length} start={_conf(d.start)}"
        if state.phase not in (CLAIM, FINAL):
            text += f" end={_conf(d.end)}"
        if state.midpoint is not None:
            text += f" mid={_conf(state.midpoint)}"
        if state.terminal:
            text += f" verdict={state.verdict} ({state.reason})"
        return text

    def action_name(self, state: BisectionNode, action: int) -> str:
        """``claim 1``, ``dispute first``, or a configuration's ``state/head/tape``."""
        if state.phase == CLAIM:
            return f"claim {action}"
        if state.phase == DISPUTE:
            return f"dispute {HALVES[action]}" if action in (0, 1) else f"dispute {action}?"
        if 0 <= action < self.n_configs:
            return f"{state.phase} {_conf(self.configuration(action))}"
        return f"{state.phase} {action}?"

    def params(self) -> dict[str, Any]:
        """The constructor's arguments."""
        return {"program": self.program, "space": self.space, "origin": self.origin,
                "steps": self.steps, "claim": self.claim, "horizon": self.horizon}  # fmt: skip


def _conf(c: Configuration) -> str:
    return f"{c.state}/{c.head}/{''.join(map(str, c.tape))}"


register_rules(
    NAME,
    RulesEntry(
        BisectionRules,
        {
            "program": "1RB1LB_1LA1RZ",
            "space": 2,
            "origin": 0,
            "steps": 4,
            "claim": -1,
            "horizon": 0,
        },
        "Bisection (Figure 3): A's final configuration and midpoints, B's disputed halves",
    ),
)
