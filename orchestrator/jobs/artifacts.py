"""Versioned, immutable artifacts written by jobs; a re-delivered job finds its own."""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import bindparam, insert, select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.jobs import ArtifactRef
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.storage import put_bytes, sha256_hex
from orchestrator.db.tables import ARTIFACTS
from orchestrator.jobs.interface import JobContext, JobFailure

_BY_VERSION = select(ARTIFACTS.c.id, ARTIFACTS.c.sha256).where(
    ARTIFACTS.c.run_id == bindparam("of_run"),
    ARTIFACTS.c.kind == bindparam("of_kind"),
    ARTIFACTS.c.version == bindparam("of_version"),
)


def find_artifact(
    session: Session, run_id: uuid.UUID, kind: ArtifactKind, version: int
) -> ArtifactRef | None:
    """The run's artifact of this kind and version, if it was drafted."""
    row = session.execute(
        _BY_VERSION, {"of_run": run_id, "of_kind": kind.value, "of_version": version}
    ).first()
    return (
        None
        if row is None
        else ArtifactRef(artifact_id=row.id, kind=kind, version=version, sha256=row.sha256)
    )


def requested_version(context: JobContext, kind: ArtifactKind) -> int:
    """The version the coordinator asked this job to draft."""
    params = context.request.parameters
    if params.get("artifact_kind") != kind.value or not params.get("artifact_version"):
        raise JobFailure("bad_request", f"job was not asked to draft {kind.value}")
    return int(params["artifact_version"])


def save_artifact(
    context: JobContext,
    kind: ArtifactKind,
    content: dict[str, Any],
    *,
    file_bytes: bytes | None = None,
    file_suffix: str = "",
    media_type: str = "application/json",
) -> ArtifactRef:
    """Store (kind, version) for the run once; a second call returns the first one."""
    request = context.request
    version = requested_version(context, kind)
    existing = find_artifact(context.session, request.run_id, kind, version)
    if existing is not None:
        return existing
    storage_path = None
    if file_bytes is not None:
        path, digest = put_bytes(context.storage_dir / "artifacts", file_bytes, file_suffix)
        storage_path = str(path)
    else:
        digest = sha256_hex(json.dumps(content, sort_keys=True, default=str).encode())
    artifact_id = new_id()
    context.session.execute(
        insert(ARTIFACTS),
        {
            "id": artifact_id,
            "tenant_id": request.tenant_id,
            "assessment_id": request.assessment_id,
            "run_id": request.run_id,
            "kind": kind.value,
            "version": version,
            "status": "draft",
            "content": content,
            "media_type": media_type,
            "storage_path": storage_path,
            "sha256": digest,
            "created_by_job_id": request.job_id,
            "created_at": utcnow(),
        },
    )
    return ArtifactRef(artifact_id=artifact_id, kind=kind, version=version, sha256=digest)
