"""What a document not ingested yet waits for: the run's ingestion, or the next
reassessment.

A file uploaded before the active run's ingestion ends is ingested into that run (an
upload during the ingestion step brings another attempt). Once the run has passed
ingestion the run never reads it again: it waits, visibly, for the next reassessment of
the assessment, which ingests it and counts it among the documents that changed
(`service.reassessments.start_reassessment`). So does a file uploaded when no run is
active and the assessment has an approved SoA.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Document, WorkflowRun
from orchestrator.service.approved_artifacts import last_approved_soa

#: An uploaded document's wait: the run (or the next run started) will ingest it.
INGESTION = "ingestion"
#: The active run has passed ingestion, or none is active and an SoA was approved: the
#: next reassessment ingests it.
REASSESSMENT = "reassessment"
#: The status of a document no ingestion has read yet.
UPLOADED = "uploaded"
_PAST_INGESTION = frozenset(
    step.value for step in STEP_ORDER[STEP_ORDER.index(Step.INGEST_DOCUMENTS) + 1 :]
)


def upload_wait(session: Session, assessment_id: uuid.UUID) -> str:
    """What a document of the assessment uploaded now, and not ingested yet, waits for:
    the next reassessment once the active run passed ingestion, or (no run active) once
    the assessment has an approved SoA to reassess."""
    step = session.scalar(
        select(WorkflowRun.current_step).where(WorkflowRun.active_assessment_id == assessment_id)
    )
    if step is not None:
        return REASSESSMENT if step in _PAST_INGESTION else INGESTION
    return INGESTION if last_approved_soa(session, assessment_id) is None else REASSESSMENT


def waiting_documents(session: Session, assessment_id: uuid.UUID) -> list[uuid.UUID]:
    """The assessment's documents no ingestion has read yet, oldest first."""
    return list(
        session.scalars(
            select(Document.id)
            .where(Document.assessment_id == assessment_id, Document.status == UPLOADED)
            .order_by(Document.created_at, Document.id)
        )
    )
