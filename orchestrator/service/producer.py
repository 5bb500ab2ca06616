"""The Python producer: create assessments, upload documents, start runs, send signals.

Every write is durable before any message is sent: the inbox row commits, then the
coordinator is woken. The HTTP API calls these same functions.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.catalog.categories import UnknownCategory
from orchestrator.catalog.door import check_categories, check_selection
from orchestrator.catalog.matching import UnknownFramework
from orchestrator.catalog.registry import current_pins
from orchestrator.contracts.audit import SYSTEM_ACTOR
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    ActiveRunExists,
    CarryOverRefused,
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    PolicyRefused,
    SignalRejected,
    UnknownCategorySelected,
    UnknownFrameworkSelected,
)
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.origins import StartOrigin
from orchestrator.contracts.signals import (
    INTERNAL_SIGNALS,
    OPERATOR_SIGNALS,
    SignalEnvelope,
    SignalFate,
    SignalType,
)
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Assessment, Document, WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import insert_signal
from orchestrator.engine.precheck import reject_if_invalid
from orchestrator.engine.run_rows import RUNS, RunRecord, RunRow
from orchestrator.engine.tenant_order import wake_behind
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.policies import parse_policies
from orchestrator.lifecycle.selection import selected_categories, selected_frameworks
from orchestrator.observability import events as observe
from orchestrator.service.authority import RunAuthority
from orchestrator.service.read_models import AssessmentView, RunView, SignalReceipt
from orchestrator.service.start_origins import StartRecord, check_origin_ref, parse_origin


def new_trace_id() -> str:
    return uuid.uuid4().hex


# --- assessments ---------------------------------------------------------------------------


@retry_busy
def create_assessment(
    actor: Actor, organization_id: str, name: str, *, carry_over_from: uuid.UUID | None = None
) -> AssessmentView:
    require_nul_free(organization_id=organization_id, name=name)
    name = name.strip()
    if not name or len(name) > 300:
        raise InvalidInput("an assessment needs a name of 1 to 300 characters")
    if not organization_id.strip():
        raise InvalidInput("organization_id must not be empty")
    if not actor.sees(organization_id):
        raise InvalidInput(f"organization {organization_id!r} is not one this caller may use")
    with transaction() as session:
        if carry_over_from is not None:
            previous = load_assessment(session, actor, carry_over_from)
            if previous.organization_id != organization_id:
                raise CarryOverRefused(
                    "a carry-over comes from an assessment of the same organization"
                )
        row = Assessment(
            tenant_id=actor.tenant_id,
            organization_id=organization_id,
            name=name,
            status="draft",
            created_by=actor.actor_id,
            created_at=utcnow(),
            carry_over_from=carry_over_from,
        )
        session.add(row)
        session.flush()
        return AssessmentView.of(row)


def load_assessment(session: Session, actor: Actor, assessment_id: uuid.UUID) -> Assessment:
    row = session.get(Assessment, assessment_id)
    if row is None or row.tenant_id != actor.tenant_id or not actor.sees(row.organization_id):
        raise NotFound(f"assessment {assessment_id} not found")
    return row


def load_document(
    session: Session, actor: Actor, assessment_id: uuid.UUID, document_id: uuid.UUID
) -> Document:
    load_assessment(session, actor, assessment_id)
    row = session.get(Document, document_id)
    if row is None or row.assessment_id != assessment_id:
        raise NotFound(f"assessment {assessment_id} has no document {document_id}")
    return row


_RUN_BY_ID = select(RUNS).where(RUNS.c.id == bindparam("run_id"))


def load_run(session: Session, actor: Actor, run_id: uuid.UUID) -> RunRecord:
    """The run as a read-only row (Core: every signal sent reads one)."""
    row = session.execute(_RUN_BY_ID, {"run_id": run_id}).first()
    if row is None or row.tenant_id != actor.tenant_id or not actor.sees(row.organization_id):
        raise NotFound(f"workflow run {run_id} not found")
    return row


# --- runs ------------------------------------------------------------------------------------


@retry_busy
def start_lifecycle(
    actor: Actor,
    assessment_id: uuid.UUID,
    idempotency_key: str,
    *,
    policies: dict[str, Any] | None = None,
    trace_id: str | None = None,
    kick: Kick | None = None,
    origin: StartOrigin | str = StartOrigin.API,
    origin_ref: str | None = None,
    authority: RunAuthority | None = None,
) -> RunView:
    """Start the assessment's lifecycle run. Same key and input: the same run back.

    `policies` sets signoff policies per artifact kind, e.g.
    {"soa": {"mode": "n_of_m", "approvers": ["user:a", "user:b", "user:c"], "required": 2}}.
    `origin` says how it was started (`origin_ref` names the schedule or the earlier run
    it follows); `authority` is who it acts for outside the database (default: the actor,
    with no API key). The run pins the newest lifecycle definition this process ships.
    `kick` replaces the coordinator's wake-up (tests); the default one keeps the tenant
    order (orchestrator.engine.tenant_order).
    """
    if not idempotency_key.strip():
        raise InvalidInput("idempotency_key must not be empty")
    require_nul_free(
        idempotency_key=idempotency_key, trace_id=trace_id, policies=policies, origin_ref=origin_ref
    )
    start = StartRecord(
        parse_origin(origin, origin_ref), origin_ref, authority or RunAuthority.of_actor(actor)
    )
    try:
        parsed = parse_policies(policies)
    except (ValueError, TypeError) as error:
        raise PolicyRefused(f"invalid approval policies: {error}") from error
    policy_json = {kind.value: policy.to_json() for kind, policy in parsed.items()}
    request_hash = hashlib.sha256(
        json.dumps(
            {"assessment_id": str(assessment_id), "policies": policy_json}, sort_keys=True
        ).encode()
    ).hexdigest()
    try:
        with transaction() as session:
            existing = session.scalar(
                select(WorkflowRun).where(
                    WorkflowRun.tenant_id == actor.tenant_id,
                    WorkflowRun.start_idempotency_key == idempotency_key,
                )
            )
            if existing is not None:
                if existing.start_request_hash != request_hash:
                    raise IdempotencyConflict(
                        "idempotency key already started a run with different input",
                        run_id=str(existing.id),
                    )
                return RunView.of(existing)
            run = _create_run(
                session,
                actor,
                assessment_id,
                idempotency_key,
                request_hash,
                trace_id or new_trace_id(),
                policy_json,
                start,
            )
            view = RunView.of(run)
            # Behind the tenant's other starts still waiting, ahead of other backlogs.
            behind = wake_behind(session, run.id)
    except IntegrityError as error:
        raise ActiveRunExists(
            f"assessment {assessment_id} already has an active lifecycle run"
        ) from error
    observe.run_started(view)
    if kick is None:
        fleet.kick(view.id, behind)
    else:
        kick(view.id)
    return view


def _create_run(
    session: Session,
    actor: Actor,
    assessment_id: uuid.UUID,
    key: str,
    request_hash: str,
    trace_id: str,
    policies: dict[str, Any],
    start: StartRecord,
) -> WorkflowRun:
    assessment = load_assessment(session, actor, assessment_id)
    check_origin_ref(session, actor, assessment.id, start)
    active = session.scalar(
        select(WorkflowRun.id).where(WorkflowRun.active_assessment_id == assessment_id)
    )
    if active is not None:
        raise ActiveRunExists(
            f"assessment {assessment_id} already has an active run {active}", run_id=str(active)
        )
    now = utcnow()
    run = WorkflowRun(
        id=new_id(),
        assessment_id=assessment.id,
        active_assessment_id=assessment.id,
        tenant_id=actor.tenant_id,
        organization_id=assessment.organization_id,
        status="pending",
        current_step=None,
        context={},
        version=1,
        trace_id=trace_id,
        started_by=actor.actor_id,
        start_idempotency_key=key,
        start_request_hash=request_hash,
        origin=start.origin.value,
        origin_ref=start.origin_ref,
        authority=start.authority.model_dump(),
        created_at=now,
        updated_at=now,
    )
    session.add(run)
    session.flush()
    if assessment.status == "draft" or start.origin is StartOrigin.REASSESSMENT:
        # A reassessment opens the closed assessment for its next cycle.
        assessment.status = "active"
    definition = definitions.current()
    start_signal = signal_envelope(
        run,
        actor.actor_id,
        SignalType.WORKFLOW_START_REQUESTED,
        f"start:{key}",
        trace_id,
        payload={
            "assessment": {"name": assessment.name, "status": assessment.status},
            "approval_policies": policies,
            # The run keeps these catalogue versions, and this definition, for life.
            "catalogs": current_pins(session),
            "definition": {"version": definition.version, "hash": definition.content_hash},
            "origin": start.origin.value,
        },
    )
    insert_signal(session, start_signal)
    documents = session.scalar(
        select(func.count()).select_from(Document).where(Document.assessment_id == assessment.id)
    )
    if documents:
        # Documents uploaded before the run started count as the upload signal.
        insert_signal(
            session,
            signal_envelope(
                run,
                SYSTEM_ACTOR,
                SignalType.DOCUMENTS_UPLOADED,
                "documents_uploaded:initial",
                trace_id,
                payload={"document_count": documents},
            ),
        )
    return run


def signal_envelope(
    run: RunRow,
    actor_id: str,
    signal_type: SignalType,
    key: str,
    trace_id: str,
    payload: dict[str, Any] | None = None,
    approval_event_id: uuid.UUID | None = None,
) -> SignalEnvelope:
    try:
        return SignalEnvelope(
            type=signal_type,
            run_id=run.id,
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            trace_id=trace_id,
            actor_id=actor_id,
            idempotency_key=key,
            approval_event_id=approval_event_id,
            payload=payload or {},
            received_at=utcnow(),
        )
    except ValidationError as error:
        raise InvalidInput(
            "invalid signal", errors=error.errors(include_url=False, include_context=False)
        ) from error


# --- signals -------------------------------------------------------------------------------------


@retry_busy
def send_signal(
    actor: Actor,
    run_id: uuid.UUID,
    signal_type: str | SignalType,
    idempotency_key: str,
    *,
    payload: dict[str, Any] | None = None,
    approval_event_id: uuid.UUID | None = None,
    trace_id: str | None = None,
    kick: Kick = fleet.kick,
) -> SignalReceipt:
    """Record a signal durably, then wake the coordinator. Duplicates change nothing."""
    kind = public_signal_type(signal_type)
    if kind is SignalType.FRAMEWORK_SELECTED:
        with transaction() as session:
            run = load_run(session, actor, run_id)
            # A malformed signal (a NUL, a bad key) is told so first, as for any signal.
            signal_envelope(
                run,
                actor.actor_id,
                kind,
                idempotency_key,
                trace_id or run.trace_id,
                payload,
                approval_event_id,
            )
            _refuse_unknown_frameworks(session, run, payload or {})
    return record_signal(
        actor,
        run_id,
        kind,
        idempotency_key,
        payload=payload,
        approval_event_id=approval_event_id,
        trace_id=trace_id,
        kick=kick,
    )


def record_signal(
    actor: Actor,
    run_id: uuid.UUID,
    kind: SignalType,
    idempotency_key: str,
    *,
    payload: dict[str, Any] | None = None,
    approval_event_id: uuid.UUID | None = None,
    trace_id: str | None = None,
    kick: Kick = fleet.kick,
) -> SignalReceipt:
    """Inbox first. A signal that is already invalid for the run is recorded as rejected
    and the caller gets the reason at once; valid ones are applied by the coordinator."""
    with transaction() as session:
        run = load_run(session, actor, run_id)
        envelope = signal_envelope(
            run,
            actor.actor_id,
            kind,
            idempotency_key,
            trace_id or run.trace_id,
            payload,
            approval_event_id,
        )
        recorded = insert_signal(session, envelope)
        if not (recorded.duplicate or recorded.conflict):
            recorded = reject_if_invalid(session, run, envelope, recorded)
        view = RunView.of(run)
    observe.signal_recorded(envelope, recorded.fate.value, recorded.duplicate)
    if recorded.conflict:
        raise IdempotencyConflict(
            recorded.reason or "idempotency conflict", signal_id=str(recorded.signal_id)
        )
    if recorded.fate is SignalFate.REJECTED:
        raise SignalRejected(
            recorded.reason or "signal rejected", signal_id=str(recorded.signal_id)
        )
    if not recorded.duplicate:
        kick(run_id)
    return SignalReceipt(
        signal_id=recorded.signal_id,
        fate=recorded.fate,
        reason=recorded.reason,
        duplicate=recorded.duplicate,
        run=view,
    )


def _refuse_unknown_frameworks(session: Session, run: RunRecord, payload: dict[str, Any]) -> None:
    """A framework the run's catalogues do not know is refused before anything is recorded."""
    names = selected_frameworks(payload)
    if not names:
        return  # the lifecycle rejects (and records) an empty choice itself
    try:
        check_selection(session, run.context, names)
    except UnknownFramework as error:
        raise UnknownFrameworkSelected(
            str(error),
            unknown=error.unknown,
            suggestions=error.suggestions,
            available=error.available,
        ) from error
    selection = selected_categories(payload)
    if not selection:
        return  # none chosen, or malformed (the lifecycle rejects and records that)
    try:
        check_categories(session, run.context, names, selection)
    except UnknownCategory as error:
        raise UnknownCategorySelected(str(error)) from error


def public_signal_type(signal_type: str | SignalType) -> SignalType:
    try:
        kind = SignalType(signal_type)
    except ValueError as error:
        known = ", ".join(sorted(t.value for t in SignalType if t not in INTERNAL_SIGNALS))
        raise InvalidInput(f"unknown signal type {signal_type!r}; known: {known}") from error
    if kind in INTERNAL_SIGNALS:
        raise InvalidInput(f"{kind.value} is sent by the fleet itself, not by callers")
    if kind in OPERATOR_SIGNALS:
        raise InvalidInput(
            f"{kind.value} is an operator command: use the retry, reprocess, "
            "new-version or migrate operation"
        )
    return kind


@retry_busy
def get_run(actor: Actor, run_id: uuid.UUID) -> RunView:
    with read_transaction() as session:
        return RunView.of(load_run(session, actor, run_id))


@retry_busy
def get_lifecycle(actor: Actor, assessment_id: uuid.UUID) -> RunView:
    """The assessment's most recent lifecycle run."""
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        run = session.scalar(
            select(WorkflowRun)
            .where(
                WorkflowRun.assessment_id == assessment_id, WorkflowRun.tenant_id == actor.tenant_id
            )
            .order_by(WorkflowRun.created_at.desc())
            .limit(1)
        )
        if run is None:
            raise NotFound(f"assessment {assessment_id} has no lifecycle run")
        return RunView.of(run)
