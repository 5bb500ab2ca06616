"""The queue callback contract: what a job is asked to do and what it reports back."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step

JOB_SCHEMA_VERSION = 1


class JobKind(StrEnum):
    """Kinds of heavy work; each maps to one task on one queue."""

    INGEST_DOCUMENTS = "ingest_documents"
    INDEX_KB = "index_kb"
    ANALYSIS = "analysis"
    INGEST_SOA = "ingest_soa"
    RENDER_REPORT = "render_report"


class JobStatus(StrEnum):
    QUEUED = "queued"
    STARTED = "started"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class JobRequest(BaseModel):
    """The message a heavy job receives. Small: references, never document content."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = JOB_SCHEMA_VERSION
    job_id: str = Field(min_length=1, max_length=200)
    kind: JobKind
    run_id: uuid.UUID
    step: Step
    attempt: int = Field(ge=1)
    idempotency_key: str
    trace_id: str
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    actor_id: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class JobError(BaseModel):
    """A typed job error; `retryable` decides whether the fleet tries again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    message: str
    retryable: bool = False


class ArtifactRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    artifact_id: uuid.UUID
    kind: ArtifactKind
    version: int = Field(ge=1)
    sha256: str | None = None


class JobOutcome(BaseModel):
    """What a job posts back as the payload of its completion (or failure) signal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = JOB_SCHEMA_VERSION
    job_id: str
    run_id: uuid.UUID
    step: Step
    attempt: int
    idempotency_key: str
    trace_id: str
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    actor_id: str
    succeeded: bool
    summary: dict[str, Any] = Field(default_factory=dict)
    artifact: ArtifactRef | None = None
    error: JobError | None = None
