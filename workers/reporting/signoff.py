"""Who signed what the report is built from: per input artifact its version, checksum and
status, the approvals recorded for that very version (approver, the roles the approval
carried, when), and the amendments that produced it. An input with a gate of its own
(the scope and each gated draft) that nobody approved is named as such: the report's own
gate refuses while one is. The evidence analysis has no gate: the gap analysis built on it
is what reviewers approve."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import ApprovalEvent, Artifact

#: The order the report lists its inputs in: the order the lifecycle drafts them.
ORDER = (
    ArtifactKind.SCOPE,
    ArtifactKind.SOA,
    ArtifactKind.EVIDENCE_ANALYSIS,
    ArtifactKind.GAP_ANALYSIS,
    ArtifactKind.MATURITY_ASSESSMENT,
    ArtifactKind.POAM,
)
LABELS = {
    ArtifactKind.SCOPE: "Scope",
    ArtifactKind.SOA: "Statement of Applicability",
    ArtifactKind.EVIDENCE_ANALYSIS: "Evidence analysis",
    ArtifactKind.GAP_ANALYSIS: "Gap analysis",
    ArtifactKind.MATURITY_ASSESSMENT: "Maturity assessment",
    ArtifactKind.POAM: "Plan of Action & Milestones",
}


def sign_off(session: Session, inputs: dict[ArtifactKind, Artifact]) -> list[dict[str, Any]]:
    entries = []
    for kind in ORDER:
        artifact = inputs.get(kind)
        if artifact is None:
            continue
        amendments = artifact.content.get("amendments") or []
        entries.append(
            {
                "kind": kind.value,
                "label": LABELS[kind],
                "version": artifact.version,
                "sha256": artifact.sha256,
                "status": artifact.status,
                "approvals": _approvals(session, artifact),
                "amendments": len(amendments),
                "amended_by": sorted({str(a.get("by")) for a in amendments if a.get("by")}),
                **_gate(kind),
            }
        )
    return entries


def _gate(kind: ArtifactKind) -> dict[str, Any]:
    if kind is ArtifactKind.EVIDENCE_ANALYSIS:
        return {"gated": False, "note": "no gate of its own: reviewed with the gap analysis"}
    return {"gated": True}


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
