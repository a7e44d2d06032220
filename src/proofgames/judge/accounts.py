"""Accounts: admins and raters, login sessions, invitations, API tokens, login limits.

Every function takes an open SQLAlchemy :class:`~sqlalchemy.orm.Session` and commits
what it changes before returning. Each check of a credential refuses what was revoked:
a revoked session, token or invitation, and every credential of a disabled user
(``users.disabled_at``). A user has one live session: logging in revokes the older ones.
Listing, revoking, password changes and resets are in
:mod:`proofgames.judge.credentials`.

Example:
    >>> from proofgames.judge.db import make_engine, migrate, session_factory
    >>> engine = make_engine("sqlite://"); migrate(engine)
    >>> db = session_factory(engine)()
    >>> admin = create_user(db, "admin@example.org", "admin", "a long password")
    >>> check_login(db, "ADMIN@example.org", "a long password", ip="127.0.0.1").id == admin.id
    True
"""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import fastsql, statements
from .errors import (
    BadInput,
    Conflict,
    Forbidden,
    JudgeError,
    NotFound,
    RateLimited,
    Unauthorized,
    readable,
)
from .models import (
    ApiToken,
    AuditEntry,
    Invitation,
    LoginFailure,
    Membership,
    ServerSecret,
    Study,
    User,
    WebSession,
    utcnow,
)
from .security import hash_password, new_token, password_problem, sha256, verify_password

ROLES = ("admin", "rater")
EMAIL = re.compile(r"^[^@\s<>\"']{1,64}@[^@\s<>\"']{1,189}$")
LOGIN_WINDOW = dt.timedelta(minutes=15)
#: Failed password checks allowed in :data:`LOGIN_WINDOW`: for one email from one address,
#: for one email from every address (a slow guesser spread over many addresses), and
#: from one address for every email (one guess at each of many accounts).
MAX_FAILURES_PER_EMAIL_AND_IP = 5
MAX_FAILURES_PER_EMAIL = 50
MAX_FAILURES_PER_IP = 30


class Gone(JudgeError):
    """A credential that existed and was revoked (an invitation link, say): 410."""

    status = 410


def server_secret(db: Session) -> str:
    """The server's signing key, made on first use and kept in the database."""
    row = db.get(ServerSecret, "session")
    if row is None:
        db.add(ServerSecret(name="session", value=new_token()))
        try:
            db.commit()
        except IntegrityError:  # another process made it first
            db.rollback()
        row = db.get(ServerSecret, "session")
        assert row is not None
    return row.value


def normal_email(email: str) -> str:
    """The email, trimmed and lower-cased; raises :class:`BadInput` when malformed."""
    value = readable("an email address", email).strip().lower()
    if not EMAIL.match(value):
        raise BadInput(f"{email[:80]!r} is not an email address")
    return value


def audit(db: Session, actor: User | None, action: str, **detail: object) -> None:
    """Add an audit entry to the current transaction (the caller commits)."""
    db.add(AuditEntry(actor_id=None if actor is None else actor.id, action=action, detail=detail))


def create_user(db: Session, email: str, role: str, password: str) -> User:
    """Create an account.

    Raises:
        BadInput: Malformed email, unknown role, weak password, or the email is taken.
    """
    user = add_user(db, email, role, password)
    db.commit()
    return user


def add_user(db: Session, email: str, role: str, password: str, actor: User | None = None) -> User:
    """Add an account and its audit entry to the current transaction (not committed).

    Raises:
        BadInput: As :func:`create_user` (the transaction is rolled back when the email
            is taken).
    """
    if role not in ROLES:
        raise BadInput(f"role must be one of {ROLES}, not {role!r}")
    problem = password_problem(password)
    if problem:
        raise BadInput(problem)
    user = User(email=normal_email(email), role=role, password_hash=hash_password(password))
    db.add(user)
    try:
        db.flush()
    except IntegrityError:
        db.rollback()
        raise BadInput(f"an account for {user.email!r} exists already") from None
    audit(db, actor or user, "create_user", email=user.email, role=role)
    return user


def _failures(db: Session, key: str, since: dt.datetime) -> int:
    query = select(func.count()).where(LoginFailure.key == key, LoginFailure.at >= since)
    return int(db.scalar(query) or 0)


_DUMMY: list[str] = []


def _dummy_hash() -> str:
    """A hash to check a password against when the email has no account (same time)."""
    if not _DUMMY:
        _DUMMY.append(hash_password(new_token()))
    return _DUMMY[0]


def check_login(db: Session, email: str, password: str, ip: str) -> User:
    """The user whose email and password these are, within the login limits.

    Every password check is counted before it is made: one row per limit key
    (``email|address``, ``email``, ``address``) is committed first, then counted, so
    concurrent guesses cannot all pass the check before any is recorded (the k-th to
    commit sees at least k). A correct password removes its rows; a wrong one leaves
    them as failures. An unknown email costs the same argon2 check as a known one, so the
    time of the answer does not say which emails have accounts.

    Raises:
        BadInput: The email holds an unreadable character.
        RateLimited: Over a limit (:data:`MAX_FAILURES_PER_EMAIL_AND_IP`,
            :data:`MAX_FAILURES_PER_EMAIL`, :data:`MAX_FAILURES_PER_IP`); the right
            password too, from that address.
        Unauthorized: Wrong email or password (the message does not say which).
        Forbidden: The password is right but the account is disabled.
    """
    address = readable("an email address", email).strip().lower()[:254]
    limits = {
        f"pair:{address}|{ip}": MAX_FAILURES_PER_EMAIL_AND_IP,
        f"email:{address}": MAX_FAILURES_PER_EMAIL,
        f"ip:{ip}": MAX_FAILURES_PER_IP,
    }
    since = utcnow() - LOGIN_WINDOW
    attempt = [LoginFailure(key=key) for key in limits]
    db.add_all(attempt)
    db.commit()
    if any(_failures(db, key, since) > limit for key, limit in limits.items()):
        raise RateLimited("too many failed logins; try again in 15 minutes")
    user = db.scalar(select(User).where(User.email == address))
    if verify_password(user.password_hash if user else _dummy_hash(), password) and user:
        db.execute(delete(LoginFailure).where(LoginFailure.id.in_([r.id for r in attempt])))
        db.commit()
        if user.disabled_at is not None:
            raise Forbidden("this account is disabled: ask an admin of the study")
        return user
    db.execute(delete(LoginFailure).where(LoginFailure.at < since))
    db.commit()
    raise Unauthorized("wrong email or password")


def lock_user(db: Session, user: User) -> None:
    """Lock ``user``'s row until the transaction ends (PostgreSQL; SQLite locks writes).

    Logins, password changes and disabling of one user then run one after another,
    so two of them cannot each miss the session the other opens.
    """
    db.execute(select(User.id).where(User.id == user.id).with_for_update())


def revoke_sessions(db: Session, user: User, keep: str | None = None) -> int:
    """Revoke ``user``'s live sessions but ``keep`` (not committed); returns how many."""
    query = update(WebSession).where(WebSession.user_id == user.id, WebSession.revoked_at.is_(None))
    if keep is not None:
        query = query.where(WebSession.id != keep)
    result = db.execute(query.values(revoked_at=utcnow()))
    return int(result.rowcount)  # type: ignore[attr-defined]


def start_session(db: Session, user: User, lifetime: dt.timedelta) -> str:
    """Open a login session for ``user``, revoking the older ones; returns its id.

    A user has one live session: a stolen cookie stops working when its owner logs in
    again. The id is to be signed into a cookie.
    """
    session_id = new_token()
    lock_user(db, user)
    ended = revoke_sessions(db, user)
    db.add(WebSession(id=session_id, user_id=user.id, expires_at=utcnow() + lifetime))
    audit(db, user, "login", **({"revoked_sessions": ended} if ended else {}))
    db.commit()
    return session_id


def session_user(db: Session, session_id: str) -> User | None:
    """The user of a live session (not revoked, not expired, user not disabled), else None."""
    user: User | None = db.scalar(  # one statement: the session and its user together
        statements.session_user(), {"sid": session_id, "now": utcnow()}
    )
    return user


def session_reader(db: Session, session_id: str) -> User | None:
    """:func:`session_user` as a transient copy, for a request that only reads the user.

    The rater API's busiest routes need the user's id and role, never to change the
    row: the copy is built from one statement's columns without the ORM's loading (see
    :mod:`.fastsql`). Never change it or add it to a session.
    """
    found = fastsql.rows(db, statements.session_user(), {"sid": session_id, "now": utcnow()})
    return fastsql.entity(User, found[0]) if found else None


def end_session(db: Session, session_id: str) -> None:
    """Revoke a session: its cookie is refused from now on, even if replayed."""
    row = db.get(WebSession, session_id)
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()
        db.commit()


def invite(db: Session, admin: User, study: Study, email: str, lifetime: dt.timedelta) -> str:
    """Invite ``email`` to rate in ``study``; returns the one-use token (shown once)."""
    token = new_token()
    address = normal_email(email)
    db.add(
        Invitation(
            token_sha256=sha256(token),
            email=address,
            study_id=study.id,
            expires_at=utcnow() + lifetime,
        )
    )
    audit(db, admin, "invite", email=address, study=study.name)
    db.commit()
    return token


def open_invitation(db: Session, token: str) -> Invitation:
    """The unused, unrevoked, unexpired invitation with this token.

    Raises:
        Gone: An admin revoked it (410, saying so).
        NotFound: No such invitation, or it was used or has expired.
    """
    row = db.scalar(select(Invitation).where(Invitation.token_sha256 == sha256(token)))
    if row is not None and row.revoked_at is not None and row.used_at is None:
        raise Gone("this invitation was revoked by an admin of the study: ask them for a new one")
    if row is None or row.used_at is not None or row.expires_at <= utcnow():
        raise NotFound("this invitation does not exist, was used already or has expired")
    return row


def _claim(db: Session, invitation: Invitation, token: str) -> None:
    """Mark the invitation used, if it still is open (one ``UPDATE``; not committed).

    Of an acceptance and a revocation racing, or two acceptances, only one wins.
    """
    now = utcnow()
    claimed = db.execute(
        update(Invitation)
        .where(
            Invitation.id == invitation.id,
            Invitation.used_at.is_(None),
            Invitation.revoked_at.is_(None),
            Invitation.expires_at > now,
        )
        .values(used_at=now)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        open_invitation(db, token)  # raises, saying why
        raise Conflict("this invitation was used at the same moment")


def accept_invitation(db: Session, token: str, password: str, ip: str = "unknown") -> User:
    """Create the invited rater's account (or add an existing rater to the study).

    For an existing account the password is checked under the login limits
    (:func:`check_login`): an invitation is no way around them. The invitation is marked
    used by a conditional ``UPDATE`` in the same transaction as the account, so a
    revoked or already used invitation creates nothing.
    """
    row = open_invitation(db, token)
    user = db.scalar(select(User).where(User.email == row.email))
    if user is None:
        problem = password_problem(password)
        if problem:
            raise BadInput(problem)
    else:
        try:
            user = check_login(db, row.email, password, ip)
        except Unauthorized:
            raise Unauthorized(
                f"{row.email} has an account: give its password to join the study"
            ) from None
    _claim(db, row, token)
    if user is None:
        user = add_user(db, row.email, "rater", password)
    exists = db.scalar(
        select(Membership).where(Membership.study_id == row.study_id, Membership.user_id == user.id)
    )
    if exists is None:
        db.add(Membership(study_id=row.study_id, user_id=user.id))
    audit(db, user, "accept_invitation", study_id=row.study_id)
    db.commit()
    return user


def create_api_token(db: Session, admin: User, label: str) -> str:
    """A new API token for ``admin`` (shown once; only its hash is kept).

    Raises:
        BadInput: The label is empty or holds an unreadable character.
    """
    label = readable("a token's label", label).strip()[:200]
    if not label:
        raise BadInput("give the token a label (what it is for)")
    token = new_token()
    db.add(ApiToken(token_sha256=sha256(token), user_id=admin.id, label=label))
    audit(db, admin, "create_api_token", label=label)
    db.commit()
    return token


def token_user(db: Session, token: str) -> User | None:
    """The admin owning an API token, else None (revoked token, disabled admin: None)."""
    row = db.scalar(select(ApiToken).where(ApiToken.token_sha256 == sha256(token)))
    if row is None or row.revoked_at is not None:
        return None
    user = db.get(User, row.user_id)
    if user is None or user.role != "admin" or user.disabled_at is not None:
        return None
    return user


def membership(db: Session, study: Study, user_id: int) -> Membership:
    """The membership of user ``user_id`` in ``study``; raises :class:`NotFound`."""
    row = db.scalar(
        select(Membership).where(Membership.study_id == study.id, Membership.user_id == user_id)
    )
    if row is None:
        raise NotFound(f"user {user_id} is not a rater of study {study.name!r}")
    return row


def deactivate(db: Session, study: Study, user: User, actor: User) -> bool:
    """Stop ``user`` rating in ``study`` (``memberships.deactivated_at``); audited.

    Returns False when they were deactivated already (nothing changes).

    Raises:
        NotFound: ``user`` is not a rater of ``study``.

    Example:
        >>> from proofgames.judge.db import make_engine, migrate, session_factory
        >>> from proofgames.judge import service
        >>> engine = make_engine("sqlite://"); migrate(engine)
        >>> db = session_factory(engine)()
        >>> boss = create_user(db, "boss@example.org", "admin", "a long password")
        >>> ann = create_user(db, "ann@example.org", "rater", "a long password")
        >>> study = service.create_study(db, "s", 1); service.join(db, study, ann)
        >>> deactivate(db, study, ann, boss), deactivate(db, study, ann, boss)
        (True, False)
    """
    return _set_active(db, study, user, actor, active=False)


def reactivate(db: Session, study: Study, user: User, actor: User) -> bool:
    """Let a deactivated rater rate in ``study`` again; audited (False: was active)."""
    return _set_active(db, study, user, actor, active=True)


def membership_action(db: Session, study: Study, user: User, actor: User, action: str) -> bool:
    """Apply ``action`` (``"deactivate"`` or ``"reactivate"``); whether anything changed.

    Raises:
        NotFound: Another action (as a URL that names no route would).
    """
    if action not in ("deactivate", "reactivate"):
        raise NotFound(f"no action {action[:40]!r}: deactivate or reactivate")
    return _set_active(db, study, user, actor, action == "reactivate")


def _set_active(db: Session, study: Study, user: User, actor: User, active: bool) -> bool:
    row = membership(db, study, user.id)
    column = Membership.deactivated_at
    changed = db.execute(
        update(Membership)
        .where(Membership.id == row.id, column.is_not(None) if active else column.is_(None))
        .values(deactivated_at=None if active else utcnow())
    )
    if changed.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        return False
    action = "reactivate_rater" if active else "deactivate_rater"
    audit(db, actor, action, study=study.name, user_id=user.id, email=user.email)
    db.commit()
    return True
