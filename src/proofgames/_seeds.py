"""The one check of a root seed and of a call time limit, shared by every entry point.

Example:
    >>> check_seed(7), check_seed(None)
    (7, None)
    >>> check_seed(None, optional=False)
    Traceback (most recent call last):
    ...
    proofgames.errors.ProtocolError: seed must be a non-negative integer, got None
"""

from __future__ import annotations

import math

from .errors import ProtocolError

__all__ = ["check_seed", "check_timeout"]


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


def check_timeout(timeout: object) -> float | None:
    """Seconds allowed per party call: a positive finite number, or ``None`` for no limit.

    A bad limit is the caller's error, raised before play -- never a party's forfeit.

    Raises:
        ProtocolError: naming the bad limit.

    Example:
        >>> check_timeout(2), check_timeout(None)
        (2.0, None)
    """
    if timeout is None:
        return None
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
        if math.isfinite(seconds) and seconds > 0:
            return seconds
    raise ProtocolError(f"timeout must be a positive number of seconds, got {timeout!r}")
