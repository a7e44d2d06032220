"""Parameter sets of the stochastic debate protocol (Figure 1 and its Lean formalization).

Four families, all as :class:`StochasticParams` for a machine with Lipschitz constant K
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
    d <= (1 - v)(1 - q T)(w - K b) (soundness), in exact rational arithmetic on the values the
    floats hold; the Hoeffding counts are certified (:mod:`.tails`).  A file may add
    ``"tail": "exact"`` for exact binomial-tail counts (not machine-checked).
``optimized``, ``optimized-exact`` (:mod:`.optimize`, registered in :data:`PRESETS`)
    The custom set with the fewest V queries at the machine's K and T.

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
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import ProtocolError
from ..reporting.reading import SETTINGS_LIMIT, ReadError, read_json

SHARED, EXTERNAL = "shared", "external"


MAX_SAMPLES = 2**53
"""Largest sample count per round that parameters may ask for (exact in a float64)."""


def hoeffding_samples(error: float, failure: float) -> int:
    """Samples so that an empirical mean is within ``error`` w.p. >= 1 - ``failure``.

    Raises:
        ProtocolError: ``error <= 0``, ``failure`` outside (0, 1], or more than
            :data:`MAX_SAMPLES` samples needed.
    """
    if not error > 0 or not 0 < failure <= 1:
        raise ProtocolError(f"need error > 0 and failure in (0, 1], got {error}, {failure}")
    squared = error**2
    needed = math.log(2 / failure) / (2 * squared) if squared > 0 else math.inf
    return _sample_count(needed, f"error {error:g} with failure probability {failure:g}")


def _sample_count(x: float, why: str) -> int:
    if not x <= MAX_SAMPLES:
        raise ProtocolError(
            f"invalid stochastic-debate parameters: {why} needs {x:.3g} samples per round, "
            f"more than the {MAX_SAMPLES:.3g} (2^53) allowed"
        )
    return math.ceil(x)


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
        tails: how each party's sample count was derived, when not every count is the
            Lean theorem's Hoeffding count (``{"A": "hoeffding", "V": "exact binomial
            tail, not machine-checked", ...}``); ``None`` means Hoeffding for all.
        tight: the tight argument's constants (c, s, b, q_a, q_b, v_c, v_s, w, d) for a
            set of the ``tight`` tier (:mod:`.tight`: a written proof checked numerically,
            not machine-checked); ``None`` otherwise.
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
    tails: dict[str, str] | None = None
    tight: dict[str, float] | None = None

    def exact_step_tolerance(self) -> float | None:
        """Tolerance for announcements at steps whose probability is known exactly.

        ``None``: the thresholds apply as at oracle steps (Figure 1 as written).  With
        ``strict_deterministic`` an announcement at a deterministic step (or an internal
        coin) must equal the true value: B aborts on, and V rejects, any difference.
        """
        return 1e-12 if self.strict_deterministic else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``tails``, ``tight`` only when set)."""
        out = asdict(self)
        for key in ("tails", "tight"):
            if out[key] is None:
                del out[key]
        return out

    def proven_completeness(self, p_accept: float) -> float:
        """Lower bound on P[V accepts] for honest A when the claim is P[M=1] >= 2/3.

        The theorem's formula at this K: a proven bound only if K meets the hypothesis
        (the every-step K; :func:`~proofgames.stochastic.hypothesis.hypothesis_status`).

        ``paper``: 3/5 whenever ``p_accept >= 2/3`` (else no claim, 0).  ``lean``/custom: the
        formalization's (1 - v)(P1 - K c - (1 - (1 - q)^T)).  ``tight``: the same with V's
        completeness error v_c and A's q_a (``docs/stochastic-tight.md``; not machine-checked).
        """
        if self.tight is not None:
            c, q, v = self.tight["c"], self.tight["q_a"], self.tight["v_c"]
            bound = (1 - v) * (p_accept - self.k * c - (1 - (1 - q) ** self.steps))
            return max(0.0, bound)
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
        formalization's (1 - v)(1 - q)^T (P0 - K b) with P0 = 1 - P1.  ``tight``: the same
        with V's soundness error v_s and B's q_b (not machine-checked).
        """
        if self.tight is not None:
            b, q, v = self.tight["b"], self.tight["q_b"], self.tight["v_s"]
            rejects = (1 - v) * (1 - q) ** self.steps * ((1 - p_accept) - self.k * b)
            return min(1.0, 1 - max(0.0, rejects))
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
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
        raise ProtocolError(f"scale must be a finite positive number, got {scale!r}")
    if not scale * k <= MAX_SAMPLES:
        raise ProtocolError(f"d = ceil({scale:g} K) is too large at K = {k:g}")
    d = math.ceil(scale * k)
    why = f"d = ceil({scale:g} K) = {d}"
    big_r = _sample_count(192 * d * d * math.log(100 * steps), why)
    small_r = _sample_count(192 * d * d * math.log(100), why)
    name = "paper" if scale == 150 else f"paper(scale={scale:g})"
    return StochasticParams(name, float(k), steps, big_r, big_r, small_r,
                            1 / (2 * d), 1 / (4 * d), SHARED)  # fmt: skip


LEAN_KEYS = ("c", "s", "b", "q", "v", "w", "d")
"""The keys of a ``--params`` JSON file: the formalization's ``Params`` fields and w, d."""


def _real(key: str, value: object) -> float:
    """``value`` as a finite float, or a :class:`ProtocolError` naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(
            f"invalid stochastic-debate parameters: {key} must be a number, got "
            f"{type(value).__name__} {value!r}"
        )
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise ProtocolError(
            f"invalid stochastic-debate parameters: {key} must be finite, got {value!r}"
        )
    return x


def _check_values(c: float, s: float, b: float, q: float, v: float, w: float, d: float) -> None:
    """The ``Params`` conditions that do not involve K or T (and ``w <= 1``, ``d > 0``)."""
    checks = [
        (0 < c < s < b, f"need 0 < c < s < b, got c={c}, s={s}, b={b}"),
        (0 < q <= 1, f"need 0 < q <= 1, got q={q}"),
        (0 < v <= 1, f"need 0 < v <= 1, got v={v}"),
        (q <= v, f"need q <= v, got q={q} > v={v}"),
        (w <= 1, f"need w <= 1 (w bounds a probability from below), got w={w}"),
        (d > 0, f"need d > 0 (d bounds a probability from below), got d={d}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ProtocolError(f"invalid stochastic-debate parameters: {message}")


TAILS = ("hoeffding", "exact")
"""How sample counts are derived: the Lean theorem's Hoeffding counts, or exact binomial
tails (:mod:`.tails`; not machine-checked)."""


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
    tail: str = "hoeffding",
) -> StochasticParams:
    """The formalization's parameters (its defaults, or your own, validated).

    Every value must be a finite real number.  Besides the formalization's ``Params``
    conditions (module docstring), ``w <= 1`` (the hypothesis ``P[M=1] >= w`` must be
    satisfiable, else the theorem says nothing) and ``d > 0`` (else the guarantee is vacuous
    and the soundness target ``1 - d`` is at least 1).  The conditions are checked in exact
    rational arithmetic on the values the floats hold, and the Hoeffding counts are
    certified (:func:`~.tails.certified_hoeffding`).  ``tail="exact"`` replaces each count
    by the exact binomial tail's (:func:`~.tails.exact_tail_samples`; not machine-checked)
    where the scan is within its limit, and records which in ``tails``.

    Raises:
        ProtocolError: naming the first value or ``Params`` condition that fails.
    """
    _check_k_t(k, steps)
    if tail not in TAILS:
        raise ProtocolError(f"tail must be one of {list(TAILS)}, got {tail!r}")
    is_default = (c, s, b, q) == (None, None, None, None) and (v, w, d) == (1 / 100, 2 / 3, 3 / 5)
    c = 1 / (100 * k) if c is None else _real("c", c)
    s = 2 / (100 * k) if s is None else _real("s", s)
    b = 5 / (100 * k) if b is None else _real("b", b)
    q = 1 / (100 * steps) if q is None else _real("q", q)
    v, w, d = _real("v", v), _real("w", w), _real("d", d)
    _check_values(c, s, b, q, v, w, d)
    _check_conditions(k, steps, c, s, b, q, v, w, d)
    samples, tails = _sample_counts(c, s, b, q, v, tail)
    return StochasticParams(
        name or ("lean" if is_default else "custom"),
        float(k),
        steps,
        samples[0],
        samples[1],
        samples[2],
        (s + b) / 2,
        (c + s) / 2,
        EXTERNAL,
        completeness_target=d,
        soundness_target=1 - d,
        lean={"c": c, "s": s, "b": b, "q": q, "v": v, "w": w, "d": d},
        tails=tails,
    )


def _check_conditions(
    k: float, steps: int, c: float, s: float, b: float, q: float, v: float, w: float, d: float
) -> None:
    """The ``Params`` conditions with K and T, in exact arithmetic on the floats' values."""
    kf, cf, bf, qf, vf, wf, df = (Fraction(x) for x in (k, c, b, q, v, w, d))
    complete = (1 - vf) * (wf - kf * cf - qf * steps)
    sound = (1 - vf) * (1 - qf * steps) * (wf - kf * bf)
    checks = [
        (kf * bf <= wf, f"need K b <= w, got K b = {k * b} > w = {w}"),
        (df <= complete, f"completeness condition fails: d = {d} > (1-v)(w - K c - q T) = "
                         f"{float(complete):.6g}"),
        (df <= sound, f"soundness condition fails: d = {d} > (1-v)(1 - q T)(w - K b) = "
                      f"{float(sound):.6g}"),
    ]  # fmt: skip
    for ok, message in checks:
        if not ok:
            raise ProtocolError(f"invalid stochastic-debate parameters: {message}")


def _sample_counts(
    c: float, s: float, b: float, q: float, v: float, tail: str
) -> tuple[list[int], dict[str, str] | None]:
    """A's, B's and V's counts (certified Hoeffding, or exact tails), and how each was made."""
    from .tails import EXACT_LABEL, certified_hoeffding, exact_tail_samples

    samples: list[int] = []
    tails: dict[str, str] = {}
    for party, error, failure, how in (
        ("A", Fraction(c), Fraction(q), "c"),
        ("B", (Fraction(b) - Fraction(s)) / 2, Fraction(q), "(b - s)/2"),
        ("V", (Fraction(s) - Fraction(c)) / 2, Fraction(v), "(s - c)/2"),
    ):
        try:
            hoeffding_samples(float(error), float(failure))  # refuses counts beyond 2^53
        except ProtocolError as exc:
            raise ProtocolError(f"{exc} (party {party}'s error {how})") from None
        count, tails[party] = certified_hoeffding(error, failure), "hoeffding"
        if tail == "exact":
            try:
                count, tails[party] = exact_tail_samples(error, failure).n0, EXACT_LABEL
            except ProtocolError:  # above the scan limit: Hoeffding's count is valid too
                tails[party] = "hoeffding (count above the exact-tail scan limit)"
        samples.append(count)
    return samples, (tails if tail == "exact" else None)


PRESETS: dict[str, Callable[[float, int], StochasticParams]] = {
    "paper": paper_params,
    "lean": lean_params,
}
"""Named ``--params`` values and how each is derived for a machine's (K, T); the
optimized sets (:mod:`.optimize`) register themselves here."""


def resolve_params(spec: str, k: float, steps: int) -> StochasticParams:
    """A preset (:data:`PRESETS`: ``"paper"``, ``"lean"``, ``"optimized"``, ...) or a JSON file.

    The file holds Lean-style values (c, s, b, q, v, w, d) and optionally ``"tail"``
    (:func:`load_params_file`).

    A ``":strict"`` suffix (``"paper:strict"``) demands exact announcements at
    deterministic steps (see :meth:`StochasticParams.exact_step_tolerance`).
    """
    if spec.endswith(":strict"):
        base = resolve_params(spec[: -len(":strict")], k, steps)
        return replace(base, name=f"{base.name}:strict", strict_deterministic=True)
    if spec in PRESETS:
        return PRESETS[spec](k, steps)
    values, tail = load_params_file(Path(spec))
    try:
        return lean_params(k, steps, name="custom", tail=tail, **values)
    except ProtocolError as exc:
        raise ProtocolError(f"{spec}: {exc}") from None


def check_params_spec(spec: str) -> None:
    """Check a ``--params`` value as far as possible without the machine's K and T.

    Cheap: call it before computing K (which can take long) so that a bad file is refused
    first.  A preset name (optionally with ``":strict"``) passes; a file is read and
    checked (:func:`read_params_file`) with every ``Params`` condition that involves
    neither K nor T; :func:`resolve_params` checks the rest.

    Raises:
        ProtocolError: naming the file and what is wrong.
    """
    base = spec[: -len(":strict")] if spec.endswith(":strict") else spec
    if base in PRESETS:
        return
    values = read_params_file(Path(base))
    try:
        _check_values(**values)
    except ProtocolError as exc:
        raise ProtocolError(f"{base}: {exc}") from None


def read_params_file(path: Path) -> dict[str, float]:
    """The seven values (c, s, b, q, v, w, d) of a ``--params`` JSON file, type-checked.

    See :func:`load_params_file`, which also returns the file's ``"tail"``.

    Raises:
        ProtocolError: as :func:`load_params_file`.
    """
    return load_params_file(path)[0]


def load_params_file(path: Path) -> tuple[dict[str, float], str]:
    """The seven values of a ``--params`` JSON file, type-checked, and its tail tier.

    The file must be a regular file of at most 1 MiB (a FIFO or a device is refused, never
    read), UTF-8 strict JSON (no NaN or Infinity, no key twice;
    :func:`~proofgames.reporting.reading.read_json`) holding one object with exactly the
    keys :data:`LEAN_KEYS`, each a finite number, and optionally ``"tail"``: ``"hoeffding"``
    (the default) or ``"exact"`` (:data:`TAILS`); :func:`lean_params` then checks the
    formalization's conditions.  ``proofgames params optimize --out FILE`` writes one.

    Raises:
        ProtocolError: naming the file and what is wrong (unreadable, not a regular file,
            over 1 MiB, not UTF-8, not strict JSON, not an object, missing or unknown keys,
            a value that is not a finite number, an unknown tail).
    """
    what = f"--params must be one of {', '.join(PRESETS)} or a JSON file of c, s, b, q, v, w, d"
    try:  # a regular file of at most 1 MiB, UTF-8, strict JSON (no NaN, no key twice)
        values = read_json(path, "the --params file", SETTINGS_LIMIT)
    except ReadError as exc:
        raise ProtocolError(f"{exc}; {what}") from None
    if not isinstance(values, dict):
        raise ProtocolError(
            f"{path}: must hold a JSON object of c, s, b, q, v, w, d, got "
            f"{type(values).__name__} {json.dumps(values)[:60]}"
        )
    values = dict(values)
    tail = values.pop("tail", "hoeffding")
    if tail not in TAILS:
        raise ProtocolError(f"{path}: tail must be one of {list(TAILS)}, got {tail!r}")
    unknown = sorted(set(values) - set(LEAN_KEYS))
    if unknown:
        raise ProtocolError(
            f"{path}: unknown parameter(s) {unknown}; allowed: {list(LEAN_KEYS)} and 'tail'"
        )
    missing = [key for key in LEAN_KEYS if key not in values]
    if missing:
        raise ProtocolError(
            f"{path}: missing parameter(s) {missing}; give all of {list(LEAN_KEYS)} "
            "(--params lean uses the formalization's defaults)"
        )
    out: dict[str, float] = {}
    for key in LEAN_KEYS:
        try:
            out[key] = _real(key, values[key])
        except ProtocolError as exc:
            raise ProtocolError(f"{path}: {exc}") from None
    return out, str(tail)
