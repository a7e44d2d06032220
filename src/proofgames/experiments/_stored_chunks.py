"""What a Monte Carlo chunk's stored result may be: checked before it is summed in.

Private to :mod:`proofgames.experiments.montecarlo`.  A store
(:class:`~proofgames.sweeps._store.ResultStore`) gives back what a file holds; a chunk's
result is summed into an estimate only if it is one that
:func:`~proofgames.experiments._chunks.run_chunk` could have returned for a chunk of that
many debates (:func:`check_chunk`).

Example:
    >>> good = {"accepted": 3, "aborted": 0, "samples": {"A": [8, 2], "B": [4, 1],
    ...         "V": [0, 0]}, "lost": [["B", "timeout", 1]], "seconds": 0.5}
    >>> check_chunk(good, 4)
    >>> check_chunk({**good, "accepted": -5000}, 4)
    Traceback (most recent call last):
    ...
    ValueError: accepted must be an integer in 0..4 (the chunk's debates), got -5000
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

FIELDS = frozenset({"accepted", "aborted", "samples", "lost", "seconds"})
PARTIES = frozenset({"A", "B", "V"})  # whose oracle samples a chunk counts
FORFEITERS = frozenset({"A", "B"})  # who can forfeit a debate


def _count(value: object, name: str, most: int | None = None) -> int:
    """``value``, refused unless an integer (not a bool) in ``0..most``."""
    if type(value) is not int or value < 0 or (most is not None and value > most):
        limit = "a non-negative integer" if most is None else f"an integer in 0..{most}"
        chunk = "" if most is None else " (the chunk's debates)"
        raise ValueError(f"{name} must be {limit}{chunk}, got {value!r}"[:200])
    return value


def _samples(samples: object, debates: int) -> None:
    """Per party ``[sum, max]`` of samples per debate: ``max <= sum <= max * debates``."""
    if not isinstance(samples, dict) or set(samples) != PARTIES:
        raise ValueError(f"samples must map each of {sorted(PARTIES)} to [sum, max]")
    for party in sorted(PARTIES):
        pair = samples[party]
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"samples of {party} must be [sum, max], got {pair!r}"[:200])
        total = _count(pair[0], f"the sum of {party}'s samples")
        most = _count(pair[1], f"the most samples of {party} in one debate")
        if not most <= total <= most * debates:
            raise ValueError(
                f"{party}'s samples do not fit together: a sum of {total} with at most "
                f"{most} per debate over {debates} debates"
            )


def _lost(lost: object, debates: int) -> None:
    """``[[party, reason, debates], ...]``: distinct (party, reason), at most ``debates`` in all."""
    if not isinstance(lost, list):
        raise ValueError(f"lost must be a list of [party, reason, debates], got {lost!r}"[:200])
    seen: set[tuple[str, str]] = set()
    total = 0
    for entry in lost:
        if (
            not isinstance(entry, list)
            or len(entry) != 3
            or entry[0] not in FORFEITERS
            or not isinstance(entry[1], str)
            or (entry[0], entry[1]) in seen
        ):
            raise ValueError(
                f"a forfeit must be [party A or B, reason, debates], once per party and "
                f"reason, got {entry!r}"[:200]
            )
        seen.add((entry[0], entry[1]))
        total += _count(entry[2], "debates forfeited", debates)
    if total > debates:
        raise ValueError(f"{total} debates forfeited in a chunk of {debates}")


def check_chunk(result: object, debates: int) -> None:
    """Refuse anything but a result of a chunk of ``debates`` debates.

    Its fields are exactly :data:`FIELDS`: ``accepted`` and ``aborted`` integers in
    ``0..debates``; ``samples`` per party (A, B, V) ``[sum, max]`` of samples per debate,
    non-negative integers with ``max <= sum <= max * debates``; ``lost`` a list of
    ``[party, reason, debates]`` (party A or B, each party and reason once, in all at most
    ``debates``); ``seconds`` a finite number >= 0.

    Raises:
        ValueError: saying which field is wrong.

    Example:
        >>> check_chunk({"accepted": True}, 10)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: a chunk's result has exactly the fields ['aborted', 'accepted', 'lost', ...
    """
    if not isinstance(result, dict) or set(result) != FIELDS:
        raise ValueError(f"a chunk's result has exactly the fields {sorted(FIELDS)}")
    _count(result["accepted"], "accepted", debates)
    _count(result["aborted"], "aborted", debates)
    _samples(result["samples"], debates)
    _lost(result["lost"], debates)
    seconds = result["seconds"]
    number = seconds if type(seconds) in (int, float) else math.nan  # not a bool
    if not 0 <= number < math.inf:  # NaN fails it too
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}"[:200])


def chunk_check(sizes: Mapping[str, int]) -> Callable[[str, Any], None]:
    """The store's check of a sweep whose chunk ``key`` has ``sizes[key]`` debates.

    Example:
        >>> check = chunk_check({"0/0": 5})
        >>> check("0/9", {})
        Traceback (most recent call last):
        ...
        ValueError: no chunk of this sweep has the key '0/9'
    """

    def check(key: str, result: Any) -> None:
        if key not in sizes:
            raise ValueError(f"no chunk of this sweep has the key {key!r}"[:200])
        check_chunk(result, sizes[key])

    return check
