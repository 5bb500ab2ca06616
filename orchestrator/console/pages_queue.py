"""My queue: the approval waits this person can act on, those that need another reviewer
(they amended or asked for the version), and who claimed each, with filters; and the
evidence this person keeps that expires within the reminder window or has expired (what
the evidence sweep reminded them of)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from orchestrator.config.settings import get_settings
from orchestrator.console.web import ConsoleRoute, Session, render
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR
from orchestrator.service.evidence_life import owner_queue
from orchestrator.service.review_queue import my_queue

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


@router.get("/queue", name="console_queue")
def queue(
    request: Request, session: Session, gate: str | None = None, assessment: uuid.UUID | None = None
) -> HTMLResponse:
    gates = [kind.value for kind in APPROVAL_WAIT_FOR]
    chosen = gate if gate in gates else None
    items = my_queue(session.principal, kind=chosen, assessment_id=assessment)
    remind_days = get_settings().sweeps.evidence_remind_days
    principal = session.principal
    evidence = owner_queue(principal.actor, principal.principal, within_days=remind_days)
    return render(
        request,
        session,
        "queue.html",
        items=items,
        gates=gates,
        gate=chosen,
        assessment=assessment,
        kinds=ArtifactKind,
        mine=[i for i in items if not i.needs_another_reviewer],
        others=[i for i in items if i.needs_another_reviewer],
        evidence=evidence,
        remind_days=remind_days,
        today=utcnow().date(),
    )
