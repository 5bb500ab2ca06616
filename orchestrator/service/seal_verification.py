"""Is what was approved still what we hold? Each approval's seal recomputed: the artifact's
content as stored now, and every document version it cited (its row, whether a newer
version replaced it, and the stored file's bytes)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.canonical import canonical_sha256
from orchestrator.contracts.documents import SUPERSEDED
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import ApprovalEvent, Artifact, Document
from orchestrator.db.session import read_transaction
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.producer import load_run

_BLOCK = 1 << 20


class ApprovalCheck(BaseModel):
    model_config = ConfigDict(frozen=True)

    approval_event_id: uuid.UUID
    artifact_kind: str
    artifact_version: int
    approver_id: str
    approved_at: datetime
    content_sha256: str | None
    """As sealed; None for an approval recorded before approvals were sealed."""
    cited_documents: dict[str, str]
    changes: list[str]
    """What differs from the seal, one sentence each; empty when it holds."""


class RunVerification(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: uuid.UUID
    verified: bool
    """No approval's seal found anything changed."""
    unsealed: int
    """Approvals recorded before approvals were sealed: nothing to recompute."""
    approvals: list[ApprovalCheck]

    def changes(self) -> list[str]:
        return [change for a in self.approvals for change in a.changes]


def verify_run(actor: Actor, run_id: uuid.UUID, *, stored_files: bool = True) -> RunVerification:
    """Recompute each approval's seal. `stored_files=False` trusts the stored files and
    checks the records only (a page view must not hash every cited file)."""
    # Only reads: a page showing it must answer while a job holds its write transaction.
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        events = session.scalars(
            select(ApprovalEvent)
            .where(
                ApprovalEvent.run_id == run.id,
                ApprovalEvent.decision == ApprovalDecision.APPROVED.value,
            )
            .order_by(ApprovalEvent.created_at, ApprovalEvent.id)
        ).all()
        documents = _documents(session, events)
        files: dict[str, str | None] | None = {} if stored_files else None
        checks = [_check(session, event, documents, files) for event in events]
    return RunVerification(
        run_id=run_id,
        verified=not any(c.changes for c in checks),
        unsealed=sum(c.content_sha256 is None for c in checks),
        approvals=checks,
    )


def _documents(session: Session, events: Sequence[ApprovalEvent]) -> dict[str, Document]:
    ids = {uuid.UUID(i) for e in events for i in (e.cited_documents or {})}
    if not ids:
        return {}
    rows = session.scalars(select(Document).where(Document.id.in_(ids))).all()
    return {str(d.id): d for d in rows}


def _check(
    session: Session,
    event: ApprovalEvent,
    documents: dict[str, Document],
    files: dict[str, str | None] | None,
) -> ApprovalCheck:
    what = f"{event.artifact_kind} v{event.artifact_version}"
    changes: list[str] = []
    if event.content_sha256 is not None:
        artifact = session.get(Artifact, event.artifact_id)
        if artifact is None:
            changes.append(f"{what}: the approved artifact no longer exists")
        else:
            now = canonical_sha256(artifact.content)
            if now != event.content_sha256:
                changes.append(
                    f"{what}: content changed since approval "
                    f"(sealed sha256 {event.content_sha256[:12]}, now {now[:12]})"
                )
    for document_id, sealed in sorted((event.cited_documents or {}).items()):
        found = _document_changes(document_id, sealed, documents, files)
        changes.extend(f"{what}: {change}" for change in found)
    return ApprovalCheck(
        approval_event_id=event.id,
        artifact_kind=event.artifact_kind,
        artifact_version=event.artifact_version,
        approver_id=event.approver_id,
        approved_at=event.created_at,
        content_sha256=event.content_sha256,
        cited_documents=dict(event.cited_documents or {}),
        changes=changes,
    )


def _document_changes(
    document_id: str,
    sealed: str,
    documents: dict[str, Document],
    files: dict[str, str | None] | None,
) -> list[str]:
    document = documents.get(document_id)
    if document is None:
        return [f"cited document {document_id} no longer exists"]
    version = document.series_version
    named = f"cited document {document.filename!r} version {version} ({document_id})"
    changes: list[str] = []
    if document.sha256 != sealed:
        changes.append(f"{named}: recorded sha256 {document.sha256[:12]}, sealed {sealed[:12]}")
    if document.life_status == SUPERSEDED or document.superseded_by is not None:
        changes.append(f"{named} was replaced by document {document.superseded_by}")
    if files is None:
        return changes
    if document.storage_path not in files:
        files[document.storage_path] = _file_sha256(Path(document.storage_path))
    stored = files[document.storage_path]
    if stored is None:
        changes.append(f"{named}: its stored file is missing ({document.storage_path})")
    elif stored != sealed:
        changes.append(f"{named}: its stored file was replaced (sha256 now {stored[:12]})")
    return changes


def _file_sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
    except FileNotFoundError:
        return None
    return digest.hexdigest()
