"""Rebuild a run's state from its audit trail: every applied signal, in order, through decide().

The audit trail names each applied signal; the inbox holds its envelope and the approval
events their decisions. Replaying them must land exactly on the stored state.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.errors import FleetError
from orchestrator.contracts.signals import SignalEnvelope, SignalFate
from orchestrator.db.models import ApprovalEvent, AuditEvent, InboxSignal, WorkflowRun
from orchestrator.engine.coordinator import approval_view
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.state import RunState


class ReplayDiverged(FleetError, AssertionError):
    """The audit trail does not reproduce the stored run."""


def replay_run(session: Session, run_id: uuid.UUID) -> RunState:
    run = session.get(WorkflowRun, run_id)
    if run is None:
        raise LookupError(f"run {run_id} not found")
    state = RunState(
        run_id=run.id,
        tenant_id=run.tenant_id,
        organization_id=run.organization_id,
        assessment_id=run.assessment_id,
    )
    applied = session.scalars(
        select(AuditEvent.event_metadata)
        .where(
            AuditEvent.run_id == run_id,
            AuditEvent.event_type == AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED.value,
        )
        .order_by(AuditEvent.id)
    )
    signal_ids = [uuid.UUID(metadata["signal_id"]) for metadata in applied]
    envelopes = {
        row.signal_id: SignalEnvelope.model_validate(row.envelope)
        for row in session.scalars(select(InboxSignal).where(InboxSignal.signal_id.in_(signal_ids)))
    }
    event_ids = {e.approval_event_id for e in envelopes.values() if e.approval_event_id}
    approvals = (
        {
            row.id: approval_view(row)
            for row in session.scalars(select(ApprovalEvent).where(ApprovalEvent.id.in_(event_ids)))
        }
        if event_ids
        else {}
    )
    for signal_id in signal_ids:
        envelope = envelopes[signal_id]
        event_id = envelope.approval_event_id
        # The event was still unused at the moment this signal applied it.
        approval = replace(approvals[event_id], consumed=False) if event_id in approvals else None
        decision = decide(state, envelope, approval)
        if decision.fate is not SignalFate.APPLIED:
            raise ReplayDiverged(
                f"signal {signal_id} was {decision.fate} on replay: {decision.reason}"
            )
        state = decision.state
    return state
