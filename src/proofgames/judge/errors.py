"""Errors of the judge server, each with the HTTP status it is answered with.

Example:
    >>> err = NotFound("assignment 7 is not yours or does not exist")
    >>> err.status, str(err)
    (404, 'assignment 7 is not yours or does not exist')
"""

from __future__ import annotations

from ..errors import ProofgamesError


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
