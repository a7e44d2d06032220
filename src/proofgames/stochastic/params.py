"""Parameter sets of the stochastic debate protocol (Figure 1 and its Lean formalization).

Three families, all as :class:`StochasticParams` for a machine with Lipschitz constant K
and T steps:

``paper`` (Figure 1, Theorem 6.2)
    d = ceil(150 K); A and B take R = ceil(192 d^2 ln(100 T)) samples per round; B aborts iff
    |q_t - p_t| >= 1/(2d); V takes r = ceil(192 d^2 ln 100) samples and outputs 0 iff
    |p^O_t - p_t| >= 1/(4d); shared coin z_A + z_B mod 1, B decides after the coin.
    Claimed: if P[M=1] >= 2/3, honest A wins w.p. >= 3/5; if P[M=1] <= 1/3, V accepts
    w.p. <= 2/5.
``lean`` (google-deepmind/debate, ``defaults``)
    v = 1/100, c = 1/(100K), s = 2/(100K), b = 5/(100K), q = 1/(100T), w = 2/3, d = 3/5.
    Samples from Hoeffding, ``samples(e, q) = ceil(ln(2/q) / (2 e^2))``: A with (c, q), B with
    ((b - s)/2, q), V with ((s - c)/2, v); B aborts iff |p_t - p_B| >= (s + b)/2, V outputs 0
    iff |p_t - p_V| >= (c + s)/2; B decides before an external Bernoulli(clamp p_t) coin.
custom (:func:`lean_params` with your own c, s, b, q, v, w, d)
    Validated against the formalization's ``Params`` conditions: 0 < c < s < b, 0 < q <= 1,
    0 < v <= 1, q <= v, K b <= w, d <= (1 - v)(w - K c - q T) (completeness) and
    d <= (1 - v)(1 - q T)(w - K b) (soundness).

Example:
    >>> p = lean_params(k=1.0, steps=10)
    >>> p.a_samples, p.b_samples, p.v_samples
    (38005, 16891, 105967)
    >>> paper_params(k=1.0, steps=10).b_threshold == 1 / 300
    True
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .._errors import ProtocolError

SHARED, EXTERNAL = "shared", "external"


def hoeffding_samples(error: float, failure: float) -> int:
    """Samples so that an empirical mean is within ``error`` w.p. >= 1 - ``failure``."""
    if error <= 0 or not 0 < failure <= 1:
        raise ProtocolError(f"need error > 0 and failure in (0, 1], got {error}, {failure}")
    return math.ceil(math.log(2 / failure) / (2 * error**2))


@dataclass(frozen=True)
class StochasticParams:
    """Everything the protocol needs, derived for one machine (K, T).

    Attributes:
        name: ``"paper"``, ``"lean"`` or ``"custom"``.
        k: the Lipschitz constant K used.
        steps: T.
        a_samples, b_samples, v_samples: samples per round for A, B, and V on abort.
        b_threshold: B aborts iff |B's estimate - A's claim| >= this.
        v_threshold: V outputs 0 iff |V's estimate - A's claim| >= this.
        coin: ``"shared"`` (z_A + z_B mod 1, B decides after it) or ``"external"``
            (Bernoulli(clamp p), B decides before it).
        completeness_target: the theorem's acceptance bound for true claims (3/5).
        soundness_target: the theorem's acceptance bound for false claims (2/5).
        lean: the formalization's (c, s, b, q, v, w, d), for ``lean``/``custom``.
        strict_deterministic: demand exact announcements at steps known exactly.
        k_definition: which Lipschitz constant ``k`` is, as labelled by
            :data:`~proofgames.stochastic.hypothesis.K_DEFINITIONS` when the parameters
            were derived for a machine (:func:`~proofgames.stochastic.hypothesis.machine_params`),
            else ``"given"`` (a K supplied by the caller, not checked here).
    """

    name: str
    k: float
    steps: int
    a_samples: int
    b_samples: int
    v_samples: int
    b_threshold: float
    v_threshold: float
    coin: str
    completeness_target: float = 3 / 5
    soundness_target: float = 2 / 5
    lean: dict[str, float] | None = None
    strict_deterministic: bool = False
    k_definition: str = "given"

    def exact_step_tolerance(self) -> float | None:
        """Tolerance for announcements at steps whose probability is known exactly.

        ``None``: the thresholds apply as at oracle steps (Figure 1 as written).  With
        ``strict_deterministic`` an announcement at a deterministic step (or an internal
        coin) must equal the true value: B aborts on, and V rejects, any difference.
        """
        return 1e-12 if self.strict_deterministic else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return asdict(self)

    def proven_completeness(self, p_accept: float) -> float:
        """Lower bound on P[V accepts] for honest A when the claim is P[M=1] >= 2/3.

        The theorem's formula at this K: a proven bound only if K meets the hypothesis
        (the every-step K; :func:`~proofgames.stochastic.hypothesis.hypothesis_status`).

        ``paper``: 3/5 whenever ``p_accept >= 2/3`` (else no claim, 0).  ``lean``/custom: the
        formalization's (1 - v)(P1 - K c - (1 - (1 - q)^T)).
        """
        if self.lean is None:
            return self.completeness_target if p_accept >= 2 / 3 else 0.0
        c, q, v = self.lean["c"], self.lean["q"], self.lean["v"]
        bound = (1 - v) * (p_accept - self.k * c - (1 - (1 - q) ** self.steps))
        return max(0.0, bound)

    def proven_soundness(self, p_accept: float) -> float:
        """Upper bound on P[V accepts] for a false claim P[M=1] >= 2/3 against honest B.

        The theorem's formula at this K: a proven bound only if K meets the hypothesis
        (the every-step K; :func:`~proofgames.stochastic.hypothesis.hypothesis_status`).

        ``paper``: 2/5 whenever ``p_accept <= 1/3``.  ``lean``/custom: 1 minus the
        formalization's (1 - v)(1 - q)^T (P0 - K b) with P0 = 1 - P1.
        """
        if self.lean is None:
            return self.soundness_target if p_accept <= 1 / 3 else 1.0
        b, q, v = self.lean["b"], self.lean["q"], self.lean["v"]
        rejects = (1 - v) * (1 - q) ** self.steps * ((1 - p_accept) - self.k * b)
        return min(1.0, 1 - max(0.0, rejects))

    def expected_queries_bound(self) -> dict[str, float]:
        """The theorems' bounds on expected oracle samples per party for the whole debate."""
        return {
            "A": self.steps * (self.a_samples + 1),
            "B": self.steps * (self.b_samples + 1),
            "V": self.v_samples + 1,
        }


def _check_k_t(k: float, steps: int) -> None:
    if not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
        raise ProtocolError(
            f"the Lipschitz constant K must be a positive number, got {k!r}; a machine without "
            "a Lipschitz bound cannot be debated with the stochastic protocol"
        )
    if not isinstance(steps, int) or steps <= 0:
        raise ProtocolError(f"steps T must be a positive integer, got {steps!r}")


def paper_params(k: float, steps: int, scale: float = 150.0) -> StochasticParams:
    """Figure 1's constants for a K-Lipschitz machine of T steps.

    ``scale`` replaces the paper's 150 in d = ceil(150 K), for measuring how far the
    constants can shrink before the guarantees break (the result is named accordingly).
    """
    _check_k_t(k, steps)
    if scale <= 0:
        raise ProtocolError(f"scale must be positive, got {scale}")
    d = math.ceil(scale * k)
    big_r = math.ceil(192 * d * d * math.log(100 * steps))
    small_r = math.ceil(192 * d * d * math.log(100))
    name = "paper" if scale == 150 else f"paper(scale={scale:g})"
    return StochasticParams(name, float(k), steps, big_r, big_r, small_r,
                            1 / (2 * d), 1 / (4 * d), SHARED)  # fmt: skip


def lean_params(
    k: float,
    steps: int,
    *,
    c: float | None = None,
    s: float | None = None,
    b: float | None = None,
    q: float | None = None,
    v: float = 1 / 100,
    w: float = 2 / 3,
    d: float = 3 / 5,
    name: str | None = None,
) -> StochasticParams:
    """The formalization's parameters (its defaults, or your own, validated).

    Raises:
        ProtocolError: naming the first ``Params`` condition that fails.
    """
    _check_k_t(k, steps)
    is_default = (c, s, b, q) == (None, None, None, None) and (v, w, d) == (1 / 100, 2 / 3, 3 / 5)
    c = 1 / (100 * k) if c is None else c
    s = 2 / (100 * k) if s is None else s
    b = 5 / (100 * k) if b is None else b
    q = 1 / (100 * steps) if q is None else q
    checks = [
        (0 < c < s < b, f"need 0 < c < s < b, got c={c}, s={s}, b={b}"),
        (0 < q <= 1, f"need 0 < q <= 1, got q={q}"),
        (0 < v <= 1, f"need 0 < v <= 1, got v={v}"),
        (q <= v, f"need q <= v, got q={q} > v={v}"),
        (k * b <= w, f"need K b <= w, got K b = {k * b} > w = {w}"),
        (d <= (1 - v) * (w - k * c - q * steps),
         f"completeness condition fails: d = {d} > (1-v)(w - K c - q T) = "
         f"{(1 - v) * (w - k * c - q * steps):.6g}"),
        (d <= (1 - v) * (1 - q * steps) * (w - k * b),
         f"soundness condition fails: d = {d} > (1-v)(1 - q T)(w - K b) = "
         f"{(1 - v) * (1 - q * steps) * (w - k * b):.6g}"),
    ]  # fmt: skip
    for ok, message in checks:
        if not ok:
            raise ProtocolError(f"invalid stochastic-debate parameters: {message}")
    return StochasticParams(
        name or ("lean" if is_default else "custom"),
        float(k),
        steps,
        hoeffding_samples(c, q),
        hoeffding_samples((b - s) / 2, q),
        hoeffding_samples((s - c) / 2, v),
        (s + b) / 2,
        (c + s) / 2,
        EXTERNAL,
        completeness_target=d,
        soundness_target=1 - d,
        lean={"c": c, "s": s, "b": b, "q": q, "v": v, "w": w, "d": d},
    )


def resolve_params(spec: str, k: float, steps: int) -> StochasticParams:
    """``"paper"``, ``"lean"``, or a JSON file of Lean-style values (c, s, b, q, v, w, d).

    A ``":strict"`` suffix (``"paper:strict"``) demands exact announcements at
    deterministic steps (see :meth:`StochasticParams.exact_step_tolerance`).
    """
    if spec.endswith(":strict"):
        base = resolve_params(spec[: -len(":strict")], k, steps)
        return replace(base, name=f"{base.name}:strict", strict_deterministic=True)
    if spec == "paper":
        return paper_params(k, steps)
    if spec == "lean":
        return lean_params(k, steps)
    path = Path(spec)
    try:
        values = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ProtocolError(
            f"--params must be 'paper', 'lean' or a JSON file of c, s, b, q, v, w, d: {exc}"
        ) from None
    allowed = {"c", "s", "b", "q", "v", "w", "d"}
    unknown = set(values) - allowed
    if not isinstance(values, dict) or unknown:
        raise ProtocolError(
            f"{path}: unknown parameter(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    return lean_params(k, steps, name="custom", **{key: float(x) for key, x in values.items()})
