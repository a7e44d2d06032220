"""Errors of the judge server, each with the HTTP status it is answered with.

Example:
    >>> err = NotFound("assignment 7 is not yours or does not exist")
    >>> err.status, str(err)
    (404, 'assignment 7 is not yours or does not exist')
"""

from __future__ import annotations

from ..errors import ProofgamesError
from ..judges.interface import unreadable_character


class JudgeError(ProofgamesError):
    """Base class: a request the judge server refuses, with a message naming why."""

    status = 400


class BadInput(JudgeError, ValueError):
    """A field is missing, malformed, too long or out of range."""

    status = 422


class Unauthorized(JudgeError):
    """No valid session or token, or wrong credentials."""

    status = 401


class Forbidden(JudgeError):
    """Authenticated, but not allowed (a rater on an admin page, a bad CSRF token)."""

    status = 403


class NotFound(JudgeError):
    """No such object, or not one this user may see (the two look the same)."""

    status = 404


class Conflict(JudgeError):
    """The request clashes with the current state (e.g. the question has closed)."""

    status = 409


class RateLimited(JudgeError):
    """Too many attempts (logins) in the current window."""

    status = 429


def readable(what: str, text: str) -> str:
    r"""``text``, if every character of it shows as what is stored; else :class:`BadInput`.

    A NUL byte, a control, zero-width or bidirectional character, a lone surrogate or a
    look-alike digit in a name, an id or an email is refused (422, naming it), never
    stored, and never sent to a database that cannot hold it (PostgreSQL refuses NUL).

    Example:
        >>> readable("debate_id", "d-1")
        'd-1'
        >>> readable("debate_id", "d\x00")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.judge.errors.BadInput: debate_id has an invisible, ... U+0000 (unnamed) at ...
    """
    hidden = unreadable_character(text)
    if hidden is not None:
        raise BadInput(f"{what} has an invisible, control or look-alike character {hidden}")
    return text


def whole_number(text: str) -> int | None:
    """The value of ``text`` if it is ASCII digits only (``"12"``), else ``None``.

    ``str.isdigit`` is true of ``"²"`` and ``"١٢"`` too, which ``int`` refuses or reads.

    Example:
        >>> whole_number("12"), whole_number("\u00b2"), whole_number("-1")
        (12, None, None)
    """
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 30 else None
