"""The risk register of an organisation (ISO/IEC 27001 6.1.2, 6.1.3), carried across its
assessments.

A risk is reached through any assessment of its organisation: the register is the
organisation's, the assessment is where the change was made (and whose run's audit trail
records it). Each change is a new version, the history is read as written; a change to a
risk's content clears its acceptance, since the residual risk accepted is no longer the
one held. Acceptance is by a person other than the risk's owner (separation of duties).
SCF control ids and framework requirement ids are checked against the catalogues a run
starting now would pin.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.model import SCF_NAME, LoadedCatalog
from orchestrator.catalog.scf_frameworks import requirement_of
from orchestrator.contracts import risk_method
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    ConcurrentUpdate,
    InvalidInput,
    NotFound,
    SeparationOfDuties,
    UnknownCatalogueId,
)
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.risk_method import RiskChange, TreatmentOption
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Assessment, WorkflowRun
from orchestrator.db.risk_models import Risk, RiskVersion
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import aware
from orchestrator.engine.audit_rows import append_audit
from orchestrator.service.producer import load_assessment


class RequirementRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    framework: str
    requirement_id: str


class RiskContent(BaseModel):
    """What a person states about a risk; every version holds all of it."""

    model_config = ConfigDict(frozen=True)

    title: str
    asset: str
    threat: str
    vulnerability: str
    likelihood: int
    impact: int
    owner: str
    treatment: TreatmentOption
    treatment_plan: str = ""
    controls: list[str] = []
    requirements: list[RequirementRef] = []
    residual_likelihood: int | None = None
    residual_impact: int | None = None


class RiskVersionView(RiskContent):
    risk_id: uuid.UUID
    organization_id: str
    version: int
    change: RiskChange
    assessment_id: uuid.UUID
    score: int
    level: str
    residual_score: int | None
    residual_level: str | None
    accepted_by: str | None
    accepted_at: datetime | None
    acceptance_note: str | None
    actor_id: str
    created_at: datetime


class RiskRegister(BaseModel):
    """An organisation's register: its method stated, its risks at their newest version."""

    tenant_id: str
    organization_id: str
    method: dict[str, Any]
    risks: list[RiskVersionView]


def view_of(risk: Risk, row: RiskVersion) -> RiskVersionView:
    residual = row.residual_likelihood is not None and row.residual_impact is not None
    rl, ri = row.residual_likelihood or 0, row.residual_impact or 0
    return RiskVersionView(
        **dict(_content_of(row)),
        risk_id=risk.id,
        organization_id=risk.organization_id,
        version=row.version,
        change=RiskChange(row.change),
        assessment_id=row.assessment_id,
        score=risk_method.score(row.likelihood, row.impact),
        level=risk_method.level(row.likelihood, row.impact),
        residual_score=risk_method.score(rl, ri) if residual else None,
        residual_level=risk_method.level(rl, ri) if residual else None,
        accepted_by=row.accepted_by,
        accepted_at=aware(row.accepted_at) if row.accepted_at else None,
        acceptance_note=row.acceptance_note,
        actor_id=row.actor_id,
        created_at=aware(row.created_at),
    )


def _check_scale(name: str, value: int | None) -> None:
    if value is not None and not risk_method.SCALE_MIN <= value <= risk_method.SCALE_MAX:
        raise InvalidInput(
            f"{name} {value} is off the scale {risk_method.SCALE_MIN}-{risk_method.SCALE_MAX}",
            field=name,
        )


def check_content(content: RiskContent) -> None:
    """The rules no schema states: the scale, the catalogue's ids, residual both or none."""
    for name in ("likelihood", "impact", "residual_likelihood", "residual_impact"):
        _check_scale(name, getattr(content, name))
    if (content.residual_likelihood is None) != (content.residual_impact is None):
        raise InvalidInput("residual likelihood and impact are stated together or not at all")
    if not content.controls and not content.requirements:
        return
    # Read outside any write: the shipped catalogue is parsed once per process.
    with read_transaction() as session:
        catalogs = registry.pinned(session, None)
    _check_ids(content, catalogs)


def _check_ids(content: RiskContent, catalogs: list[LoadedCatalog]) -> None:
    scf = next((c for c in catalogs if c.info.name == SCF_NAME), None)
    unknown = [c for c in content.controls if scf is None or scf.control(c) is None]
    if unknown:
        raise UnknownCatalogueId(
            f"not SCF control ids of the current catalogue: {', '.join(unknown)}",
            unknown_controls=unknown,
        )
    for ref in content.requirements:
        framework = next(
            (f for c in catalogs if (f := c.framework(ref.framework)) is not None), None
        )
        if framework is None:
            raise UnknownCatalogueId(f"no framework {ref.framework!r} in the current catalogues")
        # A requirement whose sub-items the catalogue lists (6.1.2 of 6.1.2(a)...) is one
        # too: drafts assess it once, and its findings propose risks naming it.
        known = {r.id for r in framework.requirements}
        if ref.requirement_id not in known | {requirement_of(r) for r in known}:
            raise UnknownCatalogueId(
                f"{ref.framework} has no requirement {ref.requirement_id!r}",
                framework=ref.framework,
                requirement_id=ref.requirement_id,
            )


def audit_change(
    session: Session,
    assessment: Assessment,
    risk: Risk,
    row: RiskVersion,
    event: AuditEventType,
) -> None:
    """On the assessment's active run, else its latest; with no run yet the version row
    is the whole record (as a document judgement's amendment is)."""
    run = session.scalar(
        select(WorkflowRun)
        .where(WorkflowRun.assessment_id == assessment.id)
        .order_by((WorkflowRun.active_assessment_id.is_(None)).asc(), WorkflowRun.created_at.desc())
        .limit(1)
    )
    if run is None:
        return
    details = {
        "risk_id": str(risk.id),
        "version": row.version,
        "title": row.title,
        "owner": row.owner,
        "treatment": row.treatment,
        "likelihood": row.likelihood,
        "impact": row.impact,
        "level": risk_method.level(row.likelihood, row.impact),
        "accepted_by": row.accepted_by,
    }
    append_audit(session, run, event, None, details, row.created_at, row.actor_id)


def _version(
    risk: Risk,
    assessment_id: uuid.UUID,
    content: RiskContent,
    change: RiskChange,
    actor: Actor,
    now: datetime,
    **acceptance: Any,
) -> RiskVersion:
    return RiskVersion(
        risk_id=risk.id,
        version=risk.version,
        change=change.value,
        assessment_id=assessment_id,
        title=content.title,
        asset=content.asset,
        threat=content.threat,
        vulnerability=content.vulnerability,
        likelihood=content.likelihood,
        impact=content.impact,
        owner=content.owner,
        treatment=content.treatment.value,
        treatment_plan=content.treatment_plan,
        controls=list(content.controls),
        requirements=[ref.model_dump() for ref in content.requirements],
        residual_likelihood=content.residual_likelihood,
        residual_impact=content.residual_impact,
        accepted_by=acceptance.get("accepted_by"),
        accepted_at=acceptance.get("accepted_at"),
        acceptance_note=acceptance.get("acceptance_note"),
        actor_id=actor.actor_id,
        created_at=now,
    )


def newest_version(session: Session, risk: Risk) -> RiskVersion:
    row = session.scalar(
        select(RiskVersion).where(
            RiskVersion.risk_id == risk.id, RiskVersion.version == risk.version
        )
    )
    assert row is not None  # a risk is written with its first version
    return row


def load_risk(session: Session, actor: Actor, risk_id: uuid.UUID, *, lock: bool = False) -> Risk:
    risk = session.get(Risk, risk_id, with_for_update=lock)
    if risk is None or risk.tenant_id != actor.tenant_id or not actor.sees(risk.organization_id):
        raise NotFound(f"risk {risk_id} not found")
    return risk


def _assessment_of(
    session: Session, actor: Actor, assessment_id: uuid.UUID, risk: Risk
) -> Assessment:
    assessment = load_assessment(session, actor, assessment_id)
    if assessment.organization_id != risk.organization_id:
        raise InvalidInput(
            f"assessment {assessment_id} is not of the risk's organisation {risk.organization_id!r}"
        )
    return assessment


def _content_of(row: RiskVersion) -> RiskContent:
    return RiskContent(
        title=row.title,
        asset=row.asset,
        threat=row.threat,
        vulnerability=row.vulnerability,
        likelihood=row.likelihood,
        impact=row.impact,
        owner=row.owner,
        treatment=TreatmentOption(row.treatment),
        treatment_plan=row.treatment_plan,
        controls=list(row.controls),
        requirements=[RequirementRef(**ref) for ref in row.requirements],
        residual_likelihood=row.residual_likelihood,
        residual_impact=row.residual_impact,
    )


@retry_busy
def create_risk(actor: Actor, assessment_id: uuid.UUID, content: RiskContent) -> RiskVersionView:
    """A new risk in the register of the assessment's organisation: its version 1."""
    check_content(content)
    with transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        return record_risk(session, actor, assessment, content)


def record_risk(
    session: Session, actor: Actor, assessment: Assessment, content: RiskContent
) -> RiskVersionView:
    """Version 1 of a new risk, in the caller's transaction (its content checked before)."""
    now = utcnow()
    risk = Risk(
        tenant_id=assessment.tenant_id,
        organization_id=assessment.organization_id,
        version=1,
        created_by=actor.actor_id,
        created_at=now,
        updated_at=now,
    )
    session.add(risk)
    session.flush()
    row = _version(risk, assessment.id, content, RiskChange.CREATED, actor, now)
    session.add(row)
    session.flush()
    audit_change(session, assessment, risk, row, AuditEventType.LIFECYCLE_WORKFLOW_RISK_RECORDED)
    return view_of(risk, row)


@retry_busy
def update_risk(
    actor: Actor,
    risk_id: uuid.UUID,
    assessment_id: uuid.UUID,
    content: RiskContent,
    *,
    expected_version: int | None = None,
) -> RiskVersionView:
    """The risk's next version, with this content; its acceptance is cleared."""
    check_content(content)
    now = utcnow()
    with transaction() as session:
        risk = load_risk(session, actor, risk_id, lock=True)
        assessment = _assessment_of(session, actor, assessment_id, risk)
        _expect(risk, expected_version)
        risk.version += 1
        risk.updated_at = now
        row = _version(risk, assessment.id, content, RiskChange.UPDATED, actor, now)
        session.add(row)
        session.flush()
        audit_change(session, assessment, risk, row, AuditEventType.LIFECYCLE_WORKFLOW_RISK_REVISED)
        return view_of(risk, row)


def _expect(risk: Risk, expected_version: int | None) -> None:
    if expected_version is not None and expected_version != risk.version:
        raise ConcurrentUpdate(
            f"risk {risk.id} is at version {risk.version}, not {expected_version}: "
            "read it again and decide on what it now says",
            version=risk.version,
        )


@retry_busy
def accept_risk(
    actor: Actor,
    risk_id: uuid.UUID,
    assessment_id: uuid.UUID,
    *,
    note: str,
    expected_version: int | None = None,
) -> RiskVersionView:
    """The caller accepts the risk's residual risk: a new version recording who and when.
    Refused to the risk's owner (separation of duties)."""
    now = utcnow()
    with transaction() as session:
        risk = load_risk(session, actor, risk_id, lock=True)
        assessment = _assessment_of(session, actor, assessment_id, risk)
        _expect(risk, expected_version)
        current = newest_version(session, risk)
        if current.owner.casefold() == actor.actor_id.casefold():
            raise SeparationOfDuties(
                f"{actor.actor_id} owns risk {risk.id}: its residual risk is accepted by "
                "another person with the authority for it",
                owner=current.owner,
            )
        risk.version += 1
        risk.updated_at = now
        row = _version(
            risk,
            assessment.id,
            _content_of(current),
            RiskChange.ACCEPTED,
            actor,
            now,
            accepted_by=actor.actor_id,
            accepted_at=now,
            acceptance_note=note,
        )
        session.add(row)
        session.flush()
        audit_change(
            session, assessment, risk, row, AuditEventType.LIFECYCLE_WORKFLOW_RISK_ACCEPTED
        )
        return view_of(risk, row)


def get_risk(actor: Actor, risk_id: uuid.UUID) -> RiskVersionView:
    with read_transaction() as session:
        risk = load_risk(session, actor, risk_id)
        return view_of(risk, newest_version(session, risk))


def risk_history(actor: Actor, risk_id: uuid.UUID) -> list[RiskVersionView]:
    """Every version of the risk, oldest first."""
    with read_transaction() as session:
        risk = load_risk(session, actor, risk_id)
        rows = session.scalars(
            select(RiskVersion).where(RiskVersion.risk_id == risk.id).order_by(RiskVersion.version)
        ).all()
        return [view_of(risk, row) for row in rows]


def risk_register(actor: Actor, assessment_id: uuid.UUID) -> RiskRegister:
    """The register of the assessment's organisation, highest risk first."""
    with read_transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        pairs = session.execute(
            select(Risk, RiskVersion)
            .join(
                RiskVersion,
                (RiskVersion.risk_id == Risk.id) & (RiskVersion.version == Risk.version),
            )
            .where(
                Risk.tenant_id == assessment.tenant_id,
                Risk.organization_id == assessment.organization_id,
            )
            .order_by(Risk.created_at, Risk.id)
        ).all()
        views = [view_of(risk, row) for risk, row in pairs]
        tenant_id, organization_id = assessment.tenant_id, assessment.organization_id
    views.sort(key=lambda view: -view.score)  # stable: equal scores keep their order
    return RiskRegister(
        tenant_id=tenant_id,
        organization_id=organization_id,
        method=risk_method.method_statement(),
        risks=views,
    )
