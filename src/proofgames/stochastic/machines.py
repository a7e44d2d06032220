"""Named stochastic machines with parameters, each with its exact P[M=1] and its K.

A spec is ``name`` or ``name:key=value,...`` (the syntax of strategy specs), e.g.
``majority:n=5,p=0.6``.  Every machine is a :class:`StochasticMachine` whose steps read at
most two earlier entries (the audit's query step reads its ``log2 n`` coins), with
``p_accept`` the exact ``P[M = 1]`` (closed form) and ``lipschitz`` its Lipschitz constant:
exact where ``lipschitz_exact`` is true, else a sound upper bound
(:mod:`proofgames.stochastic.lipschitz`).

Counting layout: "at least ``k`` of ``n`` votes" keeps the bits ``g[j] = [count >= j]``
and updates them after vote ``v`` as ``h = g[j-1] AND v``, ``g'[j] = g[j] OR h`` -- two
steps of two entries each -- keeping only the ``j`` that can still decide the result.

Sizes: this unary counter makes ``majority:n`` about ``n^2 / 2`` steps (up to ``n / 2``
thresholds can still decide the result after each vote, two steps each).  The quadratic
is the layout, not the code: every entry is a monotone threshold of the votes read from
two entries.  A binary counter would need ``O(n log n)`` steps but would be another
machine -- T, the transcripts and the every-step K of every published ``majority``,
``screening``, ``audit`` and ``long-computation`` instance would change.  So each factory
computes its step count first (exactly, in ``O(n)``) and refuses machines over
:data:`MAX_STEPS` steps (``max_steps=`` on :func:`make_stochastic_machine` raises it).

Example:
    >>> from proofgames.stochastic.machines import make_stochastic_machine
    >>> m = make_stochastic_machine("majority:n=3,p=0.5")
    >>> m.name, m.length, m.p_accept, round(m.lipschitz, 6), m.lipschitz_exact
    ('majority:n=3,p=0.5', 7, 0.5, 1.5, True)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

import numpy as np

from .._registry import SpecRegistry
from .._transcript import IntArray, gates
from ..errors import MachineFormatError
from ._machine_parts import (
    _INTERPOLATE_UP_TO,
    _const,
    _Counter,
    _counter_steps,
    _finish,
    _integer,
    _majority_k,
    _probability,
    _spread,
    _tail,
)
from .lipschitz import (
    MAX_EXACT_IDS,
    exact_lipschitz,
    lipschitz_bounds,
    parity_lipschitz,
    secant_from_derivative,
    univariate_lipschitz,
)
from .model import FloatArray, StochasticBuilder, StochasticMachine

__all__ = [
    "MAX_STEPS",
    "make_stochastic_machine",
    "register_stochastic_machine",
    "stochastic_machine_description",
    "stochastic_machine_names",
]

Factory = TypeVar("Factory", bound=Callable[..., StochasticMachine])


_MACHINES: SpecRegistry[StochasticMachine] = SpecRegistry("stochastic machine")
_DESCRIPTIONS: dict[str, str] = {}

MAX_STEPS = 100_000
"""Default limit on a machine's steps T; ``make_stochastic_machine(spec, max_steps=N)``.

Building costs roughly 2.5 us and 250 bytes per step (measured: ``majority:n=2000``, 2.0 M
steps, 4.7 s and 470 MB), and using it more: the every-step K that the stochastic protocol's
parameters need (:func:`~proofgames.stochastic.hypothesis.step_lipschitz_bounds`, compiled)
took 30 to 180 us per step (measured: ``copy-chain:t=200000`` 5.6 s, ``all-pass:n=100001``
6.7 s, ``parity:n=100001`` 36.6 s, on a 2-core machine).  The default is
``majority:n=446``, ``screening:n~520``, ``copy-chain:t=100000``.
"""
_STEP_LIMIT: ContextVar[int] = ContextVar("stochastic_max_steps", default=MAX_STEPS)


def register_stochastic_machine(name: str) -> Callable[[Factory], Factory]:
    """Register a factory (annotated keyword parameters with defaults) under ``name``."""

    def decorate(factory: Factory) -> Factory:
        _MACHINES.add(name, factory)
        _DESCRIPTIONS[name] = (inspect.getdoc(factory) or "").split("\n")[0]
        return factory

    return decorate


def stochastic_machine_names() -> list[str]:
    """Registered machine names, in registration order."""
    return [name for name, _ in _MACHINES.items()]


def stochastic_machine_description(name: str) -> str:
    """First line of the factory's docstring."""
    _MACHINES.get(name)
    return _DESCRIPTIONS[name]


def make_stochastic_machine(spec: str, *, max_steps: int | None = None) -> StochasticMachine:
    """Build a registered machine from ``"name"`` or ``"name:key=value,..."``.

    Values convert by the factory's annotations (``n=2.5`` is refused for an integer, not
    truncated); unknown keys are refused naming the known ones.  The machine's ``name`` is
    the canonical spec, with every default filled in.  A machine of more than ``max_steps``
    steps (default :data:`MAX_STEPS`) is refused, with its size, before it is built.

    Raises:
        RegistryError: unknown machine, unknown parameter, or malformed spec.
        MachineFormatError: a parameter value out of range (e.g. ``p`` outside ``[0, 1]``),
            or a machine over ``max_steps`` steps.

    Example:
        >>> from proofgames import make_stochastic_machine
        >>> m = make_stochastic_machine("majority:p=0.8")  # n takes its default, 5
        >>> m.name, m.length, m.p_accept, round(m.lipschitz, 4), m.lipschitz_exact
        ('majority:n=5,p=0.8', 17, 0.94208, 1.571, True)
        >>> make_stochastic_machine("majority:n=3,p=1.5")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.MachineFormatError: 'majority:n=3,p=1.5': p = 1.5 is a probability ...
    """
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1
    ):
        raise MachineFormatError(f"max_steps must be a positive integer, got {max_steps!r}")
    token = _STEP_LIMIT.set(MAX_STEPS if max_steps is None else max_steps)
    try:
        machine, recorded = _MACHINES.make(spec)
    except MachineFormatError as exc:
        raise MachineFormatError(f"{spec!r}: {exc}") from None
    finally:
        _STEP_LIMIT.reset(token)
    machine.name = recorded.to_text(omit_none=True)
    return machine


def _check_steps(steps: int, how: str, exact: bool = True, noun: str = "steps") -> None:
    """Refuse a machine of ``steps`` steps (or queries) over the current limit.

    ``how`` says where the count comes from; ``exact=False``: it is a lower bound.
    """
    limit = _STEP_LIMIT.get()
    if steps > limit:
        size = f"{steps:,} {noun}" if exact else f"at least {steps:,} {noun}"
        memory = steps * 250
        mem = f"{memory / 1e9:,.3g} GB" if memory >= 1e9 else f"{memory / 1e6:.3g} MB"
        raise MachineFormatError(
            f"too large: {how} makes {size} (roughly {steps * 2.5e-6:,.3g} s and {mem} to "
            f"build, and {steps * 3e-5:,.3g} to {steps * 2e-4:,.3g} s more, as measured, for its "
            f"every-step K), over the limit "
            f"max_steps = {limit:,}; raise max_steps (--max-steps) to build it anyway"
        )


# -------------------------------------------------------------------- machines
@register_stochastic_machine("single-query")
def single_query(p: float = 0.7) -> StochasticMachine:
    """One oracle query answered 1 with probability p: T = 1, P[M=1] = p, K = 1."""
    p = _probability("p", p)
    b = StochasticBuilder([p], [b"question"])
    b.query(0, label="ask")
    return b.build("single-query", lipschitz=1.0, p_accept=p, lipschitz_exact=True)


@register_stochastic_machine("padded-query")
def padded_query(t: int = 10, p: float = 0.5) -> StochasticMachine:
    """T - 1 constant steps, then one oracle query answered 1 w.p. p: K = 1 at any T."""
    t, p = _integer("t", t, 1), _probability("p", p)
    _check_steps(t, f"padded-query of {t:,} steps")
    b = StochasticBuilder([p], [b"question"])
    for _ in range(t - 1):
        b.gate(_zeros, [], "pad")
    b.query(0, label="ask")
    return b.build("padded-query", lipschitz=1.0, p_accept=p, lipschitz_exact=True)


def _zeros(v: np.ndarray) -> np.ndarray:
    return np.zeros(v.shape[0], dtype=np.int64)


@register_stochastic_machine("majority")
def majority(n: int = 5, p: float = 0.6) -> StochasticMachine:
    """Majority of n independent answers to one question: K ~ sqrt(2n/pi) at p = 1/2."""
    n, p = _integer("n", n, 1), _probability("p", p)
    k = n // 2 + 1
    _check_steps(n, f"majority of {n:,} votes", exact=False)
    _check_steps(n + _counter_steps(n, k), f"majority of {n:,} votes (~n^2/2 steps)")
    b = StochasticBuilder([p], [b"question"])
    counter = _Counter(b, n, k)
    for i in range(n):
        counter.feed(b.query(0, label=f"vote {i}"))
    _finish(b, counter.result())
    lip = _majority_k(n, k, p)[0]
    return b.build("majority", lip, _tail(n, k, p), lipschitz_exact=True)


@register_stochastic_machine("parity")
def parity(n: int = 5, p: float = 0.1) -> StochasticMachine:
    """Parity of n answers to one question: K = 1 at p = 1/2 but K -> n as p -> 0 or 1."""
    n, p = _integer("n", n, 1), _probability("p", p)
    _check_steps(2 * n - 1, f"parity of {n:,} answers")
    b = StochasticBuilder([p], [b"question"])
    acc = b.query(0, label="answer 0")
    for i in range(1, n):
        acc = b.gate(gates.XOR, [acc, b.query(0, label=f"answer {i}")], f"parity {i}")

    def deriv(q: FloatArray) -> FloatArray:
        return np.asarray(n * (1.0 - 2.0 * q) ** (n - 1), dtype=np.float64)

    if n > _INTERPOLATE_UP_TO:
        lip = parity_lipschitz(n, p)
    else:
        lip = univariate_lipschitz(secant_from_derivative(deriv, p, n - 1), n - 1)[0]
    return b.build("parity", lip, (1.0 - (1.0 - 2.0 * p) ** n) / 2.0, lipschitz_exact=True)


@register_stochastic_machine("all-pass")
def all_pass(n: int = 8, p: float | None = None) -> StochasticMachine:
    """Accept iff all n checks pass (p each; default p = 2^(-1/n), so P[M=1] = 1/2): K ~ 0.72n.

    ``P[M=1] = p^n`` is convex increasing, so its steepest secant from p runs to q = 1:
    K = 1 + p + ... + p^(n-1), which is n / (2 ln 2) + O(1) at the default p.
    """
    n = _integer("n", n, 1)
    _check_steps(2 * n - 1, f"all-pass of {n:,} checks")
    p = 2.0 ** (-1.0 / n) if p is None else _probability("p", p)
    b = StochasticBuilder([p], [b"check passes?"])
    acc = b.query(0, label="check 0")
    for i in range(1, n):
        acc = b.gate(gates.AND, [acc, b.query(0, label=f"check {i}")], f"all pass {i}")
    lip = float(sum(p**j for j in range(n)))
    return b.build("all-pass", lip, p**n, lipschitz_exact=True)


@register_stochastic_machine("screening")
def screening(
    n: int = 6,
    k: int = 1,
    p: float = 0.7,
    spread: float = 0.2,
    seed: int = 0,
    effects: str | None = None,
) -> StochasticMachine:
    """Meta-analysis: judge each of n studies sound (own query), accept iff included +/- >= k.

    Study ``i`` is included with probability ``p_i = clip(p + spread * U[-1, 1])`` and reports
    a positive (``+``) or negative (``-``) effect: ``effects``, or drawn from ``seed`` (each
    ``+`` with probability 3/4).  The conclusion "the effect is real" is accepted iff
    (included positive) - (included negative) >= k, counted as "at least k + #negatives of
    the votes" where a negative study votes for the effect by being excluded.  K is exact
    for n <= 10 (vertex algorithm), else the influence upper bound.
    """
    n, seed = _integer("n", n, 1), _integer("seed", seed, 0)
    p = _probability("p", p)
    if isinstance(k, bool) or not isinstance(k, int):
        raise MachineFormatError(f"k = {k!r} must be an integer")
    if not -n <= k <= n:
        raise MachineFormatError(
            f"k = {k} must lie in [-n, n] = [{-n}, {n}] (beyond, the conclusion is constant)"
        )
    _check_steps(n, f"screening of {n:,} studies", exact=False)
    rng = np.random.default_rng(seed)
    probs = _spread(p, spread, n, rng)
    drawn = "".join("+" if x else "-" for x in rng.random(n) < 0.75)
    effects = drawn if effects is None else str(effects)
    if len(effects) != n or set(effects) - {"+", "-"}:
        raise MachineFormatError(f"effects = {effects!r} must be n = {n} characters + or -")
    threshold = k + effects.count("-")
    _check_steps(
        n + effects.count("-") + _counter_steps(n, threshold),
        f"screening of {n:,} studies (~n^2/4 steps)",
    )
    b = StochasticBuilder(list(probs), [f"is study {i} sound?".encode() for i in range(n)])
    counter = _Counter(b, n, threshold)
    for i, e in enumerate(effects):
        judged = b.query(i, label=f"judge study {i}")
        counter.feed(judged if e == "+" else b.gate(gates.NOT, [judged], f"study {i} against"))
    _finish(b, counter.result())
    votes = np.where(np.array(list(effects)) == "+", probs, 1.0 - probs)
    dist = np.array([1.0])
    for v in votes:
        dist = np.convolve(dist, [1.0 - v, v])
    p1 = float(dist[max(0, threshold) :].sum())
    m = b.build("screening", None, p1)
    if n <= 10:
        m.lipschitz, m.lipschitz_exact = exact_lipschitz(m), True
    elif n <= MAX_EXACT_IDS:  # the derivative-sum bound may beat the influence bound
        m.lipschitz = lipschitz_bounds(m, exact=False, search=False).upper
    else:
        m.lipschitz = _screening_influence(votes, threshold)
    return m


def _screening_influence(votes: FloatArray, threshold: int) -> float:
    """:func:`~.lipschitz.lipschitz_bounds`' influence bound for ``screening``, in O(n^2).

    Vote ``i`` (1-based) decides the count ``c`` of the votes before it; flipping it changes
    P[M=1 | c] by ``P[S = threshold - 1 - c]``, ``S`` the sum of the later votes, and every
    ``c`` in ``[0, i - 1]`` is reachable.  Summing each vote's largest such change is the
    bound the transition graph computes (equal up to rounding; tested), without enumerating
    its ~n states at each of its ~n^2/4 steps.  It is below the query-count bound ``n``.
    """
    n = votes.size
    after = np.array([1.0])  # distribution of the sum of the votes after vote i
    total = 0.0
    for i in range(n, 0, -1):
        lo, hi = max(0, threshold - i), min(n - i, threshold - 1)
        if lo <= hi:
            total += float(after[lo : hi + 1].max())
        after = np.convolve(after, [1.0 - votes[i - 1], votes[i - 1]])
    return total


@register_stochastic_machine("copy-chain")
def copy_chain(t: int = 100, p: float = 0.3) -> StochasticMachine:
    """One query, then t - 1 deterministic copies of its answer: P[M=1] = p, oracle K = 1.

    The smallest machine on which shading deterministic steps matters: see
    :meth:`~proofgames.stochastic.StochasticParams.exact_step_tolerance`.
    """
    t, p = _integer("t", t, 1), _probability("p", p)
    _check_steps(t, "copy-chain")
    b = StochasticBuilder([p], [b"question"])
    prev = b.query(0, label="ask")
    for _ in range(t - 1):
        prev = b.gate(gates.COPY, [prev], "copy")
    return b.build("copy-chain", lipschitz=1.0, p_accept=p, lipschitz_exact=True)


@register_stochastic_machine("screening-panel")
def screening_panel(
    n: int = 4, p: float = 0.3, spread: float = 0.2, seed: int = 0
) -> StochasticMachine:
    """The deterministic model's screening transcript, judged by a noisy panel.

    Built from :func:`proofgames.machines.screening.screening_transcript` (accept iff at
    least one of n items passes) with its oracle made stochastic: item i passes with
    probability ``clip(p + spread * U[-1, 1])``.  P[M=1] and K are computed exactly.
    """
    from ..machines.screening import screening_transcript
    from .model import from_transcript_machine

    n, p = _integer("n", n, 1), _probability("p", p)
    seed = _integer("seed", seed, 0)
    if n > MAX_EXACT_IDS:
        raise MachineFormatError(
            f"n = {n} must be at most {MAX_EXACT_IDS}: the panel's K is computed exactly, "
            f"over 2^n vertices"
        )
    rng = np.random.default_rng(seed)
    probs = _spread(p, spread, n, rng)
    items = [int(i).to_bytes(2, "big") for i in range(n)]
    bits = [
        bytes((b >> (15 - j)) & 1 for j in range(16))
        for b in (int.from_bytes(i, "big") for i in items)
    ]
    machine = screening_transcript(bits, 1, name="screening-panel")
    m = from_transcript_machine(machine, dict(zip(bits, probs.tolist(), strict=True)))
    m.p_accept = float(1 - np.prod(1 - probs))
    m.lipschitz = exact_lipschitz(m)
    m.lipschitz_exact = True
    return m


@register_stochastic_machine("long-computation")
def long_computation(
    t: int = 1000, p: float = 0.7, votes: int = 1, seed: int = 0
) -> StochasticMachine:
    """T = t steps of deterministic work and a few votes: K = K(majority of votes) for any T.

    A checksum chain ``x_j = x_{j-1} XOR c_j`` (constants ``c`` from ``seed``) runs through
    the whole transcript; ``votes`` answers to one question are asked at evenly spaced
    points and counted as they come.  The output is "checksum correct AND majority of the
    votes"; the checksum always is, so P[M=1] = P[Binomial(votes, p) > votes/2].
    """
    t, votes, seed = _integer("t", t, 1), _integer("votes", votes, 1), _integer("seed", seed, 0)
    p = _probability("p", p)
    k = votes // 2 + 1
    _check_steps(t, "long-computation")
    if votes > t:  # (and the count below would be long)
        raise MachineFormatError(f"t = {t} is too short: {votes} votes need t > {votes}")
    counted = votes + _counter_steps(votes, k)  # the votes' steps (a dry run's length)
    chain = t - counted - 2
    if chain < 1:
        raise MachineFormatError(f"t = {t} is too short: {votes} votes need t >= {counted + 3}")
    c = np.random.default_rng(seed).integers(0, 2, chain)
    b = StochasticBuilder([p], [b"question"])
    counter = _Counter(b, votes, k)
    when = {(i + 1) * chain // (votes + 1): i for i in range(votes)}
    x = b.gate(_const(int(c[0])), (), "checksum 0")
    for j in range(1, chain):
        x = b.gate(gates.NOT if c[j] else gates.COPY, [x], f"checksum {j}")
        if j in when:
            counter.feed(b.query(0, label=f"vote {when[j]}"))
    for i in range(votes - counter.i):  # votes whose slot fell outside a short chain
        counter.feed(b.query(0, label=f"late vote {i}"))
    expected = int(c.sum() % 2)
    ok = b.gate(gates.COPY if expected else gates.NOT, [x], "checksum correct")
    b.gate(gates.AND, [ok, counter.result()], "output")
    lip = _majority_k(votes, k, p)[0]
    return b.build("long-computation", lip, _tail(votes, k, p), lipschitz_exact=True)


@register_stochastic_machine("audit")
def audit(
    n: int = 8, r: int = 3, p: float = 0.7, spread: float = 0.2, seed: int = 0
) -> StochasticMachine:
    """Internal coins pick r of n items (with replacement) to judge; accept iff most pass.

    ``log2 n`` fair internal coins name each audited item; item ``i`` passes with probability
    ``p_i = clip(p + spread * U[-1, 1])``.  Each judgement passes with probability the mean
    ``pbar``, so P[M=1] = P[Binomial(r, pbar) > r/2], and K is that majority's K at ``pbar``
    (exact when shifting every ``p_i`` by the maximising amount stays in [0, 1]; otherwise
    an upper bound, since no oracle within distance eps moves the mean by more than eps).
    """
    n, r, seed = _integer("n", n, 1), _integer("r", r, 1), _integer("seed", seed, 0)
    if n & (n - 1):
        raise MachineFormatError(f"n = {n} must be a power of two (items named by fair coins)")
    p = _probability("p", p)
    width = n.bit_length() - 1
    _check_steps(n, f"audit of {n:,} items", noun="oracle queries")
    _check_steps(
        r * (width + 1) + _counter_steps(r, r // 2 + 1), f"audit of r = {r:,} judged items"
    )
    probs = _spread(p, spread, n, np.random.default_rng(seed))
    b = StochasticBuilder(list(probs), [f"does item {i} pass?".encode() for i in range(n)])
    fair = b.add_query(0.5, b"fair coin", internal=True)
    weights = 1 << np.arange(width, dtype=np.int64)

    def item(v: IntArray) -> IntArray:
        return np.asarray(v @ weights, dtype=np.int64)

    k = r // 2 + 1
    counter = _Counter(b, r, k)
    for a in range(r):
        coins = [b.query(fair, label=f"audit {a} coin {j}") for j in range(width)]
        counter.feed(b.query(item, coins, f"judge audited item {a}"))
    _finish(b, counter.result())
    pbar = float(probs.mean())
    lip, best = _majority_k(r, k, pbar)
    shifted = probs + (best - pbar)
    exact = bool(((shifted >= 0) & (shifted <= 1)).all()) and (
        best != pbar or bool(((probs > 0) & (probs < 1)).all())
    )
    return b.build("audit", lip, _tail(r, k, pbar), lipschitz_exact=exact)
