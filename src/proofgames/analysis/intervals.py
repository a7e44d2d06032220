"""Confidence intervals for binomial proportions, and for a verifier's confusion counts.

Every measured rate that proofgames reports from a finite sample -- a Monte Carlo
acceptance probability, a frozen verifier's precision against an attack -- comes with
an interval from here.  :func:`clopper_pearson_interval` is exact (its coverage is at
least the confidence for every true rate); :func:`wilson_interval` is shorter and
approximate.

Example:
    >>> lo, hi = clopper_pearson_interval(998, 998)   # 998 accepted, all truly positive
    >>> round(lo, 4), hi
    (0.9963, 1.0)
    >>> rates = confusion_intervals(tp=998, fp=0, fn=2, tn=1000)
    >>> low, high = rates["recall"]
    >>> round(low, 4), round(high, 4)
    (0.9928, 0.9998)
"""

from __future__ import annotations

import math

from ..errors import ProtocolError

__all__ = ["clopper_pearson_interval", "confusion_intervals", "wilson_interval"]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (approximate coverage).

    Raises:
        ProtocolError: ``n`` is not positive, or ``successes`` is outside ``[0, n]``.
    """
    from scipy import special  # here: SciPy's special functions take ~0.2-0.5 s to load

    _check(successes, n, confidence)
    z = float(special.ndtri(0.5 + confidence / 2))  # the normal quantile (norm.ppf's own)
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Exact (Clopper--Pearson) interval for a binomial proportion: coverage >= confidence.

    Raises:
        ProtocolError: ``n`` is not positive, or ``successes`` is outside ``[0, n]``.
    """
    # the Beta quantile through the inverse regularized incomplete beta function: what
    # scipy.stats.beta.ppf computes, without loading scipy.stats (about twice as long)
    from scipy import special

    _check(successes, n, confidence)
    alpha = 1 - confidence
    lo = (
        0.0
        if successes == 0
        else float(special.betaincinv(successes, n - successes + 1, alpha / 2))
    )
    hi = (
        1.0
        if successes == n
        else float(special.betaincinv(successes + 1, n - successes, 1 - alpha / 2))
    )
    return lo, hi


def confusion_intervals(
    tp: int, fp: int, fn: int, tn: int, confidence: float = 0.95
) -> dict[str, tuple[float, float] | None]:
    """Clopper--Pearson intervals for precision, recall and specificity from counts.

    Precision's interval is conditional on the number of accepted instances (TP + FP);
    recall's on the label-1 instances, specificity's on the label-0 ones.  A rate with
    no instances to estimate it from (nothing accepted, say) has ``None``.

    Raises:
        ProtocolError: a count is negative or not an integer.
    """
    counts = {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ProtocolError(f"{name} must be a non-negative integer count, got {value!r}")
    pairs = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "specificity": (tn, tn + fp)}
    return {
        rate: clopper_pearson_interval(k, n, confidence) if n else None
        for rate, (k, n) in pairs.items()
    }


def _check(successes: int, n: int, confidence: float) -> None:
    if n <= 0:
        raise ProtocolError("an interval needs at least one trial")
    if not 0 <= successes <= n:
        raise ProtocolError(f"successes must lie in [0, {n}], got {successes}")
    if not 0 < confidence < 1:
        raise ProtocolError(f"confidence must lie strictly between 0 and 1, got {confidence}")
