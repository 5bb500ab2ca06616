"""Path parameters, named as in the spec (`assessmentId`, `workflowRunId`)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import Path

from orchestrator.contracts.steps import AssessmentLifecycleStep

AssessmentId = Annotated[uuid.UUID, Path(alias="assessmentId")]
RunId = Annotated[uuid.UUID, Path(alias="workflowRunId")]
SignalId = Annotated[uuid.UUID, Path(alias="signalId")]
ArtifactId = Annotated[uuid.UUID, Path(alias="artifactId")]
DocumentId = Annotated[uuid.UUID, Path(alias="documentId")]
StepName = Annotated[AssessmentLifecycleStep, Path(alias="step")]

API_PREFIX = "/api/v1"


def run_location(run_id: uuid.UUID) -> str:
    return f"{API_PREFIX}/workflows/{run_id}"


def assessment_location(assessment_id: uuid.UUID) -> str:
    return f"{API_PREFIX}/assessments/{assessment_id}"
