"""Approvals as the service records them, for drafting tests that need named approvers."""

from __future__ import annotations

import uuid

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import ApprovalEvent
from orchestrator.service.approval_seals import seal_of
from tests.support.services import FIXED_NOW, ORG, TENANT, Kit


def record_approval(kit: Kit, kind: ArtifactKind, approver: str, roles: list[str]) -> None:
    """Approve the latest `kind` with an approval event counted by the gate's signal,
    sealed as the service seals it."""
    artifact = kit.approve(kind)
    seal = seal_of(kit.session, artifact.content)
    kit.session.add(
        ApprovalEvent(
            tenant_id=TENANT,
            organization_id=ORG,
            assessment_id=kit.assessment.id,
            run_id=kit.run.id,
            artifact_id=artifact.id,
            artifact_kind=kind.value,
            artifact_version=artifact.version,
            approver_id=approver,
            approver_role=roles[0],
            approver_roles=roles,
            decision="approved",
            comment=None,
            created_at=FIXED_NOW,
            consumed_by_signal_id=uuid.uuid4(),
            consumed_at=FIXED_NOW,
            content_sha256=seal.content_sha256,
            cited_documents=seal.cited_documents,
        )
    )
    kit.session.commit()
