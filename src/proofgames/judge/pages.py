"""The judge server's HTML pages for everyone: log in and out, invitations, the queue.

Every form carries a CSRF token; every page is rendered by Jinja2 with autoescaping,
so text from raters, admins or the verifier shows as text, never as markup. The queue
shows one step at a time; answering it through htmx swaps in the next step, and the
same form works without JavaScript (post, then redirect).
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy.orm import Session

from . import accounts, handout, scoring, service
from .errors import BadInput, Conflict, JudgeError, whole_number
from .models import Study, User
from .web import (
    NONCE_COOKIE,
    SESSION_COOKIE,
    Id,
    check_csrf,
    cookie_user,
    csrf_binding,
    get_db,
    require,
    runtime,
    session_id,
    set_session_cookie,
)

router = APIRouter()
Db = Annotated[Session, Depends(get_db)]
Text = Annotated[str, Form(max_length=20_000)]
Token = Annotated[str, Form(max_length=200)]


def templates(request: Request) -> Jinja2Templates:
    """The app's templates (kept on ``app.state``)."""
    value: Jinja2Templates = request.app.state.templates
    return value


def page(
    request: Request, name: str, user: User | None, status: int = 200, **context: Any
) -> Response:
    """Render a template with the user, a CSRF token and the given context.

    Before login the CSRF token is bound to a fresh signed nonce cookie.
    """
    binding = csrf_binding(request)
    nonce = None
    if binding is None:
        nonce = binding = secrets.token_urlsafe(16)
    keys = runtime(request).keys
    context.update(user=user, csrf=keys.csrf_token(binding))
    response = templates(request).TemplateResponse(request, name, context, status_code=status)
    if nonce is not None:
        response.set_cookie(
            NONCE_COOKIE,
            keys.sign_nonce(nonce),
            httponly=True,
            samesite="strict",
            secure=runtime(request).settings.secure_cookies,
        )
    return response


def logged_in(request: Request, db: Db) -> User:
    """The logged-in user (dependency); not logged in: 401, shown as a login redirect."""
    return require(cookie_user(request, db))


LoggedIn = Annotated[User, Depends(logged_in)]


@router.get("/", response_class=HTMLResponse)
def home(request: Request, db: Db) -> Response:
    """To the admin's studies, the rater's queue, or the login page."""
    user = cookie_user(request, db)
    if user is None:
        return RedirectResponse("/login", status_code=303)
    return RedirectResponse("/admin" if user.role == "admin" else "/queue", status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, db: Db) -> Response:
    """The login form."""
    return page(request, "login.html", cookie_user(request, db), email="")


@router.post("/login", response_class=HTMLResponse)
def login(request: Request, db: Db, email: Token, password: Token, csrf_token: Token) -> Response:
    """Check the credentials (rate-limited) and start a session."""
    check_csrf(request, csrf_token)
    host = request.client.host if request.client else "unknown"
    try:
        user = accounts.check_login(db, email, password, ip=host)
    except JudgeError as exc:
        return page(request, "login.html", None, exc.status, error=str(exc), email=email)
    sid = accounts.start_session(db, user, runtime(request).settings.session_lifetime)
    response = RedirectResponse("/admin" if user.role == "admin" else "/queue", status_code=303)
    set_session_cookie(request, response, sid)
    return response


@router.post("/logout")
def logout(request: Request, db: Db, csrf_token: Token) -> Response:
    """End the session server-side (a replayed cookie is refused) and clear the cookie."""
    check_csrf(request, csrf_token)
    sid = session_id(request)
    if sid is not None:
        accounts.end_session(db, sid)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


@router.get("/invite/{token}", response_class=HTMLResponse, name="invitation_page")
def invitation_page(request: Request, token: str, db: Db) -> Response:
    """The invitation: choose a password to join the study."""
    invitation = accounts.open_invitation(db, token)
    study = db.get(Study, invitation.study_id)
    return page(request, "invitation.html", None, invitation=invitation, study=study, token=token)


@router.post("/invite/{token}", response_class=HTMLResponse)
def accept(request: Request, token: str, db: Db, password: Token, csrf_token: Token) -> Response:
    """Create the rater's account from the invitation and log them in."""
    check_csrf(request, csrf_token)
    host = request.client.host if request.client else "unknown"
    try:
        user = accounts.accept_invitation(db, token, password, ip=host)
    except BadInput as exc:
        invitation = accounts.open_invitation(db, token)
        study = db.get(Study, invitation.study_id)
        return page(
            request,
            "invitation.html",
            None,
            422,
            error=str(exc),
            invitation=invitation,
            study=study,
            token=token,
        )
    sid = accounts.start_session(db, user, runtime(request).settings.session_lifetime)
    response = RedirectResponse("/queue", status_code=303)
    set_session_cookie(request, response, sid)
    return response


def _queue_context(db: Session, user: User, after: int | None = None) -> dict[str, Any]:
    """What the queue shows: the rater's next turn, and feedback on an earlier answer."""
    shown = None
    if after is not None:  # the feedback of the rater's own answer to this assignment
        try:
            assignment, question = service.own_assignment(db, user, after)
        except JudgeError:
            assignment = None
        answer = None if assignment is None else service.answer_of(db, assignment)
        if answer is not None and assignment is not None:
            shown = scoring.feedback(service.get_study(db, question.study_id), question, answer)
    turn = handout.next_turn(db, user)
    item = None
    if turn.assignment is not None and turn.question is not None:
        item = {
            "assignment": turn.assignment,
            "question": turn.question,
            "shown": service.shown_sha256(turn.question.payload),
        }
    return {"turn": turn, "item": item, "feedback": shown}


@router.get("/queue", response_class=HTMLResponse)
def queue(request: Request, user: LoggedIn, db: Db, after: int | None = None) -> Response:
    """The rater's queue: their next step to judge, with its inputs beside it.

    ``after`` names the assignment just answered, whose feedback (if the study gives
    any) is shown above the next step.
    """
    after = after if after is not None and 1 <= after <= 2**31 - 1 else None
    return page(request, "queue.html", user, notice=None, **_queue_context(db, user, after))


@router.post("/queue/consent/{study_id}", response_class=HTMLResponse)
def consent(request: Request, study_id: Id, user: LoggedIn, db: Db, csrf_token: Token) -> Response:
    """Accept a study's consent text (having read its instructions), then go on."""
    check_csrf(request, csrf_token)
    handout.consent(db, user, service.get_study(db, study_id))
    return RedirectResponse("/queue", status_code=303)


def _reply(answer: str, confidence: str, probability: str) -> dict[str, Any]:
    """The answer's fields from the form (a probability is given in percent)."""
    if answer not in ("", "yes", "no", "cant_tell"):
        raise BadInput("choose yes, no or can't tell")
    level = None if confidence == "" else whole_number(confidence)
    if confidence != "" and level is None:
        raise BadInput("confidence must be 1 to 5")
    percent = None if probability == "" else whole_number(probability)
    if probability != "" and (percent is None or percent > 100):
        raise BadInput("the probability must be a whole percentage from 0 to 100")
    if answer == "" and percent is None:
        raise BadInput("choose yes, no or can't tell")
    return {
        "yes": {"yes": True, "no": False}.get(answer),
        "confidence": None if answer == "cant_tell" else level,
        "probability": None if percent is None else percent / 100,
    }


@router.post("/queue/{assignment_id}/answer", response_class=HTMLResponse)
def answer(
    request: Request,
    assignment_id: Id,
    user: LoggedIn,
    db: Db,
    csrf_token: Token,
    shown_sha256: Token,
    answer: Annotated[str, Form(max_length=10)] = "",
    confidence: Annotated[str, Form(max_length=10)] = "",
    probability: Annotated[str, Form(max_length=10)] = "",
    rationale: Annotated[str, Form(max_length=service.MAX_RATIONALE)] = "",
    elapsed_ms: Annotated[str, Form(max_length=20)] = "",
) -> Response:
    """Record the answer (committed first), then show its feedback and the next step."""
    check_csrf(request, csrf_token)
    elapsed = whole_number(elapsed_ms)
    if elapsed_ms != "" and elapsed is None:
        raise BadInput("elapsed_ms must be a whole number")
    try:
        status = service.submit_answer(
            db,
            user,
            assignment_id,
            shown=shown_sha256,
            elapsed_ms=elapsed,
            rationale=rationale,
            **_reply(answer, confidence, probability),
        )
    except Conflict as exc:  # closed meanwhile: say so, and go on to the next step
        refused, notice = True, f"Not recorded: {exc}."
    else:
        refused = False
        notice = "Answer saved." if status == "recorded" else "That answer was saved already."
    if request.headers.get("hx-request") == "true":
        context = _queue_context(db, user, None if refused else assignment_id)
        return page(request, "_item.html", user, notice=notice, **context)
    if refused:
        return page(request, "queue.html", user, 409, notice=notice, **_queue_context(db, user))
    return RedirectResponse(f"/queue?after={assignment_id}", status_code=303)


@router.post("/queue/{assignment_id}/skip", response_class=HTMLResponse)
def skip(
    request: Request, assignment_id: Id, user: LoggedIn, db: Db, csrf_token: Token
) -> Response:
    """Pass on this step (its slot goes to another rater now), then show the next one."""
    check_csrf(request, csrf_token)
    try:
        handout.skip(db, user, assignment_id)
        notice = "Skipped."
    except Conflict as exc:
        notice = f"Not skipped: {exc}."
    if request.headers.get("hx-request") == "true":
        return page(request, "_item.html", user, notice=notice, **_queue_context(db, user))
    return RedirectResponse("/queue", status_code=303)
