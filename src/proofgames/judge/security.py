"""Passwords, tokens, signed session cookies and CSRF tokens for the judge server.

* Passwords are hashed with argon2id (``argon2-cffi``); only hashes are stored.
* Invitation and API tokens are random; the database keeps their SHA-256 only.
* A session cookie is the session's random id signed with the server's key and a
  timestamp (``itsdangerous``): a forged or tampered cookie fails the signature, an old
  one fails ``max_age``, and a revoked session (logged out) fails the database check.
* A CSRF token is an HMAC of the session id (or, before login, of a signed nonce
  cookie): a form from another site cannot know it.

Example:
    >>> keys = Keys("k" * 43)
    >>> cookie = keys.sign_session("abc")
    >>> keys.unsign_session(cookie, max_age=60)
    'abc'
    >>> keys.unsign_session(cookie + "x", max_age=60) is None
    True
    >>> keys.csrf_ok("abc", keys.csrf_token("abc"))
    True
    >>> keys.csrf_ok("abc", "forged")
    False
    >>> verify_password(hash_password("correct horse"), "correct horse")
    True
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

# Moderate cost: ~20 ms a hash here, so login stays fast and still costly to brute-force.
_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)

MIN_PASSWORD = 10
MAX_PASSWORD = 200


def hash_password(password: str) -> str:
    """The argon2id hash of a password."""
    return _HASHER.hash(password)


def verify_password(stored: str, password: str) -> bool:
    """Whether ``password`` matches the stored hash (never raises on a bad password)."""
    try:
        return _HASHER.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


def password_problem(password: str) -> str | None:
    """Why a new password is unacceptable, or None when it is fine."""
    if len(password) < MIN_PASSWORD:
        return f"the password must have at least {MIN_PASSWORD} characters"
    if len(password) > MAX_PASSWORD:
        return f"the password must have at most {MAX_PASSWORD} characters"
    return None


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def sha256(text: str) -> str:
    """Hex SHA-256 of a text (how tokens are stored and looked up)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Keys:
    """The server's signing key and what is derived from it."""

    def __init__(self, secret: str) -> None:
        if len(secret) < 32:
            raise ValueError("the judge server's secret key must have at least 32 characters")
        self._secret = secret.encode("utf-8")
        self._sessions = TimestampSigner(self._secret, salt="proofgames-judge-session")
        self._nonces = TimestampSigner(self._secret, salt="proofgames-judge-nonce")

    def sign_session(self, session_id: str) -> str:
        """The cookie value for a session id."""
        return self._sessions.sign(session_id).decode("ascii")

    def unsign_session(self, cookie: str, max_age: float) -> str | None:
        """The session id in a cookie, or None when forged, tampered with or too old."""
        try:
            return self._sessions.unsign(cookie, max_age=int(max_age)).decode("ascii")
        except (BadSignature, SignatureExpired, UnicodeError):
            return None

    def sign_nonce(self, nonce: str) -> str:
        """The pre-login CSRF cookie for a nonce."""
        return self._nonces.sign(nonce).decode("ascii")

    def unsign_nonce(self, cookie: str, max_age: float) -> str | None:
        """The nonce in a pre-login CSRF cookie, or None when it is not genuine."""
        try:
            return self._nonces.unsign(cookie, max_age=int(max_age)).decode("ascii")
        except (BadSignature, SignatureExpired, UnicodeError):
            return None

    def csrf_token(self, binding: str) -> str:
        """The CSRF token for a session id (or a pre-login nonce)."""
        mac = hmac.new(self._secret, b"csrf:" + binding.encode("utf-8"), hashlib.sha256)
        return mac.hexdigest()

    def csrf_ok(self, binding: str, token: str) -> bool:
        """Whether ``token`` is the CSRF token for ``binding`` (constant time)."""
        return hmac.compare_digest(self.csrf_token(binding), token)
