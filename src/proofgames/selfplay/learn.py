"""Learned debaters: self-play PPO for A and B in one file, in the CleanRL style (issue 38).

Two small policy networks -- one for A, one for B -- play the protocol's game
(:mod:`proofgames.selfplay.rules`) against each other on a family's training instances
and learn from V's verdict alone: A's reward is ``+1`` when V accepts and ``-1`` when it
rejects, B's the opposite.  The loop, top to bottom:

1. **rollout**: ``episodes`` games in lockstep.  Each draws a training instance and a claim
   setting: with probability ``1 - false_share`` A chooses its claim (the debate game of
   the theorem), otherwise A must defend the *false* output (so that B keeps meeting
   liars, and A's lying is trained as hard as B's refuting).  Every move of every game
   whose player is to move is one batched forward pass; actions are sampled from the
   masked softmax (``mask_actions=False`` samples over every action, so an illegal one
   forfeits: the rules record who and why, nothing raises); chance nodes are drawn with
   the rules' exact probabilities.
2. **PPO update**, per player: the return is the episode's payoff (no discount, rewards
   only at the end), the advantage the return minus the critic's value, and each network
   takes ``epochs`` passes of clipped-ratio policy-gradient minibatches with an entropy
   bonus and a value loss.
3. **evaluation**, every ``eval_every`` iterations, on held-out instances, *exact*
   (:mod:`proofgames.selfplay.evaluate`): the greedy policies' truthful share, V's
   acceptance, and each side's exploitability against its exact best response.

Every random choice flows from ``seed``: a numpy ``SeedSequence`` splits it into the
instance split, the rollouts' draws and a ``torch.Generator`` (weights, sampling,
minibatch order), so the same seed gives the same curve (a test).

Example:
    A tiny run (two iterations of eight games, one evaluation):

    >>> from proofgames.selfplay import TuringFamily
    >>> cfg = LearnConfig(protocol="bisection", iterations=2, episodes=8, eval_every=2,
    ...                   train_instances=8, eval_instances=2)
    >>> run = train(cfg, TuringFamily(space=2, max_steps=2, states=1, halt_share=0.5))
    >>> [row["iteration"] for row in run.curve], run.curve[-1]["episodes"]
    ([0, 2], 16)

"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from ..errors import ProtocolError
from .evaluate import EvalSet, evaluate, greedy_batch, settle
from .family import StochasticFamily, TuringFamily
from .rules import A, Node, Rules

__all__ = ["Agent", "LearnConfig", "Run", "train"]


@dataclass(frozen=True)
class LearnConfig:
    """One training run's settings (every one recorded with the run).

    Attributes:
        protocol: a protocol with self-play rules (``"bisection"``, ``"consultancy"`` ...).
        seed: the root of every random choice.
        iterations: rollout-and-update iterations.
        episodes: games per rollout.
        eval_every: iterations between exact evaluations (one before training, one at
            the end).
        train_instances: training instances drawn from the family (a Turing family; a
            stochastic family trains on all of its machines).
        eval_instances: held-out instances evaluated (a stochastic family: all of them).
        false_share: the share of games in which A must defend the false claim.
        hidden: the width of each network's two hidden layers.
        lr: Adam's learning rate.
        epochs: passes over a rollout per update.
        minibatches: minibatches per pass.
        clip: PPO's ratio clip.
        ent_coef: the entropy bonus's weight.
        vf_coef: the value loss's weight.
        max_grad_norm: the gradient norm clip.
        mask_actions: sample only legal actions (``False``: illegal ones are possible, and
            forfeit).
        wilson_plays: plays per held-out instance and claim in the final sampled check.
        explore: the chance that an A move of a rollout is a uniformly random legal action
            instead of the network's: B meets lies A's policy does not tell (A does not
            learn from a game with such a move; B learns from every game).
        anneal_lr: decay both learning rates linearly to 0 over the run (CleanRL's
            ``anneal_lr``), so that the last iterations settle rather than cycle.
        factored: score composite actions by their parts too (the rules'
            ``action_features``, where they have them; :class:`Agent`).
        depth: hidden layers of each network.

    """

    protocol: str = "bisection"
    seed: int = 0
    iterations: int = 100
    episodes: int = 64
    eval_every: int = 20
    train_instances: int = 200
    eval_instances: int = 16
    false_share: float = 0.5
    hidden: int = 64
    lr: float = 3e-3
    epochs: int = 4
    minibatches: int = 4
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    mask_actions: bool = True
    wilson_plays: int = 0
    explore: float = 0.0
    anneal_lr: bool = False
    factored: bool = False
    depth: int = 2

    def __post_init__(self) -> None:
        counts = ("iterations", "episodes", "eval_every", "train_instances", "eval_instances",
                  "hidden", "epochs", "minibatches", "depth")  # fmt: skip
        for name in counts:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ProtocolError(f"{name} must be a positive integer, got {value!r}")
        if not 0.0 <= self.false_share <= 1.0:
            raise ProtocolError(f"false_share must be in [0, 1], got {self.false_share!r}")
        if not 0.0 <= self.explore <= 1.0:
            raise ProtocolError(f"explore must be in [0, 1], got {self.explore!r}")
        if self.seed < 0 or self.wilson_plays < 0:
            raise ProtocolError("seed and wilson_plays must be non-negative")


@dataclass
class Run:
    """A finished run: its settings, its learning curve and its final check.

    Attributes:
        config: the settings.
        curve: one row per evaluation (iteration, episodes, seconds, the exact metrics).
        final: the last evaluation, with the sampled check's counts and Wilson intervals.
        train_seconds: CPU seconds of rollouts and updates (evaluations not counted).
        forfeits: games ended by an illegal action, per player.
        agents: the trained networks, A's and B's (not in :meth:`to_dict`).

    """

    config: LearnConfig
    curve: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)
    train_seconds: float = 0.0
    forfeits: dict[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    agents: tuple[Agent, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the report's JSON."""
        return {"config": asdict(self.config), "curve": self.curve, "final": self.final,
                "train_seconds": self.train_seconds, "forfeits": self.forfeits}  # fmt: skip


def layer(inp: int, out: int, gen: torch.Generator, std: float = 2**0.5) -> nn.Linear:
    """A linear layer with orthogonal weights drawn from ``gen`` (CleanRL's ``layer_init``)."""
    lin = nn.Linear(inp, out)
    nn.init.orthogonal_(lin.weight, std, generator=gen)
    nn.init.zeros_(lin.bias)
    return lin


class Agent(nn.Module):
    """One player's policy (masked logits) and value, over the rules' observation.

    With ``features`` (the rules' :meth:`~proofgames.selfplay.rules.Rules.action_features`,
    one row per action), an action's logit is its own score plus the sum of its parts'
    scores (``factor``): a configuration is scored by its state, head and cells, so what
    is learned about one cell carries over to every configuration that shares it.
    """

    def __init__(
        self, obs: int, actions: int, hidden: int, gen: torch.Generator,
        features: NDArray[np.float32] | None = None, depth: int = 2,
    ) -> None:  # fmt: skip
        super().__init__()
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [layer(obs if i == 0 else hidden, hidden, gen), nn.Tanh()]
        self.body = nn.Sequential(*layers)
        self.actor = layer(hidden, actions, gen, std=0.01)
        self.critic = layer(hidden, 1, gen, std=1.0)
        self.factor: nn.Linear | None = None
        self.features: torch.Tensor | None
        self.register_buffer("features", None if features is None else torch.from_numpy(features))
        if features is not None:
            self.factor = layer(hidden, features.shape[1], gen, std=0.01)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        """``(logits, value)``; logits of masked-out actions are -1e9 when a mask is given."""
        h = self.body(obs)
        logits = self.actor(h)
        if self.factor is not None and self.features is not None:
            logits = logits + self.factor(h) @ self.features.T
        if mask is not None:
            logits = logits.masked_fill(mask == 0, -1e9)
        return logits, self.critic(h).squeeze(-1)


@dataclass
class _Buffer:
    """One player's moves of a rollout."""

    obs: list[NDArray[np.float32]] = field(default_factory=list)
    mask: list[NDArray[np.int8]] = field(default_factory=list)
    action: list[int] = field(default_factory=list)
    logp: list[float] = field(default_factory=list)
    value: list[float] = field(default_factory=list)
    game: list[int] = field(default_factory=list)


def rollout(
    ev: EvalSet, agents: tuple[Agent, Agent], cfg: LearnConfig,
    rng: np.random.Generator, gen: torch.Generator,
) -> tuple[list[_Buffer], NDArray[np.float64], list[Node]]:  # fmt: skip
    """``cfg.episodes`` training games in lockstep: both players' moves and A's payoffs."""
    games: list[tuple[Rules[Any], Node]] = []
    for _ in range(cfg.episodes):
        i = int(rng.integers(len(ev.train)))
        claim = 1 - ev.truth(ev.train[i]) if rng.random() < cfg.false_share else -1
        rules = ev.rules(ev.train[i], claim)
        games.append((rules, settle(rules, rules.initial(), rng)))
    nodes = [n for _, n in games]
    bufs = [_Buffer(), _Buffer()]
    explored: set[int] = set()
    while True:
        moved = False
        for p, agent in enumerate(agents):
            idx = [g for g, n in enumerate(nodes) if n.player == p and not n.terminal]
            if not idx:
                continue
            moved = True
            obs = np.stack([games[g][0].observation(nodes[g]) for g in idx])
            mask = np.stack([games[g][0].mask(nodes[g]) for g in idx])
            with torch.no_grad():
                m = torch.from_numpy(mask) if cfg.mask_actions else None
                logits, value = agent(torch.from_numpy(obs), m)
                logp_all = torch.log_softmax(logits, dim=-1)
                acts = torch.multinomial(logp_all.exp(), 1, generator=gen).squeeze(-1)
                logp = logp_all.gather(1, acts[:, None]).squeeze(-1)
            actions = acts.tolist()
            if p == A and cfg.explore > 0.0:
                _explore(actions, idx, mask, explored, cfg.explore, rng)
            b = bufs[p]
            b.obs.extend(obs)
            b.mask.extend(mask)
            b.action.extend(actions)
            b.logp.extend(logp.tolist())
            b.value.extend(value.tolist())
            b.game.extend(idx)
            for g, a in zip(idx, actions, strict=True):
                rules = games[g][0]
                nodes[g] = settle(rules, rules.apply(nodes[g], a), rng)  # illegal: forfeit
        if not moved:
            break
    payoff = np.array([1.0 if n.verdict == 1 else -1.0 for n in nodes])
    if explored:
        bufs[A] = _keep(bufs[A], explored)
    return bufs, payoff, nodes


def _explore(
    actions: list[int], games: list[int], mask: NDArray[np.int8], explored: set[int],
    share: float, rng: np.random.Generator,
) -> None:  # fmt: skip
    """Replace each of A's sampled ``actions`` by a uniform legal one with chance ``share``."""
    for j, g in enumerate(games):
        if rng.random() < share:
            actions[j] = int(rng.choice(np.flatnonzero(mask[j])))
            explored.add(g)


def _keep(buf: _Buffer, drop: set[int]) -> _Buffer:
    """``buf`` without the moves of the games in ``drop``."""
    rows = [i for i, g in enumerate(buf.game) if g not in drop]
    return _Buffer(*([getattr(buf, f)[i] for i in rows] for f in
                     ("obs", "mask", "action", "logp", "value", "game")))  # fmt: skip


def ppo_update(
    agent: Agent, opt: torch.optim.Optimizer, buf: _Buffer, returns: NDArray[np.float64],
    cfg: LearnConfig, gen: torch.Generator,
) -> None:  # fmt: skip
    """PPO's clipped update of one player's network on its moves of one rollout."""
    n = len(buf.action)
    if n == 0:
        return
    obs = torch.from_numpy(np.stack(buf.obs))
    mask = torch.from_numpy(np.stack(buf.mask)) if cfg.mask_actions else None
    act = torch.tensor(buf.action)
    old_logp = torch.tensor(buf.logp)
    ret = torch.tensor(returns[buf.game], dtype=torch.float32)
    adv = ret - torch.tensor(buf.value)
    size = max(1, n // cfg.minibatches)
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=gen)
        for first in range(0, n, size):
            mb = perm[first : first + size]
            logits, value = agent(obs[mb], None if mask is None else mask[mb])
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, act[mb, None]).squeeze(-1)
            entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
            a = adv[mb]
            if len(mb) > 1:
                a = (a - a.mean()) / (a.std() + 1e-8)
            ratio = (logp - old_logp[mb]).exp()
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
            v_loss = 0.5 * ((value - ret[mb]) ** 2).mean()
            loss = pg - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            opt.step()


def train(
    cfg: LearnConfig,
    family: TuringFamily | StochasticFamily,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> Run:
    """Train A and B by self-play on ``family`` and evaluate them exactly as they learn.

    ``progress`` is called with each evaluation's row as it is made.
    """
    split, roll, torch_seed = np.random.SeedSequence(cfg.seed).spawn(3)
    ev = EvalSet.make(cfg.protocol, family, split, cfg.train_instances, cfg.eval_instances)
    rng = np.random.default_rng(roll)
    gen = torch.Generator().manual_seed(int(torch_seed.generate_state(1, np.uint64)[0] >> 1))
    probe = ev.rules(ev.held_out[0], -1)
    features = probe.action_features() if cfg.factored else None
    shape = (probe.observation_size, probe.num_actions, cfg.hidden)
    agents = (Agent(*shape, gen, features, cfg.depth), Agent(*shape, gen, features, cfg.depth))
    opts = [torch.optim.Adam(a.parameters(), lr=cfg.lr, eps=1e-5) for a in agents]
    run = Run(cfg, agents=agents)

    def check(it: int, final: bool = False) -> None:
        policies = (greedy_batch(agents[0]), greedy_batch(agents[1]))
        plays = cfg.wilson_plays if final else 0
        row = evaluate(ev, policies, plays, np.random.default_rng(cfg.seed))
        row = {"iteration": it, "episodes": it * cfg.episodes,
               "train_seconds": run.train_seconds, **row}  # fmt: skip
        run.curve.append(row)
        if progress is not None:
            progress(row)
        if final:
            run.final = row

    check(0)
    for it in range(1, cfg.iterations + 1):
        start = time.process_time()
        if cfg.anneal_lr:
            for opt in opts:
                opt.param_groups[0]["lr"] = cfg.lr * (1.0 - (it - 1) / cfg.iterations)
        bufs, payoff, nodes = rollout(ev, agents, cfg, rng, gen)
        for p, sign in ((0, 1.0), (1, -1.0)):
            ppo_update(agents[p], opts[p], bufs[p], sign * payoff, cfg, gen)
        for n in nodes:
            if n.forfeited_by:
                run.forfeits[n.forfeited_by] += 1
        run.train_seconds += time.process_time() - start
        if it % cfg.eval_every == 0 or it == cfg.iterations:
            check(it, final=it == cfg.iterations)
    return run
