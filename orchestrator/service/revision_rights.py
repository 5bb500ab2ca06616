"""Who may ask for a new version of a draft: operators, and the reviewer who sent it back.

A reviewer who rejected a draft, or asked for changes, is the person waiting for the next
version; asking for it needs no operator rights. The right covers exactly the version that
reviewer sent back, and only once the run has recorded that decision.
"""

from __future__ import annotations

import uuid

from sqlalchemy import exists, select

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.db.tables import APPROVALS
from orchestrator.engine.run_rows import state_of
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.producer import load_run

_SENT_BACK = (ApprovalDecision.REJECTED.value, ApprovalDecision.CHANGES_REQUESTED.value)


@retry_busy
def sent_back_by(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> bool:
    """True when `actor` rejected (or asked changes to) the run's current `kind` draft."""
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        version = state_of(run).rejected.get(kind)
        if version is None:
            return False
        return bool(
            session.scalar(
                select(
                    exists().where(
                        APPROVALS.c.run_id == run.id,
                        APPROVALS.c.artifact_kind == kind.value,
                        APPROVALS.c.artifact_version == version,
                        APPROVALS.c.approver_id == actor.actor_id,
                        APPROVALS.c.decision.in_(_SENT_BACK),
                        # Counted by the run: the rejection that put the draft in this state.
                        APPROVALS.c.consumed_by_signal_id.is_not(None),
                    )
                )
            )
        )
