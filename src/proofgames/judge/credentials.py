"""Credential management: API tokens, invitations, sessions, passwords, disabled users.

What an admin or a user can list and revoke, and how passwords change:

* **API tokens** are listed and revoked by their owner only; another admin's token id
  looks like a missing one (404). :func:`~proofgames.judge.accounts.token_user` refuses a
  revoked token at once.
* **Invitations** of a study are listed and revoked by any admin; a revoked link says so
  (410).
* **Sessions.** A user lists their live sessions (by a handle, never by the secret id
  in the cookie) and revokes the others; an admin revokes every session of a user.
* **Passwords.** :func:`change_password` needs the current password, checked under the
  login limits; :func:`reset_link_token` gives an admin a one-use, expiring link that
  sets a user's password. Both revoke every session of the user.
* **Disabling** a user (``users.disabled_at``) revokes their sessions and API tokens;
  logins, sessions and tokens of a disabled user are refused.

A reset link is not stored at all: it is the user's id and a fingerprint of their
current password hash, signed with the server's key and a timestamp. It expires after
:data:`RESET_LIFETIME`, and it works once: setting the password changes the hash it is
bound to (in one conditional ``UPDATE``, so two uses at once set it once), and so does
any other password change. Forging one needs the server's key.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> boss = create_user(db, "boss@example.org", "admin", "a long password")
    >>> ann = create_user(db, "ann@example.org", "rater", "a long password")
    >>> link = reset_link_token(db, boss, ann)
    >>> reset_password(db, link, "another long password").email
    'ann@example.org'
    >>> reset_password(db, link, "a third long password")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    proofgames.judge.accounts.Gone: this password-reset link was used already, ...
"""

from __future__ import annotations

import datetime as dt
import secrets

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from .accounts import (
    Gone,
    add_user,
    audit,
    check_login,
    create_user,
    lock_user,
    normal_email,
    revoke_sessions,
    server_secret,
)
from .errors import BadInput, Conflict, Forbidden, NotFound, Unauthorized
from .models import ApiToken, Invitation, Study, User, WebSession, utcnow
from .security import hash_password, password_problem, sha256

__all__ = [
    "RESET_LIFETIME",
    "change_password",
    "create_admin",
    "create_user",
    "disable_user",
    "enable_user",
    "invitations",
    "live_sessions",
    "reset_link_token",
    "reset_password",
    "reset_user",
    "revoke_invitation",
    "revoke_other_sessions",
    "revoke_session",
    "revoke_token",
    "revoke_user_sessions",
    "session_handle",
    "set_password",
    "tokens",
    "user_by_id",
]

RESET_LIFETIME = dt.timedelta(hours=24)
_RESET_SALT = "proofgames-judge-password-reset"


def user_by_id(db: Session, user_id: int) -> User:
    """The user with this id; raises :class:`NotFound`."""
    user = db.get(User, user_id)
    if user is None:
        raise NotFound(f"no user {user_id}")
    return user


# --- API tokens ---------------------------------------------------------------------


def tokens(db: Session, owner: User, limit: int = 200) -> list[ApiToken]:
    """``owner``'s API tokens, newest first (revoked ones too, marked)."""
    query = select(ApiToken).where(ApiToken.user_id == owner.id)
    return list(db.scalars(query.order_by(ApiToken.id.desc()).limit(limit)))


def revoke_token(db: Session, owner: User, token_id: int) -> bool:
    """Revoke one of ``owner``'s API tokens; False when it was revoked already.

    Raises:
        NotFound: No such token of ``owner`` (another admin's looks the same).
    """
    row = db.get(ApiToken, token_id)
    if row is None or row.user_id != owner.id:
        raise NotFound(f"no API token {token_id} of yours")
    done = db.execute(
        update(ApiToken)
        .where(ApiToken.id == token_id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        return False
    audit(db, owner, "revoke_api_token", token_id=token_id, label=row.label)
    db.commit()
    return True


# --- invitations --------------------------------------------------------------------


def invitations(
    db: Session, study: Study, offset: int = 0, limit: int = 50
) -> tuple[int, list[Invitation]]:
    """The study's open invitations (unused, unrevoked; expired ones too), newest first.

    Returns the number of them and one page of them.
    """
    where = (
        Invitation.study_id == study.id,
        Invitation.used_at.is_(None),
        Invitation.revoked_at.is_(None),
    )
    total = int(db.scalar(select(func.count()).select_from(Invitation).where(*where)) or 0)
    query = select(Invitation).where(*where).order_by(Invitation.id.desc())
    return total, list(db.scalars(query.offset(offset).limit(limit)))


def revoke_invitation(db: Session, actor: User, study: Study, invitation_id: int) -> None:
    """Revoke an unused invitation of ``study``: its link then answers 410.

    Raises:
        NotFound: No such invitation in this study.
        Conflict: It was used already (or revoked already).
    """
    row = db.get(Invitation, invitation_id)
    if row is None or row.study_id != study.id:
        raise NotFound(f"no invitation {invitation_id} in study {study.name!r}")
    done = db.execute(
        update(Invitation)
        .where(
            Invitation.id == invitation_id,
            Invitation.used_at.is_(None),
            Invitation.revoked_at.is_(None),
        )
        .values(revoked_at=utcnow())
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        raise Conflict(f"invitation {invitation_id} was used or revoked already")
    audit(db, actor, "revoke_invitation", invitation_id=invitation_id, email=row.email)
    db.commit()


# --- sessions -----------------------------------------------------------------------


def session_handle(session_id: str) -> str:
    """A session's public name: a hash of its id (the id itself is the cookie's secret).

    Example:
        >>> len(session_handle("secret-id")), session_handle("a") != session_handle("b")
        (16, True)
    """
    return sha256("session-handle:" + session_id)[:16]


def live_sessions(db: Session, user: User) -> list[WebSession]:
    """``user``'s live sessions (not revoked, not expired), newest first."""
    query = select(WebSession).where(
        WebSession.user_id == user.id,
        WebSession.revoked_at.is_(None),
        WebSession.expires_at > utcnow(),
    )
    return list(db.scalars(query.order_by(WebSession.created_at.desc()).limit(100)))


def revoke_session(db: Session, user: User, handle: str) -> None:
    """Revoke one of ``user``'s live sessions, named by :func:`session_handle`.

    Raises:
        NotFound: No live session of ``user`` has that handle (anyone else's included).
    """
    given = handle.encode("utf-8", "replace")
    for row in live_sessions(db, user):
        if secrets.compare_digest(session_handle(row.id).encode("ascii"), given):
            row.revoked_at = utcnow()
            audit(db, user, "revoke_session", session=handle)
            db.commit()
            return
    raise NotFound("no live session of yours has that name")


def revoke_other_sessions(db: Session, user: User, current: str) -> int:
    """Revoke every live session of ``user`` but ``current``; returns how many."""
    ended = revoke_sessions(db, user, keep=current)
    audit(db, user, "revoke_other_sessions", sessions=ended)
    db.commit()
    return ended


def revoke_user_sessions(db: Session, actor: User, user: User) -> int:
    """An admin logs ``user`` out everywhere; returns how many sessions ended."""
    lock_user(db, user)
    ended = revoke_sessions(db, user)
    audit(db, actor, "revoke_user_sessions", user_id=user.id, sessions=ended)
    db.commit()
    return ended


# --- disabling ----------------------------------------------------------------------


def disable_user(db: Session, actor: User, user: User) -> dict[str, int]:
    """Disable ``user``: revoke their sessions and API tokens; they cannot log in.

    Returns how many sessions and tokens were revoked.

    Raises:
        Conflict: ``actor`` is ``user`` (an admin cannot lock themselves out), or the
            user is disabled already.
    """
    if actor.id == user.id:
        raise Conflict("you cannot disable your own account")
    lock_user(db, user)
    done = db.execute(
        update(User)
        .where(User.id == user.id, User.disabled_at.is_(None))
        .values(disabled_at=utcnow())
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        raise Conflict(f"{user.email} is disabled already")
    ended = revoke_sessions(db, user)
    tokens_done = db.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    counts = {"sessions": ended, "tokens": int(tokens_done.rowcount)}  # type: ignore[attr-defined]
    audit(db, actor, "disable_user", user_id=user.id, email=user.email, **counts)
    db.commit()
    return counts


def enable_user(db: Session, actor: User, user: User) -> None:
    """Let a disabled user log in again (their revoked sessions and tokens stay revoked).

    Raises:
        Conflict: The user is not disabled.
    """
    done = db.execute(
        update(User)
        .where(User.id == user.id, User.disabled_at.is_not(None))
        .values(disabled_at=None)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        raise Conflict(f"{user.email} is not disabled")
    audit(db, actor, "enable_user", user_id=user.id, email=user.email)
    db.commit()


# --- passwords ----------------------------------------------------------------------


def _new_password(password: str) -> str:
    problem = password_problem(password)
    if problem:
        raise BadInput(problem)
    return hash_password(password)


def change_password(db: Session, user: User, current: str, new: str, ip: str) -> None:
    """Set ``user``'s password, given the current one; revokes all their sessions.

    The current password is checked by :func:`~proofgames.judge.accounts.check_login`,
    under the same limits as a login. The caller opens a new session.

    Raises:
        BadInput: The new password is too short or too long, or equals the current one.
        Forbidden: The current password is wrong.
        RateLimited: Too many wrong passwords (as for logins).
    """
    new_hash = _new_password(new)
    try:
        check_login(db, user.email, current, ip)
    except Unauthorized:
        raise Forbidden("the current password is wrong") from None
    if new == current:
        raise BadInput("the new password must differ from the current one")
    lock_user(db, user)
    db.execute(update(User).where(User.id == user.id).values(password_hash=new_hash))
    ended = revoke_sessions(db, user)
    audit(db, user, "change_password", revoked_sessions=ended)
    db.commit()


def _fingerprint(user: User) -> str:
    return sha256(f"{user.id}|{user.email}|{user.password_hash}")[:32]


def _serializer(db: Session) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(server_secret(db), salt=_RESET_SALT)


def reset_link_token(db: Session, actor: User, user: User) -> str:
    """A one-use token that sets ``user``'s password within :data:`RESET_LIFETIME`.

    Shown once to the admin, who sends the link; nothing of it is stored.

    Raises:
        Conflict: The user is disabled (enable them first).
    """
    if user.disabled_at is not None:
        raise Conflict(f"{user.email} is disabled: enable the account first")
    token = _serializer(db).dumps([user.id, _fingerprint(user)])
    audit(db, actor, "password_reset_link", user_id=user.id, email=user.email)
    db.commit()
    return str(token)


def reset_user(db: Session, token: str) -> User:
    """The user a valid, unused, unexpired reset token is for.

    Raises:
        NotFound: Not a reset token of this server.
        Gone: Expired, used already, the password changed since, or the user is disabled.
    """
    try:
        user_id, fingerprint = _serializer(db).loads(
            token, max_age=int(RESET_LIFETIME.total_seconds())
        )
    except SignatureExpired:
        raise Gone("this password-reset link has expired: ask an admin for a new one") from None
    except (BadSignature, ValueError, TypeError):
        raise NotFound("this password-reset link is not valid") from None
    user = db.get(User, user_id) if isinstance(user_id, int) else None
    if user is None or not secrets.compare_digest(_fingerprint(user), str(fingerprint)):
        raise Gone(
            "this password-reset link was used already, or the password changed since:"
            " ask an admin for a new one"
        )
    if user.disabled_at is not None:
        raise Gone("this account is disabled: ask an admin of the study")
    return user


def reset_password(db: Session, token: str, password: str) -> User:
    """Set the password through a reset token (once); revokes all the user's sessions.

    Raises:
        BadInput: The password is too short or too long.
        NotFound, Gone: As :func:`reset_user`.
    """
    user = reset_user(db, token)
    new_hash = _new_password(password)
    old_hash = user.password_hash
    lock_user(db, user)
    done = db.execute(
        update(User)
        .where(User.id == user.id, User.password_hash == old_hash, User.disabled_at.is_(None))
        .values(password_hash=new_hash)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        raise Gone("this password-reset link was used already: ask an admin for a new one")
    ended = revoke_sessions(db, user)
    audit(db, user, "reset_password", revoked_sessions=ended)
    db.commit()
    return user


def set_password(db: Session, actor: User | None, email: str, password: str) -> User:
    """Give the account ``email`` a new password and log it out everywhere (audited).

    For the command line (an admin who lost their password); ``actor`` None means it.

    Raises:
        BadInput: Malformed email, or the password is too short or too long.
        NotFound: No account has this email.
    """
    user = db.scalar(select(User).where(User.email == normal_email(email)))
    if user is None:
        raise NotFound(f"no account for {email[:80]!r}")
    new_hash = _new_password(password)
    lock_user(db, user)
    db.execute(update(User).where(User.id == user.id).values(password_hash=new_hash))
    ended = revoke_sessions(db, user)
    audit(db, actor, "set_password", user_id=user.id, email=user.email, revoked_sessions=ended)
    db.commit()
    return user


def create_admin(db: Session, actor: User | None, email: str, password: str) -> User:
    """Create an admin account (audited as ``actor``'s act; None: the command line).

    Raises:
        BadInput: Malformed or unreadable email, weak password, or the email is taken.
    """
    user = add_user(db, email, "admin", password, actor=actor)
    db.commit()
    return user
