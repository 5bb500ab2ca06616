"""Read-side queries for listings: every one is scoped to the caller's tenant (and orgs).

Child records of a run (steps, signals, jobs, audit, artifacts, approvals) are reached
through `load_run`, so another tenant's run id answers NotFound before anything is read.
Long listings use keyset pagination with an opaque cursor.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session, defer

from orchestrator.contracts.errors import InvalidCursor, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import (
    ApprovalEvent,
    Artifact,
    Assessment,
    AuditEvent,
    Document,
    InboxSignal,
    Job,
    StepExecution,
    WorkflowRun,
)
from orchestrator.db.session import SharedRead, one_read, read_transaction
from orchestrator.service.document_waits import UPLOADED, upload_wait
from orchestrator.service.producer import load_assessment, load_run
from orchestrator.service.read_models import (
    ApprovalRecordView,
    ArtifactView,
    AssessmentView,
    AuditEventView,
    DocumentView,
    JobView,
    RunView,
    SignalView,
    StepView,
)

T = TypeVar("T")
MAX_PAGE = 200


@dataclass(frozen=True)
class KeysetPage(Generic[T]):
    items: list[T]
    next_cursor: str | None


# --- cursors -------------------------------------------------------------------------------


def encode_cursor(*values: Any) -> str:
    raw = json.dumps([str(v) for v in values], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, arity: int) -> list[str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw)
    except (binascii.Error, ValueError) as error:
        raise InvalidCursor("the cursor is not one this API issued") from error
    if (
        not isinstance(values, list)
        or len(values) != arity
        or not all(isinstance(v, str) for v in values)
    ):
        raise InvalidCursor("the cursor is not one this API issued")
    return values


def _time_and_id(cursor: str) -> tuple[datetime, uuid.UUID]:
    created, ident = decode_cursor(cursor, 2)
    try:
        return datetime.fromisoformat(created), uuid.UUID(ident)
    except ValueError as error:
        raise InvalidCursor("the cursor is not one this API issued") from error


def _sequence(cursor: str) -> int:
    (value,) = decode_cursor(cursor, 1)
    if not value.isdigit():
        raise InvalidCursor("the cursor is not one this API issued")
    return int(value)


def _limit(limit: int) -> int:
    return max(1, min(limit, MAX_PAGE))


@contextmanager
def reads_in_one_transaction() -> Iterator[SharedRead]:
    """Every read of the service's in this block (a console page's: the sign-in check, the
    run, the drafts, comments, claims) joins one read transaction, one snapshot
    (`orchestrator.db.session.one_read`)."""
    with one_read() as shared:
        yield shared


# --- assessments -----------------------------------------------------------------------------


@retry_busy
def get_assessment(actor: Actor, assessment_id: uuid.UUID) -> AssessmentView:
    with read_transaction() as session:
        return AssessmentView.of(load_assessment(session, actor, assessment_id))


def _newest_first(
    query: Select[Any],
    model: type[Assessment] | type[WorkflowRun],
    actor: Actor,
    cursor: str | None,
) -> Select[Any]:
    """The caller's organizations only, past the cursor, newest first (keyset paging on
    created_at, id)."""
    if actor.organizations is not None:
        query = query.where(model.organization_id.in_(actor.organizations))
    if cursor:
        at, ident = _time_and_id(cursor)
        query = query.where(
            or_(model.created_at < at, and_(model.created_at == at, model.id < ident))
        )
    return query.order_by(model.created_at.desc(), model.id.desc())


@retry_busy
def list_assessments(
    actor: Actor, *, limit: int = 50, cursor: str | None = None
) -> KeysetPage[AssessmentView]:
    """Newest first."""
    query = _newest_first(
        select(Assessment).where(Assessment.tenant_id == actor.tenant_id), Assessment, actor, cursor
    )
    with read_transaction() as session:
        rows = _fetch(session, query, limit)
        views = [AssessmentView.of(row) for row in rows]
    return _page(views, limit, lambda v: (v.created_at.isoformat(), v.id))


@retry_busy
def list_documents(actor: Actor, assessment_id: uuid.UUID) -> list[DocumentView]:
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        rows = session.scalars(
            select(Document)
            .where(Document.assessment_id == assessment_id)
            .order_by(Document.created_at, Document.id)
        )
        wait = upload_wait(session, assessment_id)
        return [
            DocumentView.model_validate(r).model_copy(
                update={"waiting_for": wait if r.status == UPLOADED else None}
            )
            for r in rows
        ]


# --- runs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFilter:
    status: WorkflowStatus | None = None
    step: str | None = None
    waiting_for_approval: bool | None = None
    assessment_id: uuid.UUID | None = None


@retry_busy
def list_runs(
    actor: Actor, filters: RunFilter = RunFilter(), *, limit: int = 50, cursor: str | None = None
) -> KeysetPage[RunView]:
    """The tenant's runs, newest first, narrowed by the filters."""
    query = _newest_first(
        _run_filters(select(WorkflowRun).where(WorkflowRun.tenant_id == actor.tenant_id), filters),
        WorkflowRun,
        actor,
        cursor,
    )
    with read_transaction() as session:
        views = [RunView.of(row) for row in _fetch(session, query, limit)]
    return _page(views, limit, lambda v: (v.created_at.isoformat(), v.id))


RunQuery = Select[Any]


def _run_filters(query: RunQuery, filters: RunFilter) -> RunQuery:
    waiting = WorkflowStatus.WAITING_FOR_APPROVAL.value
    if filters.status is not None:
        query = query.where(WorkflowRun.status == filters.status.value)
    if filters.step is not None:
        query = query.where(WorkflowRun.current_step == filters.step)
    if filters.waiting_for_approval is True:
        query = query.where(WorkflowRun.status == waiting)
    elif filters.waiting_for_approval is False:
        query = query.where(WorkflowRun.status != waiting)
    if filters.assessment_id is not None:
        query = query.where(WorkflowRun.assessment_id == filters.assessment_id)
    return query


@retry_busy
def list_steps(actor: Actor, run_id: uuid.UUID) -> list[StepView]:
    """Every execution of every step, in the order they began."""
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = session.scalars(
            select(StepExecution).where(StepExecution.run_id == run_id).order_by(StepExecution.id)
        )
        return [StepView.model_validate(r) for r in rows]


@retry_busy
def list_jobs(actor: Actor, run_id: uuid.UUID) -> list[JobView]:
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = session.scalars(
            select(Job).where(Job.run_id == run_id).order_by(Job.created_at, Job.id)
        )
        return [JobView.model_validate(r) for r in rows]


# --- signals and audit -------------------------------------------------------------------------


@retry_busy
def list_signals(
    actor: Actor,
    run_id: uuid.UUID,
    *,
    fate: SignalFate | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> KeysetPage[SignalView]:
    """The run's signals in arrival order, each with its fate."""
    query = select(InboxSignal).where(InboxSignal.run_id == run_id)
    if fate is not None:
        query = query.where(InboxSignal.fate == fate.value)
    if cursor:
        query = query.where(InboxSignal.id > _sequence(cursor))
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = _fetch(session, query.order_by(InboxSignal.id), limit)
        items = [(row.id, _signal_view(row)) for row in rows]
    page = _page(items, limit, lambda item: (item[0],))
    return KeysetPage([view for _, view in page.items], page.next_cursor)


@retry_busy
def get_signal(actor: Actor, run_id: uuid.UUID, signal_id: uuid.UUID) -> SignalView:
    with read_transaction() as session:
        load_run(session, actor, run_id)
        row = session.scalar(
            select(InboxSignal).where(
                InboxSignal.run_id == run_id, InboxSignal.signal_id == signal_id
            )
        )
        if row is None:
            raise NotFound(f"run {run_id} has no signal {signal_id}")
        return _signal_view(row)


def _signal_view(row: InboxSignal) -> SignalView:
    envelope = row.envelope or {}
    return SignalView(
        signal_id=row.signal_id,
        type=row.type,
        idempotency_key=row.idempotency_key,
        fate=SignalFate(row.fate),
        reason=row.reason,
        actor_id=str(envelope.get("actor_id", "")),
        approval_event_id=envelope.get("approval_event_id"),
        payload=envelope.get("payload") or {},
        received_at=row.received_at,
        decided_at=row.decided_at,
    )


@retry_busy
def list_audit(
    actor: Actor, run_id: uuid.UUID, *, limit: int = 50, cursor: str | None = None
) -> KeysetPage[AuditEventView]:
    """The run's audit log, oldest first."""
    query = select(AuditEvent).where(AuditEvent.run_id == run_id)
    if cursor:
        query = query.where(AuditEvent.id > _sequence(cursor))
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        query = query.where(AuditEvent.tenant_id == run.tenant_id)
        views = [
            AuditEventView(
                id=r.id,
                step=r.step,
                event_type=r.event_type,
                actor_id=r.actor_id,
                trace_id=r.trace_id,
                metadata=r.event_metadata or {},
                created_at=r.created_at,
            )
            for r in _fetch(session, query.order_by(AuditEvent.id), limit)
        ]
    return _page(views, limit, lambda v: (v.id,))


# --- artifacts and approvals -----------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactContent:
    view: ArtifactView
    content: dict[str, Any]
    file: Path | None


@retry_busy
def list_artifacts(actor: Actor, run_id: uuid.UUID, kind: str | None = None) -> list[ArtifactView]:
    # A listing never reads the content: a draft's JSON is megabytes on a large assessment.
    query = select(Artifact).options(defer(Artifact.content)).where(Artifact.run_id == run_id)
    if kind is not None:
        query = query.where(Artifact.kind == kind)
    with read_transaction() as session:
        load_run(session, actor, run_id)
        rows = session.scalars(query.order_by(Artifact.created_at, Artifact.kind, Artifact.version))
        return [_artifact_view(row) for row in rows]


@retry_busy
def get_artifact(actor: Actor, run_id: uuid.UUID, artifact_id: uuid.UUID) -> ArtifactContent:
    with read_transaction() as session:
        load_run(session, actor, run_id)
        row = session.scalar(
            select(Artifact).where(Artifact.run_id == run_id, Artifact.id == artifact_id)
        )
        if row is None:
            raise NotFound(f"run {run_id} has no artifact {artifact_id}")
        return _content(row)


@retry_busy
def latest_report(actor: Actor, run_id: uuid.UUID) -> ArtifactContent:
    """The newest report version of the run."""
    with read_transaction() as session:
        load_run(session, actor, run_id)
        row = session.scalar(
            select(Artifact)
            .where(Artifact.run_id == run_id, Artifact.kind == "report")
            .order_by(Artifact.version.desc())
            .limit(1)
        )
        if row is None:
            raise NotFound(f"run {run_id} has no report yet")
        return _content(row)


def _artifact_view(row: Artifact) -> ArtifactView:
    return ArtifactView(
        id=row.id,
        kind=row.kind,
        version=row.version,
        status=row.status,
        media_type=row.media_type,
        sha256=row.sha256,
        has_file=row.storage_path is not None,
        created_by_job_id=row.created_by_job_id,
        created_at=row.created_at,
    )


def _content(row: Artifact) -> ArtifactContent:
    return ArtifactContent(
        view=_artifact_view(row),
        content=dict(row.content or {}),
        file=Path(row.storage_path) if row.storage_path else None,
    )


@retry_busy
def list_approvals(actor: Actor, run_id: uuid.UUID) -> list[ApprovalRecordView]:
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        rows = session.scalars(
            select(ApprovalEvent)
            .where(ApprovalEvent.run_id == run_id, ApprovalEvent.tenant_id == run.tenant_id)
            .order_by(ApprovalEvent.created_at, ApprovalEvent.id)
        )
        return [ApprovalRecordView.model_validate(r) for r in rows]


# --- paging helpers ----------------------------------------------------------------------------


def _fetch(session: Session, query: Select[Any], limit: int) -> list[Any]:
    """One row more than the page, to learn whether another page follows."""
    return list(session.scalars(query.limit(_limit(limit) + 1)))


def _page(items: list[T], limit: int, key: Any) -> KeysetPage[T]:
    size = _limit(limit)
    if len(items) <= size:
        return KeysetPage(items, None)
    kept = items[:size]
    return KeysetPage(kept, encode_cursor(*key(kept[-1])))
