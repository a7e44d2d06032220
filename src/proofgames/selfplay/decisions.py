"""Where learned debaters go wrong: each side's single decisions checked against the machine.

Exploitability says *that* a learned side loses to its best response; these two shares
say *which* decisions are wrong, on held-out instances, with the learned policies played
greedily (:mod:`.evaluate`):

* ``a_correct``: the share of A's messages that are the machine's truth when A defends
  the true claim and every earlier message was true -- in bisection, its final
  configuration and its midpoint on every dispute path; in cross-examination, each
  tableau entry after a true prefix.  Honest A must get every one right (1.0) to be
  unexploitable.
* ``b_correct``: the share of B's decisions that point at a lie, in games where A defends
  the false claim with lies drawn at random -- in bisection, B disputes the first half
  exactly when A's midpoint is not the machine's configuration at that time (uniformly
  random configurations from A, B's right dispute followed); in cross-examination, B
  challenges a step that does not check out (the true tableau with one or two entries
  changed at random, the output entry set to the false claim).  The best B gets 1.0.

Both are exact counts over the decision points visited; the lies are drawn from ``rng``.

Example:
    >>> from proofgames.selfplay import TuringFamily
    >>> from proofgames.selfplay.evaluate import EvalSet
    >>> import numpy as np
    >>> ev = EvalSet.make("bisection", TuringFamily(space=2, max_steps=4, states=1),
    ...                   np.random.SeedSequence(0), 4, 3)
    >>> honest = decision_shares(ev, None, None, np.random.default_rng(0))
    >>> honest["a_correct"], honest["b_correct"]
    (1.0, 1.0)

"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bisection import BisectionNode, BisectionRules
from .cross_examination import CrossExaminationNode, CrossExaminationRules
from .exploit import Policy
from .family import TuringInstance
from .rules import A

__all__ = ["decision_shares"]

LIES = 20  # lying games per held-out instance


def decision_shares(
    ev: Any, pa: Policy | None, pb: Policy | None, rng: np.random.Generator, lies: int = LIES
) -> dict[str, float]:
    """``a_correct`` and ``b_correct`` over ``ev.held_out`` (``None``: the honest party).

    Empty (``{}``) for a protocol other than bisection and cross-examination.
    """
    if ev.protocol not in ("bisection", "cross-examination"):
        return {}
    counts = np.zeros(4)  # A right, A asked, B right, B asked
    for inst in ev.held_out:
        truthful, liar = ev.rules(inst, inst.truth), ev.rules(inst, 1 - inst.truth)
        if isinstance(truthful, BisectionRules):
            counts += _bisection(truthful, liar, inst, pa, pb, rng, lies)
        else:
            counts += _tableau(truthful, liar, pa, pb, rng, lies)
    return {"a_correct": float(counts[0] / counts[1]), "b_correct": float(counts[2] / counts[3])}


def _bisection(
    rules: BisectionRules, liar: BisectionRules, inst: TuringInstance,
    pa: Policy | None, pb: Policy | None, rng: np.random.Generator, lies: int,
) -> np.ndarray:  # fmt: skip
    tm = rules.machine
    truth = [tm.advance(tm.initial(), t) for t in range(inst.steps + 1)]
    out = np.zeros(4)
    stack: list[BisectionNode] = [rules.initial()]
    while stack:  # honest A along every dispute path
        s = stack.pop()
        if s.terminal:
            continue
        if s.player == A:
            assert s.dispute is not None
            right = truth[inst.steps if s.phase == "final" else s.dispute.midpoint_time]
            out[:2] += (pa is None or rules.configuration(pa(rules, s)) == right, 1)
            stack.append(rules.apply(s, rules.action_of(right)))
        else:
            stack += [rules.apply(s, 0), rules.apply(s, 1)]
    for _ in range(lies):  # random lies, B's right disputes followed
        s = liar.initial()
        while not s.terminal:
            if s.player == A:
                s = liar.apply(s, int(rng.choice(liar.legal(s))))
                continue
            d = s.dispute
            assert d is not None
            want = int(s.midpoint == tm.advance(d.start, d.first_length))
            out[2:] += (pb is None or pb(liar, s) == want, 1)
            s = liar.apply(s, want)
    return out


def _tableau(
    rules: CrossExaminationRules, liar: CrossExaminationRules,
    pa: Policy | None, pb: Policy | None, rng: np.random.Generator, lies: int,
) -> np.ndarray:  # fmt: skip
    tab = rules.machine
    true = tab.run().astype(np.int64)
    out = np.zeros(4)
    s = rules.initial()
    for entry in true.tolist():  # honest A, entry by entry after a true prefix
        out[:2] += (pa is None or pa(rules, s) == entry, 1)
        s = rules.apply(s, entry)
    for _ in range(lies):
        lie = true.copy()
        where = rng.choice(rules.length - 1, size=int(rng.integers(1, 3)), replace=False)
        lie[where] = (
            lie[where] + rng.integers(1, rules.alphabet, size=len(where))
        ) % rules.alphabet
        lie[-1] = liar.claim
        ok = np.array([tab.step_batch(t, lie[None, list(tab.checked_relevant(t))])[0] == lie[t]
                       for t in range(rules.length)])  # fmt: skip
        c = _commit(liar, lie.tolist())
        if c.terminal or ok.all():  # V refused an entry at once: no decision of B's
            continue
        pick = int(np.flatnonzero(~ok)[0]) if pb is None else pb(liar, c)
        out[2:] += (not ok[pick], 1)
    return out


def _commit(rules: CrossExaminationRules, entries: list[int]) -> CrossExaminationNode:
    s = rules.initial()
    for e in entries:
        if s.terminal:
            break
        s = rules.apply(s, e)
    return s
