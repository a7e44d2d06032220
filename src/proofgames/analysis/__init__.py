"""Exact analysis: game values by exhaustive search, and the intervals every rate carries.

* :mod:`~proofgames.analysis.exhaustive`: on small instances, every transcript and every
  midpoint sequence is searched, so completeness and soundness are exact game values
  against an all-powerful prover (``proofgames exhaustive``);
* :mod:`~proofgames.analysis.intervals`: Clopper-Pearson and Wilson intervals, and a
  verifier's confusion-count intervals.
"""
