"""The stochastic protocol (Figure 1) as a self-play game: A's announcements, B's aborts, chance.

The machine is a small :class:`~proofgames.stochastic.StochasticMachine` of the zoo (a
spec of :func:`~proofgames.make_stochastic_machine`), the parameters a named set derived
for it with the theorem's (every-step) K (:func:`~proofgames.machine_params`).  Round
``t`` at history ``h`` (the bits so far) has the exact conditional probability
``p = P[y_t = 1 | h]``, known to both players (perfect information).  The moves:

1. A, ``claim`` (only with ``claim=-1``): 0 or 1;
2. per round: A, ``announce``: action ``k`` in ``0 .. grid`` announces ``k / grid``; action
   ``grid + 1`` (*honest*) announces honest A's estimate -- ``p`` itself at a step known
   exactly (deterministic, or an internal coin), else its sample mean ``X / R``, drawn at
3. chance, ``sample``: ``X ~ Binomial(R, p)``, ``R`` the parameters' ``a_samples``;
4. the shared coin (``params.coin == "shared"``, the paper's): chance, ``coin``: the bit is
   1 with probability ``c`` (the announcement), then B, ``abort``: 0 continues, 1 aborts.
   With the Lean set's external coin B moves first and the coin follows if it continues;
5. on an abort, chance, ``verify``: V's check passes (1) with the exact probability that its
   estimate lies in its window around ``c`` -- the game ends with that verdict;
6. after the last round V accepts iff the last bit is the claim.

``a="honest"`` or ``b="honest"`` replaces that player by the protocol's honest party as
chance (A always plays *honest*; B aborts with honest B's exact abort probability), which
is how the game reproduces :func:`~proofgames.stochastic.optimal.optimal_disputer` and
:func:`~proofgames.stochastic.optimal.liar_policy_value` (``docs/selfplay.md``).

Why the coin is a chance node: the shared coin ``z_A + z_B mod 1`` is uniform as soon as
one share is, so either player can force ``P[bit = 1] = c``; the game in which both pick
shares therefore has the value of this one, where the coin is drawn by chance.

Why V's samples are two outcomes: V's estimate matters only through its verdict, which
ends the game, so the node draws the verdict with the exact Binomial probability of its
window (:func:`~proofgames.stochastic.optimal.verdict_probabilities`, the probabilities
``stochastic.optimal`` uses) rather than one outcome per count.

Example:
    A claims that one oracle query with p = 0.8 comes out 1 and announces 0.8; under the
    Lean parameters (an external coin) B continues, the coin comes out 1, and V accepts:

    >>> rules = StochasticRules("single-query:p=0.8", params="lean", claim=1, grid=10)
    >>> s = rules.initial()
    >>> s.phase, rules.legal(s)[-1]  # actions 0..10 announce k/10; 11 is honest
    ('announce', 11)
    >>> s = rules.apply(s, 8)  # announce 8/10 = 0.8
    >>> s = rules.apply(s, 0)  # B continues
    >>> s.phase, rules.chance_outcomes(s)
    ('coin', [(0, 0.19999999999999996), (1, 0.8)])
    >>> s = rules.apply(s, 1)
    >>> s.verdict, s.reason
    (1, 'no abort: the last bit is 1, the claim 1')

"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import ProtocolError
from ..protocols.stochastic import NAME
from ..stochastic._verdicts import support
from ..stochastic.hypothesis import machine_params
from ..stochastic.machines import make_stochastic_machine
from ..stochastic.model import FloatArray, StochasticMachine
from ..stochastic.optimal import MAX_STEPS, verdict_probabilities
from ..stochastic.params import EXTERNAL, StochasticParams
from .rules import (
    CHANCE,
    TERMINAL,
    A,
    B,
    Node,
    Rules,
    RulesEntry,
    as_action,
    check_claim,
    observe_header,
    register_rules,
)
from .rules import FloatArray as Obs

__all__ = ["HONEST", "PLAYER", "StochasticNode", "StochasticRules"]

CLAIM, ANNOUNCE, SAMPLE, COIN, ABORT, VERIFY, OVER = (
    "claim", "announce", "sample", "coin", "abort", "verify", "terminal")  # fmt: skip
PHASES = (CLAIM, ANNOUNCE, SAMPLE, COIN, ABORT, VERIFY, OVER)
PLAYER, HONEST = "player", "honest"


@dataclass(frozen=True)
class StochasticNode(Node):
    """A stochastic-debate game state.

    Attributes:
        round: the round ``t`` under way (``T`` once every round is played).
        history: the bits so far, bit ``i`` at ``1 << i`` (``stochastic.optimal``'s order).
        announced: A's announcement this round, once made.
        bit: this round's coin, once drawn.
        aborted: whether B aborted (the game then ends at V's check).

    """

    round: int = 0
    history: int = 0
    announced: float | None = None
    bit: int | None = None
    aborted: bool = False


@dataclass(frozen=True)
class _Prepared:
    """A machine, its parameters, and ``p``, ``known`` per round and history."""

    machine: StochasticMachine
    params: StochasticParams
    prob: tuple[FloatArray, ...]
    known: tuple[np.ndarray, ...]


@functools.lru_cache(maxsize=64)
def _prepare(machine: str, params: str) -> _Prepared:
    m = make_stochastic_machine(machine)
    if m.length > MAX_STEPS:
        raise ProtocolError(f"{m.name}: the self-play game takes T <= {MAX_STEPS}, not {m.length}")
    prob, known = [], []
    for t in range(m.length):
        idx = np.arange(1 << t, dtype=np.int64)
        bits = (idx[:, None] >> np.arange(t, dtype=np.int64)) & 1
        values = bits[:, list(m.relevant(t))]
        prob.append(m.probability_batch(t, values))
        known.append(~np.full(idx.size, m.is_query(t)) | m.internal_batch(t, values))
    return _Prepared(m, machine_params(params, m), tuple(prob), tuple(known))


@functools.lru_cache(maxsize=256)
def _samples(samples: int, p: float) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Honest A's counts ``X ~ Binomial(samples, p)``: the support (tails folded in) and pmf."""
    from scipy import stats  # imported here: it takes 0.4 s

    counts = support(samples, p)
    pmf = stats.binom.pmf(counts, samples, p)
    pmf[0] += stats.binom.cdf(counts[0] - 1, samples, p)  # the tails beyond TAIL, folded
    pmf[-1] += stats.binom.sf(counts[-1], samples, p)  # onto the support's ends
    return tuple(counts.tolist()), tuple((pmf / pmf.sum()).tolist())


def _two(p1: float) -> list[tuple[int, float]]:
    """Outcomes 0 and 1 with probabilities ``1 - p1`` and ``p1``, those that can happen."""
    return [(o, q) for o, q in ((0, 1.0 - p1), (1, p1)) if q > 0.0]


class StochasticRules(Rules[StochasticNode]):
    """The stochastic debate game on one small machine (see the module docstring).

    Args:
        machine: a stochastic machine spec (``"single-query:p=0.8"``), at most
            :data:`~proofgames.stochastic.optimal.MAX_STEPS` steps.
        params: a parameter set's name (``"lean"``, ``"paper"``, ``"lean:strict"`` ...),
            derived for the machine with the theorem's every-step K.
        claim: the output A asserts (0 or 1), or -1 to let A choose it first.
        grid: G: A's announcements are ``k / G``, ``k = 0 .. G``, plus *honest*.
        a: ``"player"`` (A chooses) or ``"honest"`` (honest A, as chance).
        b: ``"player"`` (B chooses) or ``"honest"`` (honest B, as chance).
        horizon: the T that observations are sized and scaled by (default: the machine's).

    """

    protocol = NAME

    def __init__(self, machine: str = "single-query:p=0.8", params: str = "lean",
                 claim: int = -1, grid: int = 100, a: str = PLAYER, b: str = PLAYER,
                 horizon: int = 0) -> None:  # fmt: skip
        check_claim(claim)
        if isinstance(grid, bool) or not isinstance(grid, int) or not 1 <= grid <= 10_000:
            raise ProtocolError(f"grid must be an integer in 1..10000, got {grid!r}")
        if a not in (PLAYER, HONEST) or b not in (PLAYER, HONEST):
            raise ProtocolError(f"a and b must be 'player' or 'honest', got {a!r}, {b!r}")
        prep = _prepare(machine, params)
        self.machine, self.protocol_params = prep.machine, prep.params
        self._prob, self._known = prep.prob, prep.known
        self.spec, self.params_spec, self.claim, self.grid = machine, params, claim, grid
        self.a, self.b = a, b
        self.steps = self.machine.length
        if horizon and horizon < self.steps:
            raise ProtocolError(f"horizon {horizon} is shorter than the machine's T = {self.steps}")
        self.horizon = max(horizon, self.steps)
        self.honest_action = grid + 1
        self.num_actions = grid + 2
        self.max_length = 1 + 5 * self.steps
        widest = [len(self._sample_table(t, h)[0]) for t in range(self.steps)
                  for h in range(1 << t) if not self._known[t][h]]  # fmt: skip
        self.max_chance_outcomes = max([2, *widest])
        self.observation_size = len(PHASES) + 2 + 3 + 2 * self.horizon + 9
        self._verdicts: dict[tuple[int, int, float], tuple[float, float]] = {}
        self._filled: set[tuple[int, int]] = set()
        first = StochasticNode(CLAIM, A, None)
        self._initial = first if claim == -1 else self._round(replace(first, claim=claim))

    # ------------------------------------------------------------------ tables
    def probability(self, state: StochasticNode) -> tuple[float, bool]:
        """``(p, known)`` of the round under way: ``P[y_t = 1 | history]``, and whether exact."""
        t, h = state.round, state.history
        return float(self._prob[t][h]), bool(self._known[t][h])

    def _sample_table(self, t: int, h: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
        return _samples(self.protocol_params.a_samples, float(self._prob[t][h]))

    def verdicts(self, t: int, h: int, c: float) -> tuple[float, float]:
        """(P[honest B aborts], P[V accepts on an abort]) for announcement ``c``.

        Computed by :func:`~proofgames.stochastic.optimal.verdict_probabilities` and kept;
        at a sampled step, the first call computes every estimate honest A may announce.
        """
        key = (t, h, c)
        known = self._verdicts.get(key)
        if known is None:
            cs = [c]
            if not self._known[t][h] and (t, h) not in self._filled:
                self._filled.add((t, h))
                cs += [x / self.protocol_params.a_samples for x in self._sample_table(t, h)[0]]
            n = len(cs)
            aborts, accept = verdict_probabilities(
                self.machine, self.protocol_params, t, np.full(n, self._prob[t][h]),
                np.array(cs), np.full(n, self._known[t][h]),
            )  # fmt: skip
            for x, ab, ac in zip(cs, aborts.tolist(), accept.tolist(), strict=True):
                self._verdicts[(t, h, x)] = (ab, ac)
            known = self._verdicts[key]
        return known

    # ------------------------------------------------------------- transitions
    def _round(self, s: StochasticNode) -> StochasticNode:
        s = replace(s, announced=None, bit=None)
        if self.a == PLAYER:
            return replace(s, phase=ANNOUNCE, player=A)
        return self._honest(s)

    def _honest(self, s: StochasticNode) -> StochasticNode:
        p, known = self.probability(s)
        return self._announced(s, p) if known else replace(s, phase=SAMPLE, player=CHANCE)

    def _announced(self, s: StochasticNode, c: float) -> StochasticNode:
        s = replace(s, announced=c)
        return (
            self._abort_phase(s) if self.protocol_params.coin == EXTERNAL else self._coin_phase(s)
        )

    def _coin_phase(self, s: StochasticNode) -> StochasticNode:
        return replace(s, phase=COIN, player=CHANCE)

    def _abort_phase(self, s: StochasticNode) -> StochasticNode:
        return replace(s, phase=ABORT, player=B if self.b == PLAYER else CHANCE)

    def _advance(self, s: StochasticNode) -> StochasticNode:
        assert s.bit is not None
        s = replace(s, history=s.history | (s.bit << s.round), round=s.round + 1)
        if s.round < self.steps:
            return self._round(s)
        same = s.bit == s.claim
        reason = (
            f"no abort: the last bit is {s.bit}, {'the' if same else 'not the'} claim {s.claim}"
        )
        return self._over(s, int(same), reason)

    def _over(self, s: StochasticNode, verdict: int, reason: str, by: str = "") -> StochasticNode:
        return replace(s, phase=OVER, player=TERMINAL, verdict=verdict, reason=reason,
                       forfeited_by=by)  # fmt: skip

    # ------------------------------------------------------------------- rules
    def initial(self) -> StochasticNode:
        """A's claim is due, or (with a fixed claim) round 0."""
        return self._initial

    def legal(self, state: StochasticNode) -> list[int]:
        """Claims and B's continue/abort: 0 and 1; announcements: ``0 .. grid + 1``."""
        if state.player not in (A, B):
            return []
        return list(range(self.num_actions)) if state.phase == ANNOUNCE else [0, 1]

    def chance_outcomes(self, state: StochasticNode) -> list[tuple[int, float]]:
        """A's sample count (index into its support), the coin, honest B's abort, V's check."""
        if state.player != CHANCE:
            return []
        t, h, c = state.round, state.history, state.announced
        if state.phase == SAMPLE:
            return list(enumerate(self._sample_table(t, h)[1]))
        assert c is not None
        if state.phase == COIN:
            return _two(c)
        aborts, accept = self.verdicts(t, h, c)
        return _two(aborts if state.phase == ABORT else accept)

    def apply(self, state: StochasticNode, action: object) -> StochasticNode:
        """Play ``action`` (a chance outcome at a chance node); an illegal one forfeits."""
        if state.terminal:
            raise ProtocolError("the game is over; no action can be applied")
        if state.player == CHANCE:
            return self._chance(state, action)
        a = as_action(action)
        width = self.num_actions if state.phase == ANNOUNCE else 2
        if a is None or not 0 <= a < width:
            return self._forfeit(state, action, width)
        s = replace(state, moves=state.moves + 1)
        if s.phase == CLAIM:
            return self._round(replace(s, claim=a))
        if s.phase == ANNOUNCE:
            return self._honest(s) if a == self.honest_action else self._announced(s, a / self.grid)
        return self._decide(s, a)

    def _decide(self, s: StochasticNode, abort: int) -> StochasticNode:
        """B's (or honest B's) choice: abort to V's check, or go on."""
        if abort:
            return replace(s, phase=VERIFY, player=CHANCE, aborted=True)
        return self._coin_phase(s) if self.protocol_params.coin == EXTERNAL else self._advance(s)

    def _chance(self, state: StochasticNode, action: object) -> StochasticNode:
        o = as_action(action)
        if state.phase == SAMPLE:
            ok = o is not None and 0 <= o < len(self._sample_table(state.round, state.history)[0])
        else:
            ok = o in dict(self.chance_outcomes(state))
        if o is None or not ok:
            raise ProtocolError(f"{action!r} is not a chance outcome of the {state.phase} node")
        s = replace(state, moves=state.moves + 1)
        if s.phase == SAMPLE:
            count = self._sample_table(s.round, s.history)[0][o]
            return self._announced(s, count / self.protocol_params.a_samples)
        if s.phase == COIN:
            s = replace(s, bit=o)
            return (
                self._abort_phase(s) if self.protocol_params.coin != EXTERNAL else self._advance(s)
            )
        if s.phase == ABORT:
            return self._decide(s, o)
        agrees = "agrees with" if o else "is too far from"
        reason = (
            f"B aborted in round {s.round}: V's check {agrees} A's announcement {s.announced!r}"
        )
        return self._over(s, o, reason)

    def _forfeit(self, s: StochasticNode, action: object, width: int) -> StochasticNode:
        who = "A" if s.player == A else "B"
        reason = f"{who} loses: {who} played {action!r} as its {s.phase}, "
        reason += f"not an action in 0..{width - 1}"
        return self._over(replace(s, moves=s.moves + 1), int(who == "B"), reason, who)

    # ------------------------------------------------------------ observations
    def observe(self, state: StochasticNode, out: Obs) -> None:
        """Phase, player, claim, the bits, times, p, the announcement, the coin, the abort.

        The layout is documented in ``docs/selfplay.md``; every entry lies in ``[0, 1]``.
        """
        i = observe_header(PHASES, state, out)
        for j in range(state.round):
            out[i + j] = float((state.history >> j) & 1)
            out[i + self.horizon + j] = 1.0
        i += 2 * self.horizon
        p, known = self.probability(state) if state.round < self.steps else (0.0, False)
        c, bit = state.announced, state.bit
        out[i : i + 9] = (state.round / self.horizon, self.steps / self.horizon, p, float(known),
                          c or 0.0, float(c is not None), bit or 0, float(bit is not None),
                          float(state.aborted))  # fmt: skip

    def describe(self, state: StochasticNode) -> str:
        """Phase, claim, round, the bits, the announcement and the coin (and the verdict)."""
        bits = "".join(str((state.history >> j) & 1) for j in range(state.round))
        text = f"{state.phase} claim={state.claim} t={state.round}/{self.steps} bits={bits or '-'}"
        if state.announced is not None:
            text += f" c={state.announced!r}"
        if state.bit is not None:
            text += f" bit={state.bit}"
        if state.terminal:
            text += f" verdict={state.verdict} ({state.reason})"
        return text

    def action_name(self, state: StochasticNode, action: int) -> str:
        """``announce 3/10``, ``announce honest``, ``abort``/``continue``, or a chance outcome."""
        if state.phase == ANNOUNCE:
            if action == self.honest_action:
                return "announce honest"
            return f"announce {action}/{self.grid}"
        if state.phase == CLAIM:
            return f"claim {action}"
        if state.phase == ABORT:
            return ("continue", "abort")[action] if action in (0, 1) else f"abort {action}?"
        if state.phase == SAMPLE:
            counts = self._sample_table(state.round, state.history)[0]
            return f"A's samples: {counts[action]} of {self.protocol_params.a_samples}"
        return f"{state.phase} {action}"

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return _rebuild, (self.params(),)  # pickled by its parameters: the machine has closures

    def params(self) -> dict[str, Any]:
        """The constructor's arguments."""
        return {"machine": self.spec, "params": self.params_spec, "claim": self.claim,
                "grid": self.grid, "a": self.a, "b": self.b, "horizon": self.horizon}  # fmt: skip


def _rebuild(params: dict[str, Any]) -> StochasticRules:
    return StochasticRules(**params)


register_rules(
    NAME,
    RulesEntry(
        StochasticRules,
        {
            "machine": "single-query:p=0.8",
            "params": "lean",
            "claim": -1,
            "grid": 100,
            "a": PLAYER,
            "b": PLAYER,
            "horizon": 0,
        },
        "Stochastic debate (Figure 1): A's announcements, B's aborts, chance coins and samples",
        chance=True,
    ),
)
