"""An assessment's evidence requests: issue one to someone outside the product (its link
shown once), list them with what arrived through each link, revoke one. The same
service as the API's `/evidence-requests` endpoints, with the same scopes. The issuing
form carries a key: sent again (a reload of the page showing the link), it issues
nothing and leads to the request issued the first time."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.form_once import created_once
from orchestrator.console.sessions import ConsoleSession
from orchestrator.console.web import (
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    action_key,
    need,
    render,
    see_other,
)
from orchestrator.contracts.clock import utcnow
from orchestrator.service.apikeys import Scope
from orchestrator.service.document_outcomes import list_outcomes
from orchestrator.service.evidence_requests import (
    IssuedRequest,
    create_request,
    list_requests,
    revoke_request,
)
from orchestrator.service.queries import get_assessment

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

#: The API's limits on a request (`NewEvidenceRequest`): the form states and keeps them.
REQUIREMENTS, REQUIREMENT_CHARS = 200, 300
RECIPIENT_CHARS, INSTRUCTIONS_CHARS = 256, 4000


def _page(
    request: Request,
    session: ConsoleSession,
    assessment_id: uuid.UUID,
    *,
    issued: IssuedRequest | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    actor = session.principal.actor
    assessment = get_assessment(actor, assessment_id)
    documents = {d.document_id: d for d in list_outcomes(actor, assessment_id)}
    return render(
        request,
        session,
        "evidence_requests.html",
        status_code=status_code,
        assessment=assessment,
        requests=list_requests(actor, assessment_id),
        documents=documents,
        issued=issued,
        issued_link=str(request.base_url).rstrip("/") + issued.link if issued else None,
        notice=notice,
        limits={
            "requirements": REQUIREMENTS,
            "requirement": REQUIREMENT_CHARS,
            "recipient": RECIPIENT_CHARS,
            "instructions": INSTRUCTIONS_CHARS,
        },
        today=utcnow().date().isoformat(),
        key=action_key(),
    )


@router.get("/assessments/{assessment_id}/evidence-requests", name="console_evidence_requests")
def index(
    request: Request, session: Session, assessment_id: uuid.UUID, notice: str | None = None
) -> HTMLResponse:
    need(session, Scope.READ)
    return _page(request, session, assessment_id, notice=notice)


def _requirements(text: str) -> list[str]:
    """One requirement a line ("<framework> <id>"), blank lines left out."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise PageError(422, "Not accepted", "Name at least one requirement, one a line.")
    if len(lines) > REQUIREMENTS:
        raise PageError(
            422, "Not accepted", f"A request names at most {REQUIREMENTS} requirements."
        )
    long = [line for line in lines if len(line) > REQUIREMENT_CHARS]
    if long:
        raise PageError(
            422,
            "Not accepted",
            f"A requirement is at most {REQUIREMENT_CHARS} characters: {long[0][:60]}…",
        )
    return lines


@router.post(
    "/assessments/{assessment_id}/evidence-requests", name="console_evidence_request_create"
)
def create(
    request: Request,
    session: Posted,
    assessment_id: uuid.UUID,
    key: Annotated[str, Form(min_length=8, max_length=64)],
    requirements: Annotated[str, Form(max_length=REQUIREMENTS * (REQUIREMENT_CHARS + 2))],
    recipient: Annotated[str, Form(min_length=1, max_length=RECIPIENT_CHARS)],
    instructions: Annotated[str, Form(min_length=1, max_length=INSTRUCTIONS_CHARS)],
    due_on: Annotated[date, Form()],
    link_expires_at: Annotated[datetime | None, Form()] = None,
) -> Response:
    """Issue a request: the page that answers shows its link, this once. The same form
    sent again answers 303 to the request issued the first time."""
    need(session, Scope.SIGNAL)
    if not recipient.strip() or not instructions.strip():
        raise PageError(422, "Not accepted", "Name the recipient and write the instructions.")
    asked = _requirements(requirements)
    issued: list[IssuedRequest] = []

    def issue() -> str:
        issued.append(
            create_request(
                session.principal.actor,
                assessment_id,
                requirements=asked,
                recipient=recipient.strip(),
                instructions=instructions,
                due_on=due_on,
                link_expires_at=link_expires_at,
            )
        )
        made = issued[0].request
        notice = (
            f"This form was sent before: the request to {made.recipient} was issued then, "
            "and its link shown that once. Nothing new was issued."
        )
        return (
            f"/console/assessments/{assessment_id}/evidence-requests"
            f"?notice={quote(notice)}#request-{made.id}"
        )

    fields = {
        "assessment_id": str(assessment_id),
        "requirements": asked,
        "recipient": recipient.strip(),
        "instructions": instructions,
        "due_on": due_on.isoformat(),
        "link_expires_at": link_expires_at.isoformat() if link_expires_at else None,
    }
    answered = created_once(session.principal, "evidence-request", key, fields, issue)
    if answered.replayed:
        return see_other(answered.location)
    return _page(request, session, assessment_id, issued=issued[0], status_code=201)


@router.post("/evidence-requests/{request_id}/revoke", name="console_evidence_request_revoke")
def revoke(session: Posted, request_id: uuid.UUID) -> Response:
    need(session, Scope.SIGNAL)
    view = revoke_request(session.principal.actor, request_id)
    notice = f"The request to {view.recipient} is revoked: its link takes nothing more."
    return see_other(
        f"/console/assessments/{view.assessment_id}/evidence-requests?notice={quote(notice)}"
    )
