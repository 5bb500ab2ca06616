"""Adopting a run: an operator's authority replaces its starter's (after the starter's key
was revoked, say), so the run makes its effects outside the database again."""

from __future__ import annotations

import uuid

from sqlalchemy import update

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.service.authority import RunAuthority
from orchestrator.service.producer import load_run


@retry_busy
def adopt_run(
    actor: Actor, run_id: uuid.UUID, *, reason: str, authority: RunAuthority
) -> RunAuthority:
    """Make `authority` the run's from now on (an operator takes a run over after its
    starter's key was revoked). Audited with the previous authority and the reason."""
    if not reason.strip():
        raise InvalidInput("adopting a run needs a reason")
    with transaction() as session:
        run = load_run(session, actor, run_id)
        if WorkflowStatus(run.status).is_terminal:
            raise InvalidInput(f"the run is {run.status}; it makes no more effects")
        session.execute(
            update(WorkflowRun)
            .where(WorkflowRun.id == run_id)
            .values(authority=authority.model_dump())
            .execution_options(synchronize_session=False)
        )
        row = session.get(WorkflowRun, run_id)
        assert row is not None
        append_audit(
            session,
            row,
            AuditEventType.LIFECYCLE_WORKFLOW_AUTHORITY_CHANGED,
            run.current_step,
            {"from": run.authority, "to": authority.model_dump(), "reason": reason.strip()},
            utcnow(),
            actor.actor_id,
        )
    return authority
