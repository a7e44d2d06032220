"""A PettingZoo AEC environment over a family of instances: agents ``"A"`` and ``"B"``.

Each :meth:`DebateEnv.reset` draws one instance of the family (from the reset's seed, so
equal seeds replay equal episodes) and plays the protocol's rules
(:mod:`proofgames.selfplay.rules`) on it, agent by agent.  An observation is a dict:

* ``"observation"``: the rules' vector (float32, every entry in ``[0, 1]``; the layout is in
  ``docs/selfplay.md``), the same for both agents -- the game has perfect information;
* ``"action_mask"``: int8, 1 at each action legal for this agent now (all 0 when it is not
  this agent's turn).

Rewards come only at the end: ``+1`` to A and ``-1`` to B when V accepts, the opposite when
V rejects.  An illegal action -- masked out, out of range, or not an integer -- ends the
episode as that agent's loss; ``infos`` then hold ``forfeited_by`` and the ``reason``.

Example:
    >>> from proofgames.selfplay import TuringFamily
    >>> env = DebateEnv("bisection", TuringFamily(space=2, max_steps=4), claim=1)
    >>> env.reset(seed=3)
    >>> env.agent_selection, int(env.action_space("A").n)  # (2 states + HALT, OVERFLOW) x 2 x 2**2
    ('A', 32)
    >>> env.step(10_000)  # out of range: A forfeits
    >>> env.rewards, env.infos["A"]["forfeited_by"]
    ({'A': -1.0, 'B': 1.0}, 'A')

"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector

from ..errors import ProtocolError
from .family import StochasticFamily, StochasticInstance, TuringFamily, TuringInstance
from .rules import CHANCE, PLAYERS, TERMINAL, Node, Rules, make_rules

__all__ = ["DebateEnv"]


def _chance_rng(seed: int) -> np.random.Generator:
    """The chance nodes' generator: a child of ``seed``, apart from the instance draws."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


class DebateEnv(AECEnv):  # type: ignore[misc]
    """A debate protocol as a two-agent turn-based environment.

    Args:
        protocol: a protocol with self-play rules (``"bisection"``, ``"stochastic"``).
        family: where each episode's instance comes from.
        claim: the claim A must defend (0 or 1), or -1: A chooses it as its first move.
        instances: a fixed pool to draw from instead of fresh draws of the family (e.g. a
            training split); they must belong to ``family`` (the same action space).
        render_mode: ``None`` or ``"ansi"`` (:meth:`render` returns the state as text).
        seed: where instance draws start until a ``reset`` gives a seed (each
            ``reset(seed=s)`` restarts the draws from ``s``).

    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "proofgames_debate_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        protocol: str,
        family: TuringFamily | StochasticFamily,
        claim: int = -1,
        instances: list[TuringInstance] | list[StochasticInstance] | None = None,
        render_mode: str | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ProtocolError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.protocol, self.family, self.claim = protocol, family, claim
        self.pool: list[TuringInstance | StochasticInstance] | None = (
            list(instances) if instances is not None else None
        )
        self.render_mode = render_mode
        self.possible_agents = list(PLAYERS)
        self._rng = np.random.default_rng(seed)
        self._chance = _chance_rng(seed)
        self.rules = self._rules(family.instance(0))
        self._spaces = (
            spaces.Discrete(self.rules.num_actions),
            spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (self.rules.observation_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.rules.num_actions,), np.int8),
            }),
        )  # fmt: skip
        self.node: Node = self.rules.initial()
        self.instance: TuringInstance | StochasticInstance | None = None

    def _rules(self, inst: TuringInstance | StochasticInstance) -> Rules[Any]:
        return make_rules(self.protocol, **inst.params(), claim=self.claim,
                          horizon=self.family.max_steps)  # fmt: skip

    def action_space(self, agent: str) -> spaces.Discrete:
        """One discrete space shared by both agents (see ``docs/selfplay.md``)."""
        return self._spaces[0]

    def observation_space(self, agent: str) -> spaces.Dict:
        """``{"observation": Box, "action_mask": Box}``."""
        return self._spaces[1]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Draw an instance (from ``seed`` if given) and start its debate."""
        if seed is not None:
            self._rng, self._chance = np.random.default_rng(seed), _chance_rng(seed)
        inst: TuringInstance | StochasticInstance
        if self.pool:
            inst = self.pool[int(self._rng.integers(len(self.pool)))]
        else:
            inst = self.family.instance(int(self._rng.integers(2**63)))
        rules = self._rules(inst)
        if rules.num_actions != self.rules.num_actions:
            raise ProtocolError(f"instance {inst} does not belong to the family {self.family}")
        self.instance, self.rules = inst, rules
        self.node = self._settle(rules.initial())
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = PLAYERS[self.node.player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The shared observation vector and this agent's action mask."""
        mask = np.zeros(self.rules.num_actions, dtype=np.int8)
        if not self.node.terminal and PLAYERS[self.node.player] == agent:
            mask = self.rules.mask(self.node)
        return {"observation": self.rules.observation(self.node), "action_mask": mask}

    def step(self, action: Any) -> None:
        """The selected agent plays ``action``; an illegal one is its loss."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self.node = self._settle(self.rules.apply(self.node, action))  # illegal: forfeit
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.node.player == TERMINAL:
            ret = self.rules.returns(self.node)
            self.rewards = dict(zip(PLAYERS, ret, strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
            record = {"verdict": self.node.verdict, "reason": self.node.reason,
                      "forfeited_by": self.node.forfeited_by}  # fmt: skip
            self.infos = {p: dict(record) for p in self.agents}
            self.agent_selection = PLAYERS[1 - PLAYERS.index(agent)]
        else:
            self.agent_selection = PLAYERS[self.node.player]
        self._accumulate_rewards()

    def _settle(self, node: Node) -> Node:
        """Play chance nodes (the stochastic protocol's coins and samples) until an agent moves.

        Outcomes are drawn with the rules' exact probabilities from the environment's chance
        generator (a child of the reset's seed), so equal seeds replay equal episodes.
        """
        while node.player == CHANCE:
            outcomes = self.rules.chance_outcomes(node)
            probs = np.array([q for _, q in outcomes])
            pick = int(self._chance.choice(len(outcomes), p=probs / probs.sum()))
            node = self.rules.apply(node, outcomes[pick][0])
        return node

    def render(self) -> str | None:
        """The state as text (``render_mode="ansi"``), else nothing."""
        return self.rules.describe(self.node) if self.render_mode == "ansi" else None

    def close(self) -> None:
        """Nothing to release."""
