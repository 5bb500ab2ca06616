"""Who signed what the report is built from: per input artifact its version, checksum and
status, the approvals recorded for that very version (approver, the roles the approval
carried, when), and the amendments that produced it. An input with a gate of its own
(the scope and each gated draft) that nobody approved is named as such: the report's own
gate refuses while one is. The evidence analysis has no gate: the gap analysis built on it
is what reviewers approve."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.artifact_registry import ArtifactDeclaration, declaration, in_report
from orchestrator.db.models import ApprovalEvent, Artifact


def sign_off(session: Session, inputs: Mapping[str, Artifact]) -> list[dict[str, Any]]:
    """An entry per input the run has, in the order the lifecycle drafts them."""
    entries = []
    for declared in in_report():
        artifact = inputs.get(declared.kind)
        if artifact is None:
            continue
        amendments = artifact.content.get("amendments") or []
        entries.append(
            {
                "kind": declared.kind,
                "label": declared.label,
                "artifact_id": str(artifact.id),
                "run_id": str(artifact.run_id),
                "version": artifact.version,
                "sha256": artifact.sha256,
                "status": artifact.status,
                "approvals": _approvals(session, artifact),
                "amendments": len(amendments),
                "amended_by": sorted({str(a.get("by")) for a in amendments if a.get("by")}),
                **gate_of(declared),
            }
        )
    return entries


def gate_of(declared: ArtifactDeclaration) -> dict[str, Any]:
    if declared.approved_by is not None:
        return {"gated": True}
    with_ = declaration(declared.reviewed_with) if declared.reviewed_with else None
    reviewed = f": reviewed with the {with_.label.lower()}" if with_ is not None else ""
    return {"gated": False, "note": f"no gate of its own{reviewed}"}


def _approvals(session: Session, artifact: Artifact) -> list[dict[str, Any]]:
    """Approvals of this version; those an approval signal counted come first, and when
    any did, only those (an approval recorded but never used did not open the gate)."""
    events = list(
        session.scalars(
            select(ApprovalEvent)
            .where(ApprovalEvent.artifact_id == artifact.id, ApprovalEvent.decision == "approved")
            .order_by(ApprovalEvent.created_at, ApprovalEvent.id)
        )
    )
    counted = [e for e in events if e.consumed_by_signal_id is not None]
    return [
        {
            "approver_id": event.approver_id,
            "roles": list(
                event.approver_roles or ([event.approver_role] if event.approver_role else [])
            ),
            "at": _utc(event.created_at).strftime("%Y-%m-%d %H:%M UTC"),
            "comment": event.comment,
            # What the approval sealed (`lifecycle verify` recomputes it); None before 0018.
            "sealed": (
                {
                    "content_sha256": event.content_sha256,
                    "cited_documents": dict(event.cited_documents or {}),
                }
                if event.content_sha256 is not None
                else None
            ),
        }
        for event in (counted or events)
    ]


def _utc(moment: datetime) -> datetime:
    # SQLite hands timestamps back naive; they were written in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
