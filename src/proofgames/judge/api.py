"""The judge server's JSON API (``/api/v1``).

Two kinds of caller:

* the verifier (or an admin script) with ``Authorization: Bearer <API token>``: create
  studies, invite raters, post questions and wait for their answers, export;
* a rater's program with the session cookie from ``POST /api/v1/login`` and the CSRF
  token it returns in an ``X-CSRF-Token`` header: fetch and answer assignments (what
  the fault test and the load benchmark's simulated raters use).

Every body is validated strictly (unknown fields, wrong types: 422 naming the field).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from sqlalchemy.orm import Session

from ..errors import OracleError
from ..judges.interface import StepQuestion
from ..reporting.json import dumps
from . import accounts, design, export, handout, scoring, service
from .errors import BadInput
from .models import User
from .web import (
    MAX_ID,
    Id,
    JsonRoute,
    bearer_admin,
    briefly,
    check_csrf,
    cookie_reader,
    get_db,
    json_reply,
    require,
    runtime,
    set_session_cookie,
)

router = APIRouter(prefix="/api/v1", route_class=JsonRoute)
Db = Annotated[Session, Depends(get_db)]
STRICT = ConfigDict(strict=True, extra="forbid")
ID: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=1, le=MAX_ID)])
T = TypeVar("T")


class LoginBody(BaseModel):
    """``POST /api/v1/login``."""

    model_config = STRICT
    email: str = Field(max_length=254)
    password: str = Field(max_length=200)


class StudyBody(BaseModel):
    """``POST /api/v1/studies``."""

    model_config = STRICT
    name: str = Field(min_length=1, max_length=200)
    k: int = Field(ge=1, le=service.MAX_K)


class InviteBody(BaseModel):
    """``POST /api/v1/studies/{id}/invitations``."""

    model_config = STRICT
    email: str = Field(max_length=254)


class QuestionBody(BaseModel):
    """``POST /api/v1/questions``: one step question of one debate.

    ``kind`` is ``work`` (the default) or, for a question the study's designer knows
    the answer to, ``gold``, ``attention``, ``training`` or ``qualification``, with its
    ``expected`` answer and the ``explanation`` shown as feedback.
    """

    model_config = STRICT
    study: str = Field(min_length=1, max_length=200)
    debate_id: str = Field(min_length=1, max_length=service.MAX_DEBATE_ID)
    question: dict[str, Any]
    k: int | None = Field(default=None, ge=1, le=service.MAX_K)
    kind: str = Field(default="work", max_length=20)
    expected: bool | None = None
    explanation: str = Field(default="", max_length=design.MAX_TEXT)


class DesignBody(BaseModel):
    """``PATCH /api/v1/studies/{id}/design``: the fields of the design to change.

    Times are ISO 8601; one without a zone is read as UTC.
    """

    model_config = STRICT
    consent: str | None = Field(default=None, max_length=design.MAX_TEXT)
    instructions: str | None = Field(default=None, max_length=design.MAX_TEXT)
    gold_rate: float | None = Field(default=None, ge=0, le=design.MAX_GOLD_RATE)
    pass_mark: float | None = Field(default=None, ge=0, le=1)
    quota: int | None = Field(default=None, ge=1, le=1_000_000)
    one_step_per_debate: bool | None = None
    ordering: str | None = Field(default=None, max_length=10)
    probability: bool | None = None
    feedback: bool | None = None
    starts_at: Annotated[dt.datetime | None, Field(strict=False)] = None
    ends_at: Annotated[dt.datetime | None, Field(strict=False)] = None
    pay_cents_per_hour: int | None = Field(default=None, ge=1, le=1_000_000)


class AnswerBody(BaseModel):
    """``POST /api/v1/assignments/{id}/answer``."""

    model_config = STRICT
    yes: bool | None  # null: can't tell
    confidence: int | None = Field(default=None, ge=1, le=5)
    shown_sha256: str = Field(min_length=64, max_length=64)
    elapsed_ms: int | None = Field(default=None, ge=0, le=10**9)
    probability: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    rationale: str = Field(default="", max_length=service.MAX_RATIONALE)


def admin(request: Request, db: Db) -> User:
    """The admin calling with an API token (dependency)."""
    return bearer_admin(request, db)


async def rater(request: Request, db: Db) -> User:
    """The logged-in rater (session cookie) whose CSRF header is right (dependency).

    The session's lookup is one indexed read: on SQLite it runs on the event loop (a
    thread hop costs more than the read), on PostgreSQL in a worker thread. The user is
    a read-only copy (:func:`.web.cookie_reader`): these routes never change it.
    """
    user = require(await briefly(db, cookie_reader, request, db))
    if request.method == "POST":
        check_csrf(request, None)
    return user


Admin = Annotated[User, Depends(admin)]
Rater = Annotated[User, Depends(rater)]


# The rater's routes first: the router tries its routes in order, and these carry the load.
def _stage(stage: handout.Stage) -> dict[str, Any]:
    return {
        "study": stage.study.id,
        "name": stage.name,
        "done": stage.done,
        "total": stage.total,
        "more": stage.more,
        "note": stage.note,
    }


def _as_rater(request: Request, work: Callable[..., T], *args: Any) -> T:
    """``work(db, user, *args)`` for the logged-in rater, in one session (a worker thread).

    What the :data:`Rater` dependency checks, in the same order (session: 401; a post's
    CSRF header: 403), for the two routes that carry the load: FastAPI's dependency
    machinery cost them more than their SQL.
    """
    with runtime(request).sessions() as db:
        user = require(cookie_reader(request, db))
        if request.method == "POST":
            check_csrf(request, None)
        return work(db, user, *args)


def _invalid(error: ValidationError, *where: str) -> RequestValidationError:
    return RequestValidationError([{**e, "loc": (*where, *e["loc"])} for e in error.errors()])


def _path_id(request: Request, name: str) -> int:
    """Path parameter ``name`` as an :data:`.web.Id` (else 422, as FastAPI's would be)."""
    try:
        return ID.validate_python(request.path_params[name])
    except ValidationError as error:
        raise _invalid(error, "path", name) from None


@router.get("/assignments/next")
async def next_assignment(request: Request) -> Response:
    """The rater's next assignment (``{"assignment": null}`` when there is none now).

    ``stage`` says where the rater stands (consent, training, qualification, work); at
    ``consent`` the study's consent text and instructions come with it, to be accepted
    with ``POST /api/v1/studies/{id}/consent``. ``waiting`` says why there is nothing.
    """
    return json_reply(await run_in_threadpool(_as_rater, request, _next_reply))


def _next_reply(db: Session, user: User) -> dict[str, Any]:
    turn = handout.next_turn(db, user)
    out: dict[str, Any] = {
        "assignment": None,
        "stage": None if turn.stage is None else _stage(turn.stage),
        "waiting": [_stage(s) for s in turn.waiting],
    }
    if turn.stage is not None and turn.stage.name == "consent":
        study = turn.stage.study
        out["consent"] = {"consent": study.consent, "instructions": study.instructions}
    if turn.assignment is not None and turn.question is not None:
        out["assignment"] = turn.assignment.id
        out["question"] = turn.question.payload
        out["shown_sha256"] = service.shown_sha256(turn.question.payload)
    return out


@router.post("/studies/{study_id}/consent")
def consent(study_id: Id, user: Rater, db: Db) -> dict[str, Any]:
    """Accept a study's consent text (having read its instructions)."""
    handout.consent(db, user, service.get_study(db, study_id))
    return {"study": study_id, "status": "consented"}


@router.get("/assignments/{assignment_id}")
def get_assignment(assignment_id: Id, user: Rater, db: Db) -> dict[str, Any]:
    """One of the rater's own assignments (anyone else's: 404)."""
    assignment, question = service.own_assignment(db, user, assignment_id)
    return {
        "assignment": assignment.id,
        "question": question.payload,
        "shown_sha256": service.shown_sha256(question.payload),
        "closed": question.closed,
    }


@router.post("/assignments/{assignment_id}/answer")
async def answer(request: Request) -> Response:
    """Answer an assignment (body: :class:`AnswerBody`); committed before the reply.

    A retry returns ``duplicate``. ``feedback`` is what the study shows after this step
    (None for most steps).
    """
    raw = await request.body()
    return json_reply(await run_in_threadpool(_as_rater, request, _answer, request, raw))


def _answer(db: Session, user: User, request: Request, raw: bytes) -> dict[str, Any]:
    assignment_id = _path_id(request, "assignment_id")
    try:
        body = AnswerBody.model_validate_json(raw or b"null")
    except ValidationError as error:
        raise _invalid(error, "body") from None
    receipt = service.record_answer(
        db,
        user,
        assignment_id,
        yes=body.yes,
        confidence=body.confidence,
        shown=body.shown_sha256,
        elapsed_ms=body.elapsed_ms,
        probability=body.probability,
        rationale=body.rationale,
    )
    shown, question = None, receipt.question
    if question.kind != "work":  # only steps with a known answer have feedback
        stored = service.answer_of(db, receipt.assignment)
        shown = None if stored is None else scoring.feedback(receipt.study, question, stored)
    return {"assignment": assignment_id, "status": receipt.status, "feedback": shown}


@router.post("/assignments/{assignment_id}/skip")
def skip(assignment_id: Id, user: Rater, db: Db) -> dict[str, Any]:
    """Pass on an assignment: its slot is free for another rater at once (409 if answered)."""
    handout.skip(db, user, assignment_id)
    return {"assignment": assignment_id, "status": "skipped"}


@router.post("/login")
def login(body: LoginBody, request: Request, response: Response, db: Db) -> dict[str, Any]:
    """Log in; sets the session cookie and returns the CSRF token for later posts."""
    rt = runtime(request)
    host = request.client.host if request.client else "unknown"
    user = accounts.check_login(db, body.email, body.password, ip=host)
    sid = accounts.start_session(db, user, rt.settings.session_lifetime)
    set_session_cookie(request, response, sid)
    return {"user": user.email, "role": user.role, "csrf_token": rt.keys.csrf_token(sid)}


@router.post("/studies", status_code=201)
def create_study(body: StudyBody, user: Admin, db: Db) -> dict[str, Any]:
    """Create a study."""
    study = service.create_study(db, body.name, body.k, actor=user)
    return {"id": study.id, "name": study.name, "k": study.k}


@router.post("/studies/{study_id}/invitations", status_code=201)
def invite(study_id: Id, body: InviteBody, request: Request, user: Admin, db: Db) -> dict[str, str]:
    """Invite a rater to a study; returns the one-use link (shown only here)."""
    study = service.get_study(db, study_id)
    lifetime = runtime(request).settings.invitation_days
    token = accounts.invite(db, user, study, body.email, export.days(lifetime))
    return {"token": token, "url": str(request.url_for("invitation_page", token=token))}


@router.post("/questions")
def post_question(body: QuestionBody, user: Admin, db: Db, response: Response) -> dict[str, Any]:
    """Post a question (idempotent: the same debate and question returns the stored one)."""
    try:
        question = StepQuestion.from_dict(body.question)
    except OracleError as exc:
        raise BadInput(str(exc)) from None
    study = service.study_by_name(db, body.study)
    row, created = service.post_question(
        db, study, body.debate_id, question, body.k, actor=user,
        kind=body.kind, expected=body.expected, explanation=body.explanation,
    )  # fmt: skip
    response.status_code = 201 if created else 200
    return service.question_result(db, study, row.debate_id, row.question_id)


def _result(request: Request, study: str, debate_id: str, question_id: str) -> dict[str, Any]:
    with runtime(request).sessions() as db:
        found = service.study_by_name(db, study)
        return service.question_result(db, found, debate_id, question_id)


@router.get("/questions")
async def question_result(
    request: Request,
    study: Annotated[str, Query(max_length=200)],
    debate_id: Annotated[str, Query(max_length=service.MAX_DEBATE_ID)],
    question_id: Annotated[str, Query(max_length=64)],
    wait: Annotated[float, Query(ge=0.0, le=3600.0, allow_inf_nan=False)] = 0.0,
) -> dict[str, Any]:
    """A question's answers; with ``wait`` > 0, held until it closes or ``wait`` s pass."""
    rt = runtime(request)
    with rt.sessions() as db:
        await run_in_threadpool(bearer_admin, request, db)
    deadline = time.monotonic() + min(max(wait, 0.0), rt.settings.long_poll_s)
    while True:
        result = await run_in_threadpool(_result, request, study, debate_id, question_id)
        if result["closed"] or time.monotonic() >= deadline:
            return result
        await asyncio.sleep(0.25)


@router.get("/studies/{study_id}/export")
def export_study(
    study_id: Id, user: Admin, db: Db, format: str = "jsonl", emails: bool = False
) -> Response:
    """Every answer of a study, as JSONL, CSV or Parquet."""
    study = service.get_study(db, study_id)
    body, media = export.render(export.rows(db, study, emails=emails), format)
    return Response(body, media_type=media)


@router.patch("/studies/{study_id}/design")
def set_design(study_id: Id, body: DesignBody, user: Admin, db: Db) -> dict[str, Any]:
    """Change a study's design (only the fields given); returns the whole design."""
    study = service.get_study(db, study_id)
    changes = body.model_dump(exclude_unset=True)
    for name in ("starts_at", "ends_at"):
        value = changes.get(name)
        if value is not None and value.tzinfo is not None:
            changes[name] = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return _design(design.set_design(db, study, actor=user, **changes))


def _design(value: design.Design) -> dict[str, Any]:
    out = dataclasses.asdict(value)
    for name in ("starts_at", "ends_at"):
        out[name] = None if out[name] is None else out[name].isoformat() + "Z"
    return out


@router.get("/studies/{study_id}/raters")
def raters(
    study_id: Id, user: Admin, db: Db, format: str = "jsonl", emails: bool = False
) -> Response:
    """One row per rater: checks, qualification, calibration, server-measured hours, pay."""
    study = service.get_study(db, study_id)
    rows = scoring.rater_rows(db, study, emails=emails)
    if format == "csv":  # a table: the calibration bins as JSON text
        rows = [{**r, "calibration": dumps(r["calibration"])} for r in rows]
    body, media = export.render(rows, format)
    return Response(body, media_type=media)
