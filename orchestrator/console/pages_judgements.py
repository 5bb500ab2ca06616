"""A document's judgement: its kind and whether it was adopted, as the latest evidence
analysis judged them, every reviewer's amendment, and the form to override either with a
reason (the approve scope, as the API's `/documents/{id}/judgement`). The next draft
follows it; nothing already drafted changes."""

from __future__ import annotations

import uuid
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

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
from orchestrator.contracts.documents import ADOPTED, DOCUMENT_KINDS, NOT_ADOPTED
from orchestrator.service.apikeys import Scope
from orchestrator.service.document_judgements import (
    REASON_LIMIT,
    amend_document_judgement,
    document_judgement,
)
from orchestrator.service.queries import get_assessment

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

#: How the page names each adoption: a template, blank form or unsigned draft is not adopted.
ADOPTION_LABELS = {
    ADOPTED: "adopted",
    NOT_ADOPTED: "drafted, not adopted (a template, a blank form or an unsigned draft)",
}
PATH = "/assessments/{assessment_id}/documents/{document_id}/judgement"


@router.get(PATH, name="console_document_judgement")
def judgement(
    request: Request,
    session: Session,
    assessment_id: uuid.UUID,
    document_id: uuid.UUID,
    notice: str | None = None,
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    return render(
        request,
        session,
        "document_judgement.html",
        assessment=get_assessment(actor, assessment_id),
        judgement=document_judgement(actor, assessment_id, document_id),
        kinds=DOCUMENT_KINDS,
        adoptions=ADOPTION_LABELS,
        reason_limit=REASON_LIMIT,
        key=action_key(),
        notice=notice,
    )


@router.post(PATH, name="console_document_judgement_amend")
def amend(
    session: Posted,
    assessment_id: uuid.UUID,
    document_id: uuid.UUID,
    key: Annotated[str, Form(min_length=8, max_length=64)],
    reason: Annotated[str, Form(max_length=REASON_LIMIT)] = "",
    kind: Annotated[str, Form(max_length=32)] = "",
    adoption: Annotated[str, Form(max_length=32)] = "",
) -> Response:
    """Override the kind, the adoption or both; the form's key makes a double post act once."""
    need(session, Scope.APPROVE)
    if not kind and not adoption:
        raise PageError(422, "Choose", "Choose a kind, an adoption or both to override.")
    view = amend_document_judgement(
        session.principal.actor,
        assessment_id,
        document_id,
        kind=kind or None,
        adoption=adoption or None,
        reason=reason,
        idempotency_key=f"console:{key}",
    )
    notice = f"{view.filename}: the next draft judges it {view.kind or 'of no kind yet'}, " + (
        ADOPTION_LABELS.get(view.adoption or "", "adoption not judged yet")
    )
    return see_other(
        f"/console{PATH.format(assessment_id=assessment_id, document_id=document_id)}"
        f"?notice={quote(notice)}"
    )
