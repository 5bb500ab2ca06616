"""Shared helpers for the worker service tests: a real SQLite database, rows, contexts.

A module rather than conftest fixtures, so it never clashes with the fleet's conftest.
Each test module wraps `open_kit` in its own small fixture.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import (
    Artifact,
    Assessment,
    Document,
    DocumentChunk,
    WorkflowRun,
)
from orchestrator.db.session import dispose_engines, make_engine
from orchestrator.db.storage import put_bytes
from orchestrator.jobs.interface import JobContext, JobResult, JobService
from orchestrator.lifecycle.definition import STEP_SPECS
from tests.support.embedded import migrated_sqlite
from workers.analysis.service import run_analysis_step
from workers.ingestion.service import ingest_documents, ingest_soa
from workers.kb_index.service import index_kb
from workers.reporting.render import ReportInput
from workers.reporting.service import render_report

TENANT = "tenant-a"
ORG = "org-a"
USER = "user:alice"
FIXED_NOW = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)

ACCESS_POLICY = """---
title: Access Control Policy
owner: Information Security
tags: [access, identity]
---
# Access Control Policy

## Authentication
Multi-factor authentication (MFA) is required for remote access and for all
privileged accounts. Staff enrol an authenticator app; one-time passwords by SMS
are not accepted.

## Access Reviews
Access is granted on the principle of least privilege. Access reviews of every
production system are performed each quarter by the system owner.
"""

INCIDENT_PLAN = """# Incident Response Plan

## Plan
The incident response plan defines escalation paths, notification duties and
containment playbooks. A tabletop exercise tests the plan every year.

## Handling
Security incidents are triaged, contained, eradicated and followed by recovery and
a lessons-learned review.
"""

BACKUP_STANDARD = """BACKUP STANDARD

Backups
Production databases are backed up nightly. Backups are encrypted, kept offsite and
a restore test is performed every quarter.
"""

VULNERABILITY_STANDARD = """# Vulnerability Management Standard

## Vulnerability Scanning
An authenticated vulnerability scanner scans every server weekly and after each
significant change. Scan results are triaged by the security team and critical
findings are remediated within seven days. A penetration test runs every year.
"""

#: The services the lifecycle's job steps run, as the fleet's tasks wire them.
SERVICES: dict[JobKind, JobService] = {
    JobKind.INGEST_DOCUMENTS: ingest_documents,
    JobKind.INDEX_KB: index_kb,
    JobKind.ANALYSIS: run_analysis_step,
    JobKind.INGEST_SOA: ingest_soa,
    JobKind.RENDER_REPORT: render_report,
}


#: The framework a test's run selects unless the test is about a whole-catalogue run: SOC 2's
#: Security criteria (tens of rows). The SCF catalogue (over a thousand) makes a report of
#: hundreds of PDF pages, a minute or more of CPU each time it is drafted.
SMALL_FRAMEWORK = "SOC 2"


@dataclass
class Kit:
    """One assessment with one run in a fresh database, and ways to run services on it."""

    session: Session
    storage_dir: Path
    assessment: Assessment
    run: WorkflowRun
    jobs: int = 0
    framework: str = "SCF"
    categories: Any = None
    """Categories chosen with the framework (SOC 2's "availability", ...), if any."""
    results: dict[Step, JobResult] = field(default_factory=dict)

    # --- rows ---------------------------------------------------------------------------

    def add_document(
        self,
        filename: str,
        content: str | bytes,
        media_type: str = "text/markdown",
        *,
        uploaded_by: str = USER,
    ) -> Document:
        data = content.encode() if isinstance(content, str) else content
        path, digest = put_bytes(self.storage_dir / "documents", data)
        document = Document(
            tenant_id=TENANT,
            assessment_id=self.assessment.id,
            filename=filename,
            media_type=media_type,
            size_bytes=len(data),
            sha256=digest,
            storage_path=str(path),
            status="uploaded",
            uploaded_by=uploaded_by,
            created_at=utcnow(),
        )
        self.session.add(document)
        self.session.flush()
        return document

    def add_artifact(
        self,
        kind: ArtifactKind,
        content: dict[str, Any],
        *,
        status: str = "approved",
        version: int | None = None,
    ) -> Artifact:
        artifact = Artifact(
            tenant_id=TENANT,
            assessment_id=self.assessment.id,
            run_id=self.run.id,
            kind=kind.value,
            version=version or self.next_version(kind),
            status=status,
            content=content,
            sha256="0" * 64,
            created_by_job_id="test",
            created_at=utcnow(),
        )
        self.session.add(artifact)
        self.session.flush()
        return artifact

    def approve(self, kind: ArtifactKind) -> Artifact:
        artifact = self.latest(kind)
        assert artifact is not None, f"no {kind.value} to approve"
        artifact.status = "approved"
        self.session.flush()
        return artifact

    # --- reading ------------------------------------------------------------------------

    def latest(self, kind: ArtifactKind) -> Artifact | None:
        return self.session.scalar(
            select(Artifact)
            .where(Artifact.run_id == self.run.id, Artifact.kind == kind.value)
            .order_by(Artifact.version.desc())
            .limit(1)
        )

    def content(self, kind: ArtifactKind) -> dict[str, Any]:
        artifact = self.latest(kind)
        assert artifact is not None, f"no {kind.value} artifact"
        return artifact.content

    def report_input(self, **fields: Any) -> ReportInput:
        """What the report is rendered from, with the kit's SoA, gap and evidence drafts
        under placeholder names; `fields` add to it or replace."""
        drafts: dict[str, Any] = {
            "title": "t",
            "assessment_name": "a",
            "as_of": "now",
            "soa": self.content(ArtifactKind.SOA),
            "gaps": self.content(ArtifactKind.GAP_ANALYSIS),
            "maturity": {},
            "poam": {},
            "evidence": self.content(ArtifactKind.EVIDENCE_ANALYSIS),
        }
        return ReportInput(**(drafts | fields))

    def next_version(self, kind: ArtifactKind) -> int:
        current = self.session.scalar(
            select(func.max(Artifact.version)).where(
                Artifact.run_id == self.run.id, Artifact.kind == kind.value
            )
        )
        return (current or 0) + 1

    def count(self, model: type[Any]) -> int:
        return self.session.scalar(select(func.count()).select_from(model)) or 0

    def chunks(self) -> list[DocumentChunk]:
        return list(
            self.session.scalars(
                select(DocumentChunk)
                .where(DocumentChunk.assessment_id == self.assessment.id)
                .order_by(DocumentChunk.document_id, DocumentChunk.ordinal)
            )
        )

    # --- jobs ---------------------------------------------------------------------------

    def context(self, step: Step, *, job_id: str | None = None, **parameters: Any) -> JobContext:
        """A job request as the coordinator builds it: the framework, and for drafting
        steps the artifact kind and the next version."""
        spec = STEP_SPECS[step]
        assert spec.job_kind is not None, f"{step.value} is not a job step"
        params: dict[str, Any] = {"framework": self.framework}
        if self.categories is not None:
            params["categories"] = self.categories
        if spec.produces is not None:
            params |= {
                "artifact_kind": spec.produces.value,
                "artifact_version": self.next_version(spec.produces),
            }
        params |= parameters
        self.jobs += 1
        request = job_request(step, self.run.id, self.assessment.id).model_copy(
            update={
                "job_id": job_id or f"job-{step.value}-{self.jobs}",
                "idempotency_key": f"key-{self.jobs}",
                "parameters": params,
            }
        )
        return JobContext(request=request, session=self.session, storage_dir=self.storage_dir)

    def run_step(self, step: Step, **parameters: Any) -> JobResult:
        """Run the step's service and commit, as the job runtime does on success."""
        context = self.context(step, **parameters)
        result = SERVICES[context.request.kind](context)
        self.session.commit()
        self.results[step] = result
        return result

    def deliver_twice(
        self, service: JobService, step: Step, job_id: str
    ) -> tuple[JobResult, JobResult]:
        """The step's job run by `service` twice under one job id (a redelivery after its
        commit), each delivery committed: both results."""
        context = self.context(step, job_id=job_id)
        first = service(context)
        self.session.commit()
        again = service(context)
        self.session.commit()
        return first, again

    def run_through(
        self, last: Step, *, start: Step = Step.INGEST_DOCUMENTS, approve: bool = True
    ) -> JobResult:
        """Every job step from `start` up to `last`, approving drafts at their gates."""
        result = JobResult()
        for step in PIPELINE[PIPELINE.index(start) : PIPELINE.index(last) + 1]:
            result = self.run_step(step)
            produced = STEP_SPECS[step].produces
            if approve and produced is not None:
                self.approve(produced)
                self.session.commit()
        return result


PIPELINE: tuple[Step, ...] = (
    Step.INGEST_DOCUMENTS,
    Step.INDEX_KB,
    Step.RUN_SCF_PRE_ANALYSIS,
    Step.CREATE_SCOPE,
    Step.CREATE_SOA_DRAFT,
    Step.INGEST_SOA,
    Step.RUN_EVIDENCE_ANALYSIS,
    Step.CREATE_GAP_ANALYSIS,
    Step.CREATE_MATURITY_ASSESSMENT,
    Step.CREATE_POAM,
    Step.CREATE_REPORT,
)


def add_standard_documents(kit: Kit) -> None:
    kit.add_document("access-control-policy.md", ACCESS_POLICY)
    kit.add_document("incident-response-plan.md", INCIDENT_PLAN)
    kit.add_document("backup-standard.txt", BACKUP_STANDARD, media_type="text/plain")


def job_request(step: Step, run_id: uuid.UUID, assessment_id: uuid.UUID) -> JobRequest:
    """The first attempt of the step's job for a run, as the coordinator sends it."""
    kind = STEP_SPECS[step].job_kind
    assert kind is not None, f"{step.value} runs no job"
    return JobRequest(
        job_id=f"{run_id}:{step.value}:1",
        kind=kind,
        run_id=run_id,
        step=step,
        attempt=1,
        idempotency_key=f"{run_id}:{step.value}",
        trace_id="trace-1",
        tenant_id=TENANT,
        organization_id=ORG,
        assessment_id=assessment_id,
        actor_id="system:test",
    )


def add_assessment_and_run(
    session: Session,
    name: str,
    *,
    carry_over_from: uuid.UUID | None = None,
    tenant_id: str = TENANT,
    organization_id: str = ORG,
    actor_id: str = USER,
    status: str = "running",
    current_step: str | None = None,
    context: dict[str, Any] | None = None,
    trace_id: str | None = None,
) -> tuple[Assessment, WorkflowRun]:
    """An assessment (by default of the kit's organisation) and its run (by default
    running, with a fresh trace id), added to `session`."""
    now = utcnow()
    assessment = Assessment(
        tenant_id=tenant_id,
        organization_id=organization_id,
        name=name,
        status="in_progress",
        created_by=actor_id,
        created_at=now,
        carry_over_from=carry_over_from,
    )
    session.add(assessment)
    session.flush()
    run = WorkflowRun(
        assessment_id=assessment.id,
        active_assessment_id=assessment.id,
        tenant_id=tenant_id,
        organization_id=organization_id,
        status=status,
        current_step=current_step,
        context={} if context is None else context,
        version=1,
        trace_id=uuid.uuid4().hex if trace_id is None else trace_id,
        started_by=actor_id,
        start_idempotency_key=f"start-{uuid.uuid4()}",
        start_request_hash="0" * 64,
        created_at=now,
        updated_at=now,
    )
    session.add(run)
    return assessment, run


@contextmanager
def open_kit(tmp_path: Path, *, assessment_name: str = "FY25 assessment") -> Iterator[Kit]:
    # A copy of the process's migrated file: migrating each kit's took most of a second.
    tmp_path.mkdir(parents=True, exist_ok=True)  # a bench's folder may not exist yet
    shutil.copyfile(migrated_sqlite(), tmp_path / "t.db")
    url = "sqlite:///" + str(tmp_path / "t.db")
    engine = make_engine(url)
    session = Session(engine, expire_on_commit=False)
    try:
        assessment, run = add_assessment_and_run(session, assessment_name)
        session.commit()
        yield Kit(session=session, storage_dir=tmp_path, assessment=assessment, run=run)
    finally:
        session.close()
        engine.dispose()


@contextmanager
def kit_database_for_this_process(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kit]:
    """This process's own transactions (a job's Prepare, its batches) open the kit's
    database, as a worker's open the fleet's."""
    kit.session.commit()
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", str(kit.session.get_bind().engine.url))
    reset_settings()
    dispose_engines()
    try:
        yield kit
    finally:
        dispose_engines()
        reset_settings()
