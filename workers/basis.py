"""What a job's draft was computed from, in one comparable value.

A draft computed ahead of its job's transaction (in its `Prepare`) is recorded only if
the run's artifacts and approvals and the assessment's knowledge base are still what
the draft read; otherwise the job prepares it again. A handful of counting queries.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from orchestrator.db.models import ApprovalEvent, Artifact, ChunkEmbedding, DocumentChunk

Basis = tuple[Any, ...]


def basis_of(session: Session, run_id: uuid.UUID, assessment_id: uuid.UUID) -> Basis:
    artifacts = tuple(
        (str(row.id), row.status)
        for row in session.execute(
            select(Artifact.id, Artifact.status)
            .where(Artifact.run_id == run_id)
            .order_by(Artifact.id)
        )
    )
    approvals = session.scalar(
        select(func.count()).select_from(ApprovalEvent).where(ApprovalEvent.run_id == run_id)
    )
    chunks = session.scalar(
        select(func.count())
        .select_from(DocumentChunk)
        .where(DocumentChunk.assessment_id == assessment_id)
    )
    vectors = session.execute(
        select(ChunkEmbedding.model, func.count())
        .where(ChunkEmbedding.assessment_id == assessment_id)
        .group_by(ChunkEmbedding.model)
        .order_by(ChunkEmbedding.model)
    ).all()
    return (artifacts, approvals, chunks, tuple((m, n) for m, n in vectors))
