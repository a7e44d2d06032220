"""Exact evaluation of learned debaters on held-out instances (what :mod:`.learn` records).

For each held-out instance the learned policies are played *greedily* (each network's most
likely legal action: the policy one would deploy), and everything is computed exactly
with :mod:`.exploit` -- chance nodes are averaged, never sampled:

* ``truthful_share``: the share of instances on which A, choosing its claim, claims the
  machine's true output;
* ``acceptance``: ``P[V accepts]`` when learned A (choosing its claim) meets learned B;
  ``false_acceptance``: the same when A must defend the false claim;
* ``exploit_a``: the game's exact value (A's claim free) minus ``P[V accepts]`` when
  learned A meets its exact best-responding B;
* ``exploit_b``: over both claims, the most by which an exact best-responding A raises
  ``P[V accepts]`` above that claim's exact value against learned B (the deterministic
  protocols: above 1 for the true claim, 0 for the false one);
* ``value`` (the exact value, A's claim free) and ``value_gap``, ``|acceptance - value|``;
* bisection and cross-examination: ``a_correct`` and ``b_correct``, the shares of each
  side's single decisions that are right (:mod:`.decisions`: where a side goes wrong).

Each is averaged over the held-out instances (``*_max``: the worst instance).  The exact
values come from :func:`.exploit.game_value` (bisection, the stochastic protocol) or
:func:`.exploit.tableau_value` (the tableau games), once per instance and claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from ..analysis.intervals import wilson_interval
from .baselines import CONSULTANCY, NO_DEBATE
from .cross_examination import CrossExaminationRules
from .decisions import decision_shares
from .exploit import BatchPolicy, Policy, game_value, tableau_value
from .family import StochasticFamily, StochasticInstance, TuringFamily, TuringInstance
from .rules import CHANCE, A, Node, Rules, make_rules

__all__ = ["EvalSet", "evaluate", "greedy_batch", "node_policy", "settle"]

Instance = TuringInstance | StochasticInstance


def settle(rules: Rules[Any], node: Node, rng: np.random.Generator) -> Node:
    """Play chance nodes with the rules' exact probabilities until a player (or V) is due."""
    while node.player == CHANCE and not node.terminal:
        outcomes = rules.chance_outcomes(node)
        probs = np.array([q for _, q in outcomes])
        pick = int(rng.choice(len(outcomes), p=probs / probs.sum()))
        node = rules.apply(node, outcomes[pick][0])
    return node


def greedy_batch(agent: Any) -> BatchPolicy:
    """A network's greedy policy on a batch: the most likely legal action of each row.

    The network (:class:`~proofgames.selfplay.learn.Agent`: ``body``, tanh layers, then
    ``actor`` and, if factored, ``factor``) is copied into numpy once: the exact searches
    ask it about one state at a time, where numpy's matrix products cost a tenth of a
    torch call.
    """

    def numpy(m: torch.nn.Linear) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        return m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()

    body = [numpy(m) for m in agent.body if isinstance(m, torch.nn.Linear)]
    actor = numpy(agent.actor)
    factor = None
    if getattr(agent, "factor", None) is not None:  # scores of the actions' parts, summed
        w, b = numpy(agent.factor)
        feats = agent.features.numpy()
        factor = (w @ feats.T, b @ feats.T)

    def policy(obs: NDArray[np.float32], mask: NDArray[np.int8]) -> NDArray[np.int64]:
        h = obs
        for w, b in body:
            h = np.tanh(h @ w + b)
        logits = h @ actor[0] + actor[1]
        if factor is not None:
            logits = logits + h @ factor[0] + factor[1]
        return np.asarray(np.where(mask > 0, logits, -np.inf).argmax(-1), dtype=np.int64)

    return policy


def node_policy(batch: BatchPolicy) -> Policy:
    """``batch`` as a policy on one state, remembered per rules and state."""
    memo: dict[tuple[int, str], int] = {}

    def policy(rules: Rules[Any], node: Node) -> int:
        key = (id(rules), rules.describe(node))
        a = memo.get(key)
        if a is None:
            obs, mask = rules.observation(node)[None], rules.mask(node)[None]
            a = memo[key] = int(batch(obs, mask)[0])
        return a

    return policy


@dataclass
class EvalSet:
    """A protocol's training and held-out instances, their rules and exact values (kept).

    Attributes:
        protocol: the protocol played.
        family: the instances' family (sets the action space and the horizon).
        train: the training instances.
        held_out: the evaluated instances (a Turing family: disjoint from ``train``).

    """

    protocol: str
    family: TuringFamily | StochasticFamily
    train: list[Instance]
    held_out: list[Instance]
    _rules: dict[tuple[Instance, int], Rules[Any]] = field(default_factory=dict)
    _values: dict[tuple[Instance, int], float] = field(default_factory=dict)
    _truth: dict[Instance, int] = field(default_factory=dict)

    @classmethod
    def make(
        cls, protocol: str, family: TuringFamily | StochasticFamily,
        seed: np.random.SeedSequence, train: int, held_out: int,
    ) -> EvalSet:  # fmt: skip
        """Draw the split from ``seed`` (a stochastic family: its machines, both times)."""
        if isinstance(family, StochasticFamily):
            every: list[Instance] = list(family.every())
            return cls(protocol, family, every, list(every))
        root = int(seed.generate_state(1, np.uint64)[0] >> 1)
        tr, te = family.split(root, train, held_out)
        return cls(protocol, family, list(tr), list(te))

    def rules(self, inst: Instance, claim: int) -> Rules[Any]:
        """The game on ``inst`` with ``claim`` (-1: A chooses), made once."""
        key = (inst, claim)
        r = self._rules.get(key)
        if r is None:
            r = self._rules[key] = make_rules(self.protocol, **inst.params(), claim=claim,
                                              horizon=self.family.max_steps)  # fmt: skip
        return r

    def truth(self, inst: Instance) -> int:
        """The true output (a stochastic machine: 1 iff ``P[M = 1] > 1/2``)."""
        t = self._truth.get(inst)
        if t is None:
            if isinstance(inst, TuringInstance):
                t = inst.truth
            else:
                from ..stochastic.exact import acceptance_probability
                from ..stochastic.machines import make_stochastic_machine

                t = int(acceptance_probability(make_stochastic_machine(inst.machine)) > 0.5)
            self._truth[inst] = t
        return t

    def value(self, inst: Instance, claim: int) -> float:
        """The exact ``P[V accepts]`` at equilibrium with the claim fixed (-1: A's choice)."""
        if claim == -1:
            return max(self.value(inst, 0), self.value(inst, 1))
        key = (inst, claim)
        v = self._values.get(key)
        if v is None:
            r = self.rules(inst, claim)
            if isinstance(r, CrossExaminationRules):
                v = tableau_value(r, claim)
            else:
                v = game_value(r, r.initial(), (None, None))
            self._values[key] = v
        return v

    @property
    def has_b(self) -> bool:
        """Whether B is a player (not under the baselines)."""
        return self.protocol not in (CONSULTANCY, NO_DEBATE)


def _instance_metrics(
    ev: EvalSet, inst: Instance, pa: Policy, pb: Policy, batch_b: BatchPolicy
) -> dict[str, float]:
    truth, free = ev.truth(inst), ev.rules(inst, -1)
    root = free.initial()
    claimed = pa(free, root) if root.phase == "claim" else truth
    value = ev.value(inst, -1)
    liar = ev.rules(inst, 1 - truth)
    out = {
        "truthful": float(claimed == truth),
        "acceptance": game_value(free, root, (pa, pb)),
        "false_acceptance": game_value(liar, liar.initial(), (pa, pb)),
        "exploit_a": value - game_value(free, root, (pa, None)),
        "value": value,
        "false_value": ev.value(inst, 1 - truth),
    }
    out["value_gap"] = abs(out["acceptance"] - value)
    if ev.has_b:
        gains = []
        for c in (0, 1):
            r = ev.rules(inst, c)
            if isinstance(r, CrossExaminationRules):
                best = tableau_value(r, c, batch_b)
            else:
                best = game_value(r, r.initial(), (None, pb))
            gains.append(best - ev.value(inst, c))
        out["exploit_b"] = max(gains)
    return out


def play(rules: Rules[Any], pa: Policy, pb: Policy, rng: np.random.Generator) -> int:
    """One game of the two policies, chance sampled; V's verdict."""
    node = settle(rules, rules.initial(), rng)
    while not node.terminal:
        action = (pa if node.player == A else pb)(rules, node)
        node = settle(rules, rules.apply(node, action), rng)
    return int(node.verdict or 0)


def evaluate(
    ev: EvalSet, policies: tuple[BatchPolicy, BatchPolicy], plays: int, rng: np.random.Generator
) -> dict[str, Any]:
    """The exact metrics of the module docstring, averaged and worst over held-out instances.

    With ``plays > 0``, also a sampled check: each held-out instance played ``plays`` times
    with the false claim (chance drawn from ``rng``), the false claims accepted counted,
    with a 95% Wilson interval; and the truthful claims counted over instances, likewise.
    """
    pa, pb = node_policy(policies[0]), node_policy(policies[1])
    rows = [_instance_metrics(ev, inst, pa, pb, policies[1]) for inst in ev.held_out]
    out: dict[str, Any] = {}
    for key in rows[0]:
        values = [r[key] for r in rows]
        out[key if key != "truthful" else "truthful_share"] = float(np.mean(values))
        if key.startswith("exploit"):
            out[key + "_max"] = float(np.max(values))
    if plays:
        n = len(ev.held_out)
        k = sum(int(r["truthful"]) for r in rows)
        out["truthful_count"] = [k, n, *wilson_interval(k, n)]
        acc = sum(play(ev.rules(i, 1 - ev.truth(i)), pa, pb, rng)
                  for i in ev.held_out for _ in range(plays))  # fmt: skip
        out["false_accepted_count"] = [acc, n * plays, *wilson_interval(acc, n * plays)]
    out.update(decision_shares(ev, pa, pb, rng))
    return out
