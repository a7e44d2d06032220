"""Pages of long lists (questions, raters, invitations, users, the audit log).

Example:
    >>> p = Pager.of(number=3, total=120, size=50)
    >>> p.pages, p.offset, p.previous, p.next
    (3, 100, 2, None)
    >>> Pager.of(number=1, total=0).pages
    1
    >>> Pager.of(number=4, total=120, size=50)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.judge.errors.NotFound: there is no page 4: the last page is 3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Query

from .errors import NotFound

PAGE_SIZE = 50
PageNumber = Annotated[int, Query(ge=1, le=2**31 - 1)]
"""A ``?page=N`` parameter: a positive integer (others: 422)."""


@dataclass(frozen=True)
class Pager:
    """Page ``number`` (from 1) of ``total`` rows, ``size`` to a page."""

    number: int
    total: int
    size: int

    @classmethod
    def of(cls, number: int, total: int, size: int = PAGE_SIZE) -> Pager:
        """The pager; raises :class:`NotFound` past the last page."""
        pager = cls(number, total, size)
        if number > pager.pages:
            raise NotFound(f"there is no page {number}: the last page is {pager.pages}")
        return pager

    @property
    def pages(self) -> int:
        """How many pages there are (at least 1, an empty list's)."""
        return max(1, -(-self.total // self.size))

    @property
    def offset(self) -> int:
        """The rows before this page."""
        return (self.number - 1) * self.size

    @property
    def previous(self) -> int | None:
        """The previous page's number, if any."""
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        """The next page's number, if any."""
        return self.number + 1 if self.number < self.pages else None
