"""Binomial intervals and a verifier's confusion-count intervals (proofgames.analysis.intervals)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from proofgames import ProtocolError
from proofgames.analysis.intervals import (
    clopper_pearson_interval,
    confusion_intervals,
    wilson_interval,
)


@pytest.mark.parametrize("n", [10, 37])
def test_clopper_pearson_covers_every_true_rate_at_least_as_often_as_promised(n):
    # exact coverage: sum the binomial pmf over the outcomes whose interval holds p
    bounds = [clopper_pearson_interval(k, n) for k in range(n + 1)]
    for p in np.linspace(0.001, 0.999, 173):
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        covered = sum(w for w, (lo, hi) in zip(pmf, bounds, strict=True) if lo <= p <= hi)
        assert covered >= 0.95 - 1e-9, (n, p, covered)


def test_wilson_is_inside_clopper_pearson_for_an_interior_count():
    lo, hi = wilson_interval(30, 100)
    lo_cp, hi_cp = clopper_pearson_interval(30, 100)
    assert lo_cp < lo < 0.3 < hi < hi_cp


def test_a_perfect_record_has_an_upper_end_of_one_and_a_lower_end_below_it():
    lo, hi = clopper_pearson_interval(998, 998)
    assert hi == 1.0
    assert lo == pytest.approx(0.025 ** (1 / 998))  # (alpha/2)^(1/n) solves the tail exactly


def test_confusion_intervals_use_each_rates_own_denominator():
    rates = confusion_intervals(tp=998, fp=189, fn=2, tn=811)
    assert rates["precision"] == clopper_pearson_interval(998, 998 + 189)
    assert rates["recall"] == clopper_pearson_interval(998, 1000)
    assert rates["specificity"] == clopper_pearson_interval(811, 1000)


def test_a_rate_with_nothing_to_estimate_it_from_has_no_interval():
    rates = confusion_intervals(tp=0, fp=0, fn=5, tn=5)  # nothing accepted
    assert rates["precision"] is None
    assert rates["recall"] == clopper_pearson_interval(0, 5)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: clopper_pearson_interval(1, 0), "at least one trial"),
        (lambda: clopper_pearson_interval(6, 5), r"must lie in \[0, 5\], got 6"),
        (lambda: wilson_interval(-1, 5), "got -1"),
        (lambda: clopper_pearson_interval(1, 5, confidence=1.0), "confidence"),
        (lambda: confusion_intervals(tp=-1, fp=0, fn=0, tn=0), "tp must be a non-negative"),
        (lambda: confusion_intervals(tp=1, fp=0.5, fn=0, tn=0), "fp must be"),  # type: ignore[arg-type]
        (lambda: confusion_intervals(tp=True, fp=0, fn=0, tn=0), "tp must be"),
    ],
)
def test_bad_counts_are_rejected_with_the_problem_named(call, fragment):
    with pytest.raises(ProtocolError, match=fragment):
        call()


def test_an_attack_result_reports_its_intervals_in_its_json():
    torch = pytest.importorskip("torch")
    from proofgames.pvg import AttackResult

    empty = torch.zeros(0, 3)
    result = AttackResult("messages", tp=1000, fp=563, fn=0, tn=437,
                          strongest_messages=empty, strongest_logits=torch.zeros(0),
                          strongest_inputs=empty)  # fmt: skip
    saved = result.to_dict()["intervals"]
    assert saved["precision"] == pytest.approx(clopper_pearson_interval(1000, 1563), abs=1e-6)
    assert saved["specificity"] == pytest.approx(clopper_pearson_interval(437, 1000), abs=1e-6)
    assert saved["precision"][0] < result.precision < saved["precision"][1]


def test_the_intervals_equal_scipy_stats_quantiles_bit_for_bit():
    """Computed through scipy.special (faster to import), they are scipy.stats' own."""
    for n in (1, 7, 60, 1000, 2_000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for conf in (0.9, 0.95, 0.99):
                a = 1 - conf
                lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
                hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
                assert clopper_pearson_interval(k, n, conf) == (lo, hi)
    z = float(stats.norm.ppf(0.975))
    lo, hi = wilson_interval(30, 100)
    centre = (0.3 + z * z / 200) / (1 + z * z / 100)
    assert abs((lo + hi) / 2 - centre) < 1e-15
