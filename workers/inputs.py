"""Reading the artifacts earlier steps of the same run drafted."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact
from orchestrator.jobs.interface import JobContext, JobFailure


def latest_artifact(
    session: Session, run_id: uuid.UUID, kind: ArtifactKind, *, status: str | None = None
) -> Artifact | None:
    """The run's highest version of `kind` (optionally only with `status`)."""
    query = select(Artifact).where(Artifact.run_id == run_id, Artifact.kind == kind.value)
    if status is not None:
        query = query.where(Artifact.status == status)
    return session.scalar(query.order_by(Artifact.version.desc()).limit(1))


def require_artifact(context: JobContext, kind: ArtifactKind) -> Artifact:
    artifact = latest_artifact(context.session, context.request.run_id, kind)
    if artifact is None:
        # The lifecycle orders steps so this cannot happen; if it does, retrying won't help.
        raise JobFailure(
            "missing_input",
            f"step {context.request.step.value} needs a {kind.value} artifact and the run has none",
        )
    return artifact


def require_content(context: JobContext, kind: ArtifactKind) -> dict[str, Any]:
    return require_artifact(context, kind).content


def source(artifact: Artifact) -> dict[str, Any]:
    """How an artifact names the input it was derived from."""
    return {"kind": artifact.kind, "version": artifact.version, "artifact_id": str(artifact.id)}
