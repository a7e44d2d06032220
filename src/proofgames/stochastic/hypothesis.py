"""The Lipschitz constant the theorem's hypothesis needs, and whether parameters meet it.

Two constants go by the name K (``PROTOCOLS.md`` sections 3 and 7):

``oracle`` -- the paper's Definition 6.1
    ``|P[M^O=1] - P[M^O'=1]| <= K sup_z |P[O(z)=1] - P[O'(z)=1]|`` over oracles ``O'``: only
    the oracle's answers move; deterministic steps and internal coins stay fixed.  This is
    ``machine.lipschitz``.  It is **not** what the proofs use: a dishonest prover may shade
    every step -- deterministic ones and internal coins included -- by just under the abort
    threshold, and the Lean formalization's oracle is the whole next-bit distribution.
``step`` -- the Lean hypothesis
    The same inequality when *every* step's conditional probability
    ``P[y_t = 1 | history]`` may move, independently at every history.  Always at least
    the oracle-only K.

:func:`step_lipschitz_bounds` brackets the every-step K, ``lower <= K <= upper``; ``upper``
is sound, and it is what :func:`hypothesis_lipschitz` returns:

* For a radius ``eps``, the largest change ``f(eps)`` of P[M=1] (up, and separately down)
  over all perturbations of size ``eps`` is computed exactly by backward induction over the
  machine's live-value states, every step allowed to output either bit: each state moves
  its step's probability to ``p + eps`` or ``p - eps`` (clipped), whichever helps.  Every
  ratio ``f(eps) / eps`` is attained by a perturbation, so the largest found is a lower
  bound on K.
* On a cell ``[a, b]`` of radii, ``f(eps) <= f(a) + (eps - a) L(a, b)``: shrink the best
  perturbation of radius ``eps`` to radius ``a`` (worth at most ``f(a)``) and telescope the
  rest over the steps; step ``t`` adds at most ``(eps - a)`` times the output gap
  ``V(state, 1) - V(state, 0)`` under the shrunk oracle, which is the true gap give or take
  the children's deviations at radius ``a``, and counts only in the directions the step's
  probability can move (a deterministic step can only move away from 0 or 1).  ``L(a, b)``
  is the largest expected sum of these gaps over perturbations of radius ``b``, again by
  backward induction; on ``[0, b]`` the bound is ``L(0, b)``, which tends to ``f'(0)``.
  Hence ``sup f / eps`` on the cell is at most ``max(f(a)/a, (f(a) + (b - a) L)/b)``.  Cells
  whose bound exceeds the best ratio are bisected until the two agree to ``rtol``
  (``1e-6`` by default), up to floating-point rounding.
* Machines with more than ``max_states`` live states get the coupling bound: the number of
  steps the output depends on (each step's bit differs between the two oracles with
  probability at most ``eps``).

Example:
    >>> from proofgames.stochastic.machines import make_stochastic_machine
    >>> m = make_stochastic_machine("copy-chain:t=5,p=0.3")
    >>> bounds = step_lipschitz_bounds(m)
    >>> m.lipschitz, round(bounds.lower, 4), round(hypothesis_lipschitz(m), 4)
    (1.0, 3.8, 3.8)
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ..errors import ProtocolError
from .exact import MAX_STATES, FloatArray, IntArray, _unique_rows
from .lipschitz import LipschitzBounds, require_lipschitz
from .model import StochasticMachine
from .params import StochasticParams, check_params_spec, resolve_params

STEP, ORACLE = "step", "oracle"
K_DEFINITIONS = {
    STEP: "step (Lean hypothesis)",
    ORACLE: "oracle-only (paper Def. 6.1; not the Lean hypothesis)",
}
"""How each definition of K is labelled wherever a K or a bound computed from it is shown."""


@dataclass(frozen=True)
class _Layer:
    p: FloatArray  # P[y_t = 1 | state] for each state before step t
    child0: IntArray  # the state after y_t = 0
    child1: IntArray  # the state after y_t = 1


def _dependency_cone(machine: StochasticMachine) -> int:
    """Steps the output depends on (transitively through relevant sets), itself included."""
    needed = np.zeros(machine.length, dtype=bool)
    needed[-1] = True
    for t in range(machine.length - 1, -1, -1):
        if needed[t]:
            needed[list(machine.relevant(t))] = True
    return int(needed.sum())


def _layers(machine: StochasticMachine, max_states: int) -> tuple[list[_Layer], FloatArray]:
    """Live-value states when every step may take either bit; the output of each end state."""
    steps = machine.length
    last_read = np.full(steps, -1, dtype=np.int64)
    for t in range(steps):
        for j in machine.relevant(t):
            last_read[j] = t
    live: list[int] = []
    vals = np.zeros((1, 0), dtype=np.int8)
    layers = []
    for t in range(steps):
        col = {j: i for i, j in enumerate(live)}
        rel = vals[:, [col[j] for j in machine.relevant(t)]].astype(np.int64)
        p = machine.probability_batch(t, rel)
        n = vals.shape[0]
        bits = np.repeat(np.array([0, 1], dtype=np.int8), n)
        new = np.concatenate([np.tile(vals, (2, 1)), bits[:, None]], axis=1)
        live = [*live, t]
        keep = [i for i, j in enumerate(live) if last_read[j] > t or j == steps - 1]
        live = [live[i] for i in keep]
        vals, inverse = _unique_rows(new[:, keep])
        if vals.shape[0] > max_states:
            raise ProtocolError(f"{machine.name}: {vals.shape[0]} states > {max_states}")
        layers.append(_Layer(np.asarray(p, np.float64), inverse[:n], inverse[n:]))
    return layers, vals[:, 0].astype(np.float64)


def _flat(layers: list[_Layer]) -> tuple[IntArray, FloatArray, IntArray, IntArray]:
    """The layers as the compiled sweep's flat arrays (:mod:`._sweep_kernel`)."""
    from ._sweep_native import flatten

    offsets, c0, c1 = flatten(
        [layer.p for layer in layers],
        [layer.child0 for layer in layers],
        [layer.child1 for layer in layers],
    )
    return offsets, np.concatenate([layer.p for layer in layers]), c0, c1


def _sweep(
    flat: tuple[IntArray, FloatArray, IntArray, IntArray],
    output: FloatArray,
    a: FloatArray,
    b: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """For each cell ``[a, b]`` and direction (up, down): ``f(a)`` and ``L(a, b)``.

    One backward pass carries, per state, the extreme values of P[M=1 | state] over
    perturbations of radius ``a`` (with their distances ``w`` from the truth, kept apart to
    avoid cancellation) and, per direction, the largest expected sum over perturbations of
    radius ``b`` of the output gaps an oracle within ``a`` of the truth can produce, counted
    only in the directions the step's probability can still move (module docstring).
    Returns two arrays of shape ``(2, cells)``; compiled in C (:mod:`._sweep_native`), or
    by numba (:mod:`._sweep_kernel`) where no C compiler works: bit-identical results.
    """
    from ._sweep_native import sweep

    offsets, p, c0, c1 = flat
    done = sweep(offsets, p, c0, c1, output, a, b)
    if done is None:
        from ._sweep_kernel import sweep_kernel  # numba: loaded only when C is not

        done = sweep_kernel(offsets, p, c0, c1, output, a, b)
    f, slope = done
    return np.asarray(f, np.float64), np.asarray(slope, np.float64)


def _cell_bounds(a: FloatArray, b: FloatArray, f: FloatArray, slope: FloatArray) -> FloatArray:
    """``sup f(eps) / eps`` over each cell, from ``f(eps) <= f(a) + (eps - a) L(a, b)``."""
    at_b = (f + (b - a) * slope) / b
    at_a = f / np.where(a > 0, a, 1.0)
    return np.asarray(np.where(a > 0, np.maximum(at_a, at_b), slope).max(axis=0), np.float64)


def step_lipschitz_bounds(
    machine: StochasticMachine,
    *,
    rtol: float = 1e-6,
    max_states: int = MAX_STATES,
    max_rounds: int = 80,
    max_cells: int = 4096,
) -> LipschitzBounds:
    """Bracket the every-step Lipschitz constant (module docstring); ``upper`` is sound.

    Args:
        machine: the machine.
        rtol: stop refining once ``upper <= lower * (1 + rtol)``.
        max_states: beyond this many live states only the step-count bound is given.
        max_rounds: the most bisection rounds (``upper`` stays sound if they run out).
        max_cells: the most cells refined at once (likewise).
    """
    cone = float(_dependency_cone(machine))
    try:
        layers, output = _layers(machine, max_states)
    except ProtocolError:
        lower = machine.lipschitz if machine.lipschitz_exact and machine.lipschitz else 0.0
        return LipschitzBounds(float(lower), cone, False, "oracle-exact", "step-count")
    flat = _flat(layers)
    edges = np.concatenate([[0.0], np.geomspace(1e-9, 1.0, 64)])
    a, b = edges[:-1], edges[1:]
    lower, closed = 0.0, [np.zeros(1)]
    for _ in range(max_rounds):
        f, slope = _sweep(flat, output, a, b)
        lower = max(lower, float(np.max(f[:, a > 0] / a[a > 0], initial=0.0)))
        bound = _cell_bounds(a, b, f, slope)
        open_ = bound > lower * (1.0 + rtol)
        closed.append(bound[~open_])
        if not open_.any() or open_.sum() > max_cells:
            break
        a, b = a[open_], b[open_]
        mid = np.where(a > 0, np.sqrt(a * b), b / 16.0)
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
    closed.append(bound[open_])
    upper = min(max(lower, float(np.concatenate(closed).max())), cone)
    if upper == 0.0:
        return LipschitzBounds(0.0, 0.0, True, "exact", "exact")
    return LipschitzBounds(lower, upper, False, "search", "step-bisection")


_CACHE: weakref.WeakKeyDictionary[StochasticMachine, LipschitzBounds] = weakref.WeakKeyDictionary()


def step_bounds(machine: StochasticMachine) -> LipschitzBounds:
    """:func:`step_lipschitz_bounds` with its defaults, cached per machine object."""
    bounds = _CACHE.get(machine)
    if bounds is None:
        bounds = _CACHE[machine] = step_lipschitz_bounds(machine)
    return bounds


def hypothesis_lipschitz(machine: StochasticMachine, definition: str = STEP) -> float:
    """The K to derive parameters from: ``"step"`` (default; the Lean hypothesis) or ``"oracle"``.

    ``"step"`` is a sound upper bound on the every-step K (:func:`step_lipschitz_bounds`),
    so the theorem's hypothesis holds for it; ``"oracle"`` is ``machine.lipschitz`` (the
    paper's Definition 6.1), kept for comparison: bounds computed from it are not proven.

    Raises:
        ProtocolError: for an unknown definition, or ``"oracle"`` on a machine without a
            usable ``lipschitz``.
    """
    if definition == ORACLE:
        return require_lipschitz(machine)
    if definition != STEP:
        raise ProtocolError(
            f"K definition must be one of {sorted(K_DEFINITIONS)}, got {definition!r}"
        )
    return step_bounds(machine).upper


def hypothesis_status(machine: StochasticMachine, k: float) -> str:
    """Whether ``k`` is at least the every-step K (``"holds"``, ``"fails"``, ``"unverified"``).

    ``"holds"`` needs ``k`` at or above the sound upper bound; ``"fails"`` means ``k`` is
    below a ratio some perturbation attains; in between it is not known.
    """
    bounds = step_bounds(machine)
    if k >= bounds.upper:
        return "holds"
    return "fails" if k < bounds.lower else "unverified"


class WitnessProblem(Protocol):
    """What :func:`witness_hypothesis_lipschitz` needs of a problem with witnesses."""

    def candidates(self) -> list[bytes]:
        """Every well-formed witness."""

    def machine(self, w: bytes) -> StochasticMachine:
        """M(x, w)."""


def witness_hypothesis_lipschitz(problem: WitnessProblem, definition: str = STEP) -> float:
    """The largest :func:`hypothesis_lipschitz` over the machines M(x, w) of every witness."""
    return max(hypothesis_lipschitz(problem.machine(w), definition) for w in problem.candidates())


def machine_params(
    spec: str, machine: StochasticMachine, definition: str = STEP
) -> StochasticParams:
    """:func:`~proofgames.stochastic.params.resolve_params` with the machine's hypothesis K.

    The result's ``k_definition`` records which K it is (:data:`K_DEFINITIONS`).  A bad
    ``spec`` is refused before K is computed (which can take long on a large machine).

    Example:
        The every-step K of a 3-vote majority is about twice its oracle-only K, and the
        sample counts grow with it:

        >>> from proofgames import machine_params, make_stochastic_machine
        >>> m = make_stochastic_machine("majority:n=3,p=0.8")
        >>> lean = machine_params("lean", m)
        >>> round(lean.k, 4), lean.k_definition, lean.v_samples
        (2.5996, 'step (Lean hypothesis)', 716101)
        >>> oracle_only = machine_params("lean", m, "oracle")
        >>> oracle_only.k == m.lipschitz, oracle_only.v_samples
        (True, 197440)
    """
    check_params_spec(spec)
    k = hypothesis_lipschitz(machine, definition)
    return replace(resolve_params(spec, k, machine.length), k_definition=K_DEFINITIONS[definition])


@dataclass(frozen=True)
class Guarantee:
    """What the theorem says about V's acceptance of a claim, and whether it applies.

    Attributes:
        k_definition: the parameters' ``k_definition`` label.
        hypothesis: :func:`hypothesis_status` of their K on the machine.
        formula: the theorem's bound at that K (a lower bound on acceptance if the claim
            has probability >= 2/3, an upper bound if <= 1/3; ``None`` in between or when
            P[M=1] is unknown) -- proven only if ``hypothesis`` is ``"holds"``.
        proven: ``formula`` where the hypothesis holds, else ``None``.
    """

    k_definition: str
    hypothesis: str
    formula: float | None
    proven: float | None


def guarantee(machine: StochasticMachine, params: StochasticParams, claim: int) -> Guarantee:
    """The theorem's bound for ``claim`` on ``machine`` under ``params``, labelled honestly."""
    status = hypothesis_status(machine, params.k)
    formula = None
    p1 = machine.p_accept
    if p1 is not None:
        p_claim = p1 if claim == 1 else 1 - p1
        if p_claim >= 2 / 3:
            formula = params.proven_completeness(p_claim)
        elif p_claim <= 1 / 3:
            formula = params.proven_soundness(p_claim)
    proven = formula if status == "holds" else None
    return Guarantee(params.k_definition, status, formula, proven)
