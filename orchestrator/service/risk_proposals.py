"""Risks proposed by gap findings, held apart from the register until a person decides.

The gap analysis proposes, for each finding it does not dismiss, the risk the finding
leaves (workers.analysis.risk_proposal): stored here as a proposal with its reason (which
requirement, which finding, what is missing), never as a register entry. A person accepts
it (a new risk in the register, with the controls and requirements they select, linked to
the finding), merges it (the finding linked to a risk already held) or rejects it (with a
reason). Each decision is audited on the proposing run. A finding is proposed once per
assessment: a later gap analysis refreshes an undecided proposal and leaves a decided one.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound, RiskProposalDecided
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.risk_method import ProposalStatus, TreatmentOption
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Assessment, WorkflowRun
from orchestrator.db.risk_models import Risk, RiskProposal
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import aware
from orchestrator.engine.audit_rows import append_audit
from orchestrator.service.producer import load_assessment
from orchestrator.service.risks import (
    RequirementRef,
    RiskContent,
    check_content,
    load_risk,
    newest_version,
    record_risk,
)
from orchestrator.service.risks import view_of as risk_view


class RiskProposalView(BaseModel):
    proposal_id: uuid.UUID
    assessment_id: uuid.UUID
    run_id: uuid.UUID
    gap_version: int
    finding: str
    status: ProposalStatus
    proposed: dict[str, Any]
    """The proposed risk: title, asset, threat, vulnerability, likelihood, impact and their
    basis, treatment, plan, controls, requirements."""
    reason: dict[str, Any]
    """Why: the requirement, the finding, its severity and evidence state, what is missing."""
    risk_id: uuid.UUID | None
    decision_note: str | None
    decided_by: str | None
    decided_at: datetime | None
    created_at: datetime


class Selection(BaseModel):
    """What the accepting person keeps or changes of the proposal (None: as proposed)."""

    owner: str
    title: str | None = None
    likelihood: int | None = None
    impact: int | None = None
    treatment_plan: str | None = None
    controls: list[str] | None = None
    requirements: list[RequirementRef] | None = None


def view_of(row: RiskProposal) -> RiskProposalView:
    content = dict(row.content)
    reason = content.pop("reason", {})
    return RiskProposalView(
        proposal_id=row.id,
        assessment_id=row.assessment_id,
        run_id=row.run_id,
        gap_version=row.gap_version,
        finding=row.finding,
        status=ProposalStatus(row.status),
        proposed=content,
        reason=reason,
        risk_id=row.risk_id,
        decision_note=row.decision_note,
        decided_by=row.decided_by,
        decided_at=aware(row.decided_at) if row.decided_at else None,
        created_at=aware(row.created_at),
    )


def store_proposals(
    session: Session, run: WorkflowRun, gap_version: int, gaps: list[dict[str, Any]]
) -> int:
    """The gap analysis's proposals, in the drafting job's transaction: new findings are
    proposed, undecided ones refreshed, decided ones left as decided. How many are new."""
    proposals = {
        str(p["finding"]): p
        for g in gaps
        if isinstance(g, dict) and isinstance(p := g.get("risk_proposal"), dict)
    }
    if not proposals:
        return 0
    held = {
        row.finding: row
        for row in session.scalars(
            select(RiskProposal).where(
                RiskProposal.assessment_id == run.assessment_id,
                RiskProposal.finding.in_(proposals),
            )
        )
    }
    now, added = utcnow(), 0
    for finding, content in proposals.items():
        row = held.get(finding)
        if row is None:
            session.add(
                RiskProposal(
                    tenant_id=run.tenant_id,
                    organization_id=run.organization_id,
                    assessment_id=run.assessment_id,
                    run_id=run.id,
                    gap_version=gap_version,
                    finding=finding,
                    content=content,
                    status=ProposalStatus.PROPOSED.value,
                    created_at=now,
                    updated_at=now,
                )
            )
            added += 1
        elif row.status == ProposalStatus.PROPOSED.value:
            row.run_id, row.gap_version, row.content, row.updated_at = (
                run.id,
                gap_version,
                content,
                now,
            )
    session.flush()
    return added


@retry_busy
def risk_proposals(
    actor: Actor, assessment_id: uuid.UUID, status: ProposalStatus | None = None
) -> list[RiskProposalView]:
    """The assessment's proposals, undecided first, then by finding."""
    with read_transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        query = select(RiskProposal).where(RiskProposal.assessment_id == assessment.id)
        if status is not None:
            query = query.where(RiskProposal.status == status.value)
        rows = session.scalars(query).all()
        views = [view_of(row) for row in rows]
    undecided = ProposalStatus.PROPOSED
    return sorted(views, key=lambda v: (v.status is not undecided, v.finding))


def get_proposal(actor: Actor, proposal_id: uuid.UUID) -> RiskProposalView:
    with read_transaction() as session:
        return view_of(_load(session, actor, proposal_id))


def _load(
    session: Session, actor: Actor, proposal_id: uuid.UUID, *, lock: bool = False
) -> RiskProposal:
    row = session.get(RiskProposal, proposal_id, with_for_update=lock)
    if row is None or row.tenant_id != actor.tenant_id or not actor.sees(row.organization_id):
        raise NotFound(f"risk proposal {proposal_id} not found")
    return row


def _undecided(row: RiskProposal) -> None:
    if row.status != ProposalStatus.PROPOSED.value:
        raise RiskProposalDecided(
            f"risk proposal {row.id} was already {row.status} by {row.decided_by}",
            decided=row.status,
            risk_id=str(row.risk_id) if row.risk_id else None,
        )


def _decide(
    session: Session,
    actor: Actor,
    row: RiskProposal,
    status: ProposalStatus,
    note: str | None,
    event: AuditEventType,
) -> RiskProposalView:
    now = utcnow()
    row.status, row.decision_note, row.decided_by = status.value, note, actor.actor_id
    row.decided_at = row.updated_at = now
    session.flush()
    run = session.get(WorkflowRun, row.run_id)
    if run is not None:
        details = {
            "proposal_id": str(row.id),
            "finding": row.finding,
            "status": row.status,
            "risk_id": str(row.risk_id) if row.risk_id else None,
            "note": note,
        }
        append_audit(session, run, event, None, details, now, actor.actor_id)
    return view_of(row)


def content_for(row: RiskProposal, selection: Selection) -> RiskContent:
    """The register risk an acceptance records: the proposal, as the person selected."""
    proposed = row.content
    refs = [RequirementRef(**r) for r in proposed.get("requirements", [])]
    return RiskContent(
        title=selection.title or str(proposed["title"]),
        asset=str(proposed["asset"]),
        threat=str(proposed["threat"]) or "(the finding states no effect)",
        vulnerability=str(proposed["vulnerability"]) or "(the finding states no condition)",
        likelihood=selection.likelihood or int(proposed["likelihood"]),
        impact=selection.impact or int(proposed["impact"]),
        owner=selection.owner,
        treatment=TreatmentOption(str(proposed.get("treatment", "modify"))),
        treatment_plan=(
            selection.treatment_plan
            if selection.treatment_plan is not None
            else str(proposed.get("treatment_plan", ""))
        ),
        controls=selection.controls if selection.controls is not None else proposed["controls"],
        requirements=selection.requirements if selection.requirements is not None else refs,
    )


@retry_busy
def accept_proposal(
    actor: Actor, proposal_id: uuid.UUID, selection: Selection, note: str | None = None
) -> RiskProposalView:
    """A new risk in the register from the proposal, linked to its finding."""
    with read_transaction() as session:
        content = content_for(_load(session, actor, proposal_id), selection)
    check_content(content)
    with transaction() as session:
        row = _load(session, actor, proposal_id, lock=True)
        _undecided(row)
        assessment = session.get(Assessment, row.assessment_id)
        assert assessment is not None  # a proposal's assessment is a foreign key
        risk = record_risk(session, actor, assessment, content)
        row.risk_id = risk.risk_id
        event = AuditEventType.LIFECYCLE_WORKFLOW_RISK_PROPOSAL_ACCEPTED
        return _decide(session, actor, row, ProposalStatus.ACCEPTED, note, event)


@retry_busy
def merge_proposal(
    actor: Actor, proposal_id: uuid.UUID, risk_id: uuid.UUID, note: str | None = None
) -> RiskProposalView:
    """The proposal's finding linked to a risk the organisation's register holds."""
    with transaction() as session:
        row = _load(session, actor, proposal_id, lock=True)
        _undecided(row)
        risk = load_risk(session, actor, risk_id)
        if risk.organization_id != row.organization_id:
            raise InvalidInput(f"risk {risk_id} is not in the register of {row.organization_id!r}")
        row.risk_id = risk.id
        event = AuditEventType.LIFECYCLE_WORKFLOW_RISK_PROPOSAL_MERGED
        return _decide(session, actor, row, ProposalStatus.MERGED, note, event)


@retry_busy
def reject_proposal(actor: Actor, proposal_id: uuid.UUID, reason: str) -> RiskProposalView:
    """The proposal set aside, with the person's reason; nothing enters the register."""
    if not reason.strip():
        raise InvalidInput("a rejection states its reason", field="reason")
    with transaction() as session:
        row = _load(session, actor, proposal_id, lock=True)
        _undecided(row)
        event = AuditEventType.LIFECYCLE_WORKFLOW_RISK_PROPOSAL_REJECTED
        return _decide(session, actor, row, ProposalStatus.REJECTED, reason, event)


def finding_risks(session: Session, assessment_id: uuid.UUID) -> list[dict[str, Any]]:
    """The register's risks a person accepted from, or merged with, the assessment's gap
    findings, each at its newest version with the findings it is linked to and who decided
    them: what the report and the OSCAL exports carry."""
    rows = session.scalars(
        select(RiskProposal)
        .where(
            RiskProposal.assessment_id == assessment_id,
            RiskProposal.status.in_([ProposalStatus.ACCEPTED.value, ProposalStatus.MERGED.value]),
            RiskProposal.risk_id.is_not(None),
        )
        .order_by(RiskProposal.finding)
    ).all()
    linked: dict[uuid.UUID, list[RiskProposal]] = {}
    for row in rows:
        assert row.risk_id is not None  # filtered above
        linked.setdefault(row.risk_id, []).append(row)
    found = []
    for risk_id, proposals in linked.items():
        risk = session.get(Risk, risk_id)
        if risk is None:
            continue
        view = risk_view(risk, newest_version(session, risk))
        found.append(
            view.model_dump(mode="json")
            | {
                "findings": [p.finding for p in proposals],
                "decisions": [
                    {"finding": p.finding, "status": p.status, "decided_by": p.decided_by}
                    for p in proposals
                ],
            }
        )
    return sorted(found, key=lambda r: (-int(r["score"]), r["findings"][0]))
