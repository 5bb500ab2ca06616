"""The risk register of an assessment's organisation: its method stated, each risk at its
newest version with its owner, treatment and who accepted its residual risk; and the risks
the gap findings proposed, each with its reason and, while undecided, forms to accept,
merge or reject it. The same services as the API's `/risks` and `/risk-proposals`
endpoints, with the same scopes and tenancy."""

from __future__ import annotations

import uuid
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import HTMLResponse

from orchestrator.console.web import ConsoleRoute, Posted, Session, need, render, see_other
from orchestrator.contracts import risk_method
from orchestrator.service.apikeys import Scope
from orchestrator.service.queries import get_assessment
from orchestrator.service.risk_proposals import (
    RiskProposalView,
    Selection,
    accept_proposal,
    merge_proposal,
    reject_proposal,
    risk_proposals,
)
from orchestrator.service.risks import risk_register

Owner = Annotated[str, Form(min_length=1, max_length=256)]
Note = Annotated[str, Form(max_length=4000)]

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


@router.get("/assessments/{assessment_id}/risks", name="console_risks")
def index(
    request: Request, session: Session, assessment_id: uuid.UUID, notice: str | None = None
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    return render(
        request,
        session,
        "risks.html",
        assessment=get_assessment(actor, assessment_id),
        register=risk_register(actor, assessment_id),
        proposals=risk_proposals(actor, assessment_id),
        method_text=risk_method.method_text(),
        likelihood=risk_method.LIKELIHOOD_SCALE,
        impact=risk_method.IMPACT_SCALE,
        notice=notice,
    )


def _back(view: RiskProposalView, notice: str) -> Response:
    return see_other(f"/console/assessments/{view.assessment_id}/risks?notice={quote(notice)}")


@router.post("/risk-proposals/{proposal_id}/accept", name="console_risk_proposal_accept")
def accept(
    session: Posted,
    proposal_id: uuid.UUID,
    owner: Owner,
    controls: Annotated[str, Form(max_length=4000)] = "",
    note: Note = "",
) -> Response:
    """A new risk from the proposal; `controls`: the SCF ids kept, comma-separated (blank:
    as proposed)."""
    need(session, Scope.SIGNAL)
    kept = [c.strip() for c in controls.split(",") if c.strip()] or None
    selection = Selection(owner=owner.strip(), controls=kept)
    view = accept_proposal(session.principal.actor, proposal_id, selection, note or None)
    return _back(view, f"Accepted: {view.finding} is risk {view.risk_id} in the register.")


@router.post("/risk-proposals/{proposal_id}/merge", name="console_risk_proposal_merge")
def merge(
    session: Posted, proposal_id: uuid.UUID, risk_id: Annotated[uuid.UUID, Form()], note: Note = ""
) -> Response:
    need(session, Scope.SIGNAL)
    view = merge_proposal(session.principal.actor, proposal_id, risk_id, note or None)
    return _back(view, f"Merged: {view.finding} is linked to risk {view.risk_id}.")


@router.post("/risk-proposals/{proposal_id}/reject", name="console_risk_proposal_reject")
def reject(
    session: Posted, proposal_id: uuid.UUID, reason: Annotated[str, Form(max_length=4000)]
) -> Response:
    need(session, Scope.SIGNAL)
    view = reject_proposal(session.principal.actor, proposal_id, reason)
    return _back(view, f"Rejected: {view.finding} raises no risk in the register.")
