"""The reproduction of the paper's experiments, its report and figures (``pvg reproduce``).

* :mod:`~proofgames.pvg.reproduce.reproduce`: :func:`reproduce` trains over seeds,
  stress-tests the frozen verifiers and returns every measured figure;
* :mod:`~proofgames.pvg.reproduce.profiles`: the scales (:data:`PROFILES`) and the
  paper's tables;
* :mod:`~proofgames.pvg.reproduce.report`: ``report.md``, its figures and the README
  block (:func:`write_report`).

This package is also the old module ``proofgames.pvg.reproduce``, whose public names it
keeps.

Example:
    >>> sorted(PROFILES)[:2]
    ['cpu', 'long']
"""

from .profiles import PROFILES, Profile
from .report import write_report
from .reproduce import (
    BECTrace,
    reproduce,
    reproduce_bec,
    reproduce_find_the_plus,
    seed_jobs,
    summarize,
)

__all__ = [
    "PROFILES",
    "BECTrace",
    "Profile",
    "reproduce",
    "reproduce_bec",
    "reproduce_find_the_plus",
    "seed_jobs",
    "summarize",
    "write_report",
]
