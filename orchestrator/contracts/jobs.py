"""The queue callback contract: what a job is asked to do and what it reports back."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
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


@dataclass(frozen=True)
class JobDeclaration:
    """A job kind, declared once: the Celery task that runs it and its queue, the task's
    time limits, and the lost-jobs sweep's deadline (above the hard limit, so a live job
    is never taken for a lost one). Routing, the tasks' options and the sweep's settings
    all read it (`tests/architecture/test_job_kind_declarations.py`)."""

    kind: JobKind
    task: str
    queue: str
    #: Hard time limit (s); the soft limit, which the job sees, is a minute earlier.
    time_limit_s: float
    #: Seconds a started job may go without an outcome or a heartbeat.
    deadline_s: float

    @property
    def soft_time_limit_s(self) -> float:
        return self.time_limit_s - 60


JOBS: tuple[JobDeclaration, ...] = (
    JobDeclaration(JobKind.INGEST_DOCUMENTS, "ingestion.ingest_documents", "ingestion", 660, 900),
    JobDeclaration(JobKind.INDEX_KB, "kb_index.index_kb", "kb_index", 960, 1200),
    JobDeclaration(JobKind.ANALYSIS, "analysis.run_step", "analysis", 360, 600),
    JobDeclaration(JobKind.INGEST_SOA, "ingestion.ingest_soa", "ingestion", 360, 600),
    JobDeclaration(JobKind.RENDER_REPORT, "reporting.render_report", "reporting", 360, 600),
)

#: Each kind's declaration.
JOB_DECLARATIONS: dict[JobKind, JobDeclaration] = {job.kind: job for job in JOBS}


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
    traceparent: str | None = Field(None, max_length=128)
    """W3C traceparent of the coordinator's span that enqueued it, when tracing is on."""


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
