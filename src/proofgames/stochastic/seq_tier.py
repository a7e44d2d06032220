"""The sequential tier: the tight tier's protocol with V's fixed-``n`` test replaced.

The tight argument (``docs/stochastic-tight.md``) asks two things of V on an abort:
(F3) an announcement within ``c`` of the truth is rejected with probability at most
``v_c``, and (F4) one more than ``s`` off is accepted with probability at most ``v_s``.
The sequential V of :mod:`.seqtest` meets them with

* completeness: ``P[reject] <= v_r + T2(n, theta - c)`` (Ville's inequality for the two
  rejection ratios, ``v_r / 2`` each, plus the fixed-``n`` rule at the cap);
* soundness: ``P[accept] <= v_a + T1(n, s - theta)`` (Ville for the one acceptance ratio
  whose null holds, plus the rule at the cap),

so the tier's conditions are the tight tier's for A, B and the final bounds, with V's two
tail conditions replaced by ``T2(n, theta - c) <= v_c - v_r`` and ``T1(n, s - theta) <=
v_s - v_a``, each decided exactly (:func:`~.tail_bounds.certify_tail`); see
``docs/stochastic-sequential.md``.  **A written proof checked numerically, not
machine-checked.**

:func:`optimize_sequential` starts from the tight tier's set (its ``c``, ``s``, ``v_c``,
``v_s`` and provers), tries a small grid of splits ``v_a / v_s`` and ``v_r / v_c``, takes
for each the smallest cap ``n`` the tight search finds, and keeps the split with the fewest
expected queries for an honest announcement at ``x = 1/2`` (exact dynamic programming)
among those whose cap is within ``max_v_queries`` and pass the exact check: a grid optimum.

Example (the set ``optimize_sequential(0.25, 10)`` returns; V's own conditions):
    >>> t = SequentialTest(n=108, theta=0.1025, c=0.000284, s=0.243256, v_r=0.05994,
    ...                    v_a=0.007057, delta=0.243256)
    >>> tight = {"c": 0.000284, "s": 0.243256, "v_c": 0.0999, "v_s": 0.00941}
    >>> all(c.holds for c in sequential_conditions(tight, t, []))
    True
    >>> expected_queries(t, 0.5, 0.5).expected < 75  # the tight tier's fixed n there
    True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..errors import ProtocolError
from .optimize import Condition
from .params import StochasticParams, _check_k_t
from .seqtest import Outcome, SequentialTest, expected_queries
from .tail_bounds import certify_tail
from .tails import TIER_BACKING
from .tight import _floor_sig, _smallest_n, _theta, optimize_tight, tight_conditions

ACCEPT_SPLITS = (0.6, 0.75, 0.85)
"""Grid of ``v_a / v_s``: the share of V's soundness error spent before the cap."""
REJECT_SPLITS = (0.3, 0.6)
"""Grid of ``v_r / v_c``: the share of V's completeness error spent before the cap."""
BIG = 2_000
"""Above this many tight-tier queries only the split ``(0.75, 0.6)`` is tried (the best of
the grid at K = 1 and at K = 2, T = 10; each split's search takes minutes at K = 2 and
above on a loaded core)."""
DEFAULT_CAP_FACTOR = 1.5
"""Without ``max_v_queries``, the cap may be up to this many times the tight tier's ``n_V``."""
HONEST_GRID = tuple(i / 20 for i in range(1, 11))
"""True probabilities at which honest play's expected queries are evaluated (a grid; the
test is symmetric under ``a -> 1 - a``, ``x -> 1 - x``)."""
LIAR_OFFSETS = (1.0, 1.25, 1.5, 2.0, 4.0)
"""Liars' offsets ``|a - x|`` in units of ``s`` (just above ``s`` for 1.0)."""
METHOD = (
    "grid optimum: the tight tier's set; v_a/v_s in {0.6, 0.75, 0.85} and v_r/v_c in "
    "{0.3, 0.6} (only 0.75, 0.6 above 2,000 tight-tier queries); for each the smallest "
    "cap n the tight search finds; the fewest expected "
    "queries (exact DP) for an honest announcement at x = 1/2 among caps within the limit; "
    "every condition then checked in exact arithmetic"
)
BACKING = TIER_BACKING["sequential"]


def _cond(name: str, lhs: Fraction | int, op: str, rhs: Fraction | int) -> Condition:
    lhs, rhs = Fraction(lhs), Fraction(rhs)
    return Condition(name, lhs, op, rhs, lhs < rhs if op == "<" else lhs <= rhs)


def sequential_conditions(tight: dict[str, float], test: SequentialTest,
                          provers: list[Condition]) -> list[Condition]:  # fmt: skip
    """Every condition of the sequential argument, each decided exactly.

    ``tight`` holds the tight constants (``c``, ``s``, ``v_c``, ``v_s``); ``provers`` the
    tight tier's conditions on A, B and the final bounds (V's own are replaced here).
    """
    f = {key: Fraction(value) for key, value in tight.items()}
    c, s, theta = f["c"], f["s"], Fraction(test.theta)
    v_r, v_a = Fraction(test.v_r), Fraction(test.v_a)
    if Fraction(test.c) != c or Fraction(test.s) != s:
        raise ProtocolError("the test's c and s are not the tier's")
    order = [
        _cond("c < theta", c, "<", theta), _cond("theta < s", theta, "<", s),
        _cond("0 < v_r", 0, "<", v_r), _cond("v_r < v_c", v_r, "<", f["v_c"]),
        _cond("0 < v_a", 0, "<", v_a), _cond("v_a < v_s", v_a, "<", f["v_s"]),
        _cond("c < delta", c, "<", Fraction(test.delta)),
    ]  # fmt: skip
    out = list(provers) + order
    if not all(x.holds for x in order):
        return out
    for name, eps, budget, two in (
        ("V's cap tail T2(n, theta - c) <= v_c - v_r", theta - c, f["v_c"] - v_r, True),
        ("V's cap tail T1(n, s - theta) <= v_s - v_a", s - theta, f["v_s"] - v_a, False),
    ):
        check = certify_tail(test.n, eps, budget, two_sided=two)
        out.append(Condition(name, check.worst, "<=", budget, check.ok))
    return out


def _prover_conditions(p: StochasticParams) -> list[Condition]:
    """The tight tier's conditions but V's (its tails and its threshold's order)."""
    return [x for x in tight_conditions(p)
            if not x.name.startswith("V's") and "theta_V" not in x.name]  # fmt: skip


def wald_floor(x: float, s: float, v_c: float, v_s: float) -> float:
    """A lower bound on any V's expected samples at truth ``x``, announcement ``a = x``.

    A V that rejects ``a`` with probability at most ``v_c`` when ``x = a`` and accepts it
    with probability at most ``v_s`` when ``x = a + s'`` (any ``s' > s``) draws in
    expectation at least ``kl(1 - v_c, v_s) / KL(x, x + s)`` samples at ``x`` (Wald's
    identity and the data-processing inequality; the limit ``s' -> s``).  Evaluated in
    double precision: a written proof checked numerically.

    Example:
        >>> round(wald_floor(0.5, 0.060582, 0.09962, 0.00916))
        528
    """
    if not (0 < x < x + s < 1 and 0 < v_s < 1 - v_c < 1):
        raise ProtocolError(f"need 0 < x < x + s < 1 and v_s < 1 - v_c, got {x}, {s}, {v_c}")
    y = x + s
    kl_step = x * math.log(x / y) + (1 - x) * math.log((1 - x) / (1 - y))
    a, b = 1 - v_c, v_s
    kl_verdict = a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))
    return kl_verdict / kl_step


@dataclass(frozen=True)
class SequentialResult:
    """The sequential tier's set and V's exact behaviour under it.

    Attributes:
        tight: the tight tier's set it starts from (A's and B's constants and counts)
            and its search's time and method.
        test: V's sequential test.
        conditions: every condition of the argument, decided exactly.
        honest: V at ``a = x = 1/2`` (honest A, disputed).
        honest_worst: the largest expected queries for an honest announcement (``a = x``
            over :data:`HONEST_GRID`, and ``a = 1/2 +- c`` at ``x = 1/2``; a grid maximum).
        liar_worst: the largest expected queries over far announcements at ``a = 1/2``,
            ``|a - x|`` in :data:`LIAR_OFFSETS` times ``s`` (a grid maximum).
        floor: :func:`wald_floor` at ``x = 1/2``.
        max_v_queries: the limit the cap had to meet.
        seconds: the optimizer's wall time.
    """

    tight: StochasticParams
    test: SequentialTest
    conditions: tuple[Condition, ...]
    honest: Outcome
    honest_worst: Outcome
    liar_worst: Outcome
    floor: float
    max_v_queries: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form: the test, V's figures, the conditions and the backing."""
        p, t = self.tight, self.test
        assert p.tight is not None
        held = sum(c.holds for c in self.conditions)

        def outcome(o: Outcome) -> dict[str, float]:
            return {"a": o.a, "x": o.x, "expected_queries": o.expected, "accept": o.accept}

        return {
            "name": "optimized-sequential",
            "k": p.k,
            "t": p.steps,
            **p.tight,
            **t.to_dict(),
            "v_worst_case": t.n,
            "tight_v_samples": p.v_samples,
            "a_samples": p.a_samples,
            "b_samples": p.b_samples,
            "theta_b": p.b_threshold,
            "expected_honest_half": outcome(self.honest),
            "expected_honest_worst_on_grid": outcome(self.honest_worst),
            "expected_liar_worst_on_grid": outcome(self.liar_worst),
            "expected_over_tight_worst_case": self.honest.expected / p.v_samples,
            "wald_floor_half": self.floor,
            "figures": "expected queries: exact dynamic programming (double precision); "
            "worst case: exact; floor: a written proof evaluated numerically",
            "conditions": [
                {
                    "condition": c.name,
                    "lhs": float(c.lhs),
                    "op": c.op,
                    "rhs": float(c.rhs),
                    "holds": c.holds,
                }
                for c in self.conditions
            ],
            "certified_by": f"{len(self.conditions)} conditions checked in exact rational "
            f"arithmetic ({held} hold; seq_tier.sequential_conditions)",
            "tail": "sequential",
            "backed_by": BACKING,
            "method": METHOD,
            "max_v_queries": self.max_v_queries,
            "seconds": self.seconds,
        }


def _candidate(c: float, s: float, v_c: float, v_s: float, fa: float, fr: float,
               limit: int) -> SequentialTest | None:  # fmt: skip
    found = _smallest_n(s - c, v_c - _floor_sig(fr * v_c, 4), v_s - _floor_sig(fa * v_s, 4))
    if found is None or found[0] > limit:
        return None
    n, e_c, e_s = found
    v_r, v_a = _floor_sig(fr * v_c, 4), _floor_sig(fa * v_s, 4)
    return SequentialTest(n, _theta(c + e_c, s - e_s), c, s, v_r, v_a, s)


def _confirm(test: SequentialTest, tight: dict[str, float], provers: list[Condition],
             limit: int) -> tuple[SequentialTest, list[Condition]] | None:  # fmt: skip
    """The test with the smallest cap at or above its own that passes the exact check."""
    for extra in range(3):  # the search is in double precision: confirm exactly
        if test.n + extra > limit:
            return None
        t = SequentialTest(test.n + extra, test.theta, test.c, test.s, test.v_r, test.v_a,
                           test.delta)  # fmt: skip
        conditions = sequential_conditions(tight, t, provers)
        if all(x.holds for x in conditions):
            return t, conditions
    return None


def _worst(outcomes: list[Outcome]) -> Outcome:
    return max(outcomes, key=lambda o: o.expected)


def optimize_sequential(
    k: float, steps: int, *, w: float = 2 / 3, d: float = 3 / 5,
    max_prover_samples: int = 10**8, max_v_queries: int | None = None,
    tight: StochasticParams | None = None,
) -> SequentialResult:  # fmt: skip
    """The sequential tier's set with the fewest honest expected queries (module docstring).

    ``tight``: the tight tier's set at (K, T), when already computed (it is otherwise
    computed here with ``w``, ``d`` and ``max_prover_samples``).

    Raises:
        ProtocolError: a bad input; a tight set the cap cannot meet (from
            :func:`~.tight.optimize_tight`); or ``max_v_queries`` below the tight tier's
            worst case (no test of this shape fits: at the cap it must still meet V's
            errors with budget to spare) or too small for every split tried.
    """
    start = time.perf_counter()
    _check_k_t(k, steps)
    if max_v_queries is not None and (isinstance(max_v_queries, bool)
                                      or not isinstance(max_v_queries, int)):  # fmt: skip
        raise ProtocolError(f"the cap on V's queries must be an integer, got {max_v_queries!r}")
    if tight is None:
        tight = optimize_tight(k, steps, w=w, d=d, max_prover_samples=max_prover_samples).params
    elif tight.tight is None or (tight.k, tight.steps) != (float(k), steps):
        raise ProtocolError("the tight set given is not the tight tier's at this K and T")
    p = tight
    assert p.tight is not None
    n_tight = p.v_samples
    limit = max_v_queries if max_v_queries is not None else int(DEFAULT_CAP_FACTOR * n_tight)
    if limit <= n_tight:
        raise ProtocolError(
            f"a cap of {limit:,} V queries is too small at K = {k:g}, T = {steps}: the tight "
            f"tier's fixed-n V needs {n_tight:,} with V's whole error budget, and a sequential "
            "V must meet the same errors at its cap with part of it; give more than "
            f"{n_tight:,}"
        )
    c, s, v_c, v_s = (p.tight[x] for x in ("c", "s", "v_c", "v_s"))
    provers = _prover_conditions(p)
    ranked = []
    splits = [(fa, fr) for fa in ACCEPT_SPLITS for fr in REJECT_SPLITS]
    for fa, fr in splits if n_tight <= BIG else [(0.75, 0.6)]:
        cand = _candidate(c, s, v_c, v_s, fa, fr, limit)
        if cand is not None:
            ranked.append((expected_queries(cand, 0.5, 0.5).expected, fa, fr, cand))
    best: tuple[SequentialTest, list[Condition]] | None = None
    for *_, cand in sorted(ranked, key=lambda r: r[:3]):
        best = _confirm(cand, p.tight, provers, limit)
        if best is not None:
            break
    if best is None:
        raise ProtocolError(
            f"no sequential V at K = {k:g}, T = {steps} within a cap of {limit:,} queries "
            f"(the splits tried need more; the tight tier's fixed n is {n_tight:,}); raise "
            "--max-v-queries"
        )
    test, conditions = best
    honest = expected_queries(test, 0.5, 0.5)
    return SequentialResult(
        tight, test, tuple(conditions), honest, _honest_worst(test), _liar_worst(test),
        wald_floor(0.5, s, v_c, v_s), limit, time.perf_counter() - start,
    )  # fmt: skip


def _honest_worst(test: SequentialTest) -> Outcome:
    pairs = [(x, x) for x in HONEST_GRID] + [(0.5 - test.c, 0.5), (0.5 + test.c, 0.5)]
    return _worst([expected_queries(test, a, x) for a, x in pairs])


def _liar_worst(test: SequentialTest) -> Outcome:
    offsets = [test.s * m * (1 + 1e-9) for m in LIAR_OFFSETS]
    return _worst(
        [
            expected_queries(test, 0.5, 0.5 + sign * o)
            for o in offsets
            for sign in (1, -1)
            if 0 <= 0.5 + sign * o <= 1
        ]
    )


@lru_cache(maxsize=16)
def sequential_preset(k: float, steps: int) -> SequentialResult:
    """The sequential tier at (K, T) with the default targets and caps (cached)."""
    return optimize_sequential(k, steps)
