"""The one check of a root seed, shared by the harness, the sweeps and the reports.

Example:
    >>> check_seed(7), check_seed(None)
    (7, None)
    >>> check_seed(None, optional=False)
    Traceback (most recent call last):
    ...
    proofgames.errors.ProtocolError: seed must be a non-negative integer, got None
"""

from __future__ import annotations

from .errors import ProtocolError

__all__ = ["check_seed"]


def check_seed(seed: object, *, optional: bool = True) -> int | None:
    """A root seed: a non-negative integer, or (if ``optional``) ``None`` for fresh entropy.

    Booleans are refused, though Python counts them as integers.

    Raises:
        ProtocolError: naming the bad seed.
    """
    if (seed is None and optional) or (type(seed) is int and seed >= 0):
        return seed
    allowed = " (or None)" if optional else ""
    raise ProtocolError(f"seed must be a non-negative integer{allowed}, got {seed!r}")
