"""An assessment's last approved version of a draft: the SoA a reassessment starts from, a
catalogue adoption re-opens and the next period carries over; the gap analysis whose
"not a gap" decisions the next period carries."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact


def last_approved(
    session: Session, assessment_id: uuid.UUID, kind: ArtifactKind
) -> Artifact | None:
    """The assessment's newest approved version of `kind`, in any of its runs."""
    return session.scalar(
        select(Artifact)
        .where(
            Artifact.assessment_id == assessment_id,
            Artifact.kind == kind.value,
            Artifact.status == "approved",
        )
        .order_by(Artifact.created_at.desc(), Artifact.version.desc())
        .limit(1)
    )


def last_approved_soa(session: Session, assessment_id: uuid.UUID) -> Artifact | None:
    return last_approved(session, assessment_id, ArtifactKind.SOA)
