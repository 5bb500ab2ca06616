"""Adopting a new catalogue version: an explicit action that shows the diff and re-opens
exactly the SoA rows it affects.

An assessment uses the catalogue versions its run pinned when it started (or adopted
since): the SCF workbook, and any publication read from its own OSCAL catalogue (SP
800-53). `catalogue_diff` compares the version in use with a target: controls added,
removed and reworded (their verbatim title or description changed), and framework
requirements remapped (their linked SCF controls changed, beyond the removal of a removed
control). `adopt_catalogue` records the adoption (audited, idempotent by key), moves the
assessment's run to the target version and starts a reassessment of the last approved SoA
that re-opens the rows whose requirement was remapped, reworded or removed, or whose
linked controls were reworded or removed; every other row is carried over as approved.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.catalog import registry
from orchestrator.catalog.model import LoadedCatalog
from orchestrator.catalog.service import CatalogLookupError, catalog_version
from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    NothingToReopen,
)
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.busy import retry_busy
from orchestrator.db.continuous_models import CatalogueAdoption, Reassessment
from orchestrator.db.models import Artifact, Job, WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.engine.audit_rows import append_audit
from orchestrator.service.approved_artifacts import last_approved_soa
from orchestrator.service.producer import load_assessment
from orchestrator.service.reassessments import row_key, start_reassessment

ADOPTION_TRIGGER = "catalogue_adoption"
#: The text of a control compared verbatim.
TEXT_FIELDS = ("title", "description")


class AdoptionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    assessment_id: uuid.UUID
    catalog_name: str
    from_catalog_id: uuid.UUID
    to_catalog_id: uuid.UUID
    reason: str
    reopened_rows: list[str]
    reassessment_id: uuid.UUID | None
    status: str
    """`adopted` (a reassessment re-opens the rows), `no_rows` (nothing the SoA uses
    changed) or `already_in_use` (the target is the version in use: nothing happened)."""
    duplicate: bool = False
    diff: dict[str, Any]
    created_by: str | None
    created_at: datetime | None


def run_pins(session: Session, run: WorkflowRun) -> dict[str, str]:
    """The catalogue versions a run uses: its context's pins (adoptions included), else
    those its drafting jobs were pinned to, else the current ones."""
    pins = (run.context or {}).get("catalogs")
    if pins:
        return {str(k): str(v) for k, v in dict(pins).items()}
    for request in session.scalars(
        select(Job.request).where(Job.run_id == run.id, Job.step == Step.CREATE_SOA_DRAFT.value)
    ):
        found = (request.get("parameters") or {}).get("catalogs")
        if found:
            return {str(k): str(v) for k, v in dict(found).items()}
    return registry.current_pins(session)


def diff_versions(old: LoadedCatalog, new: LoadedCatalog) -> dict[str, Any]:
    """Controls added, removed, reworded (verbatim text before and after) and requirements
    remapped, from `old` to `new`."""
    before = {c.id: c for c in old.controls}
    after = {c.id: c for c in new.controls}
    removed = [i for i in before if i not in after]
    gone = set(removed)
    reworded = []
    for control_id in (i for i in after if i in before):
        a, b = before[control_id], after[control_id]
        fields = [f for f in TEXT_FIELDS if getattr(a, f) != getattr(b, f)]
        if fields:
            reworded.append(
                {
                    "control_id": control_id,
                    "fields": fields,
                    "before": {f: getattr(a, f) for f in fields},
                    "after": {f: getattr(b, f) for f in fields},
                }
            )
    remapped = []
    new_frameworks = {f.name: f for f in new.frameworks}
    for framework in old.frameworks:
        other = new_frameworks.get(framework.name)
        if other is None:
            continue
        links = {r.id: r.control_ids for r in other.requirements}
        for requirement in framework.requirements:
            if requirement.id not in links:
                continue
            was = [c for c in requirement.control_ids if c not in gone]
            now = list(links[requirement.id])
            if set(was) != set(now):
                remapped.append(
                    {
                        "framework": framework.name,
                        "requirement_id": requirement.id,
                        "before": list(requirement.control_ids),
                        "after": now,
                    }
                )
    return {
        "from": old.info.as_dict(),
        "to": new.info.as_dict(),
        "added": [i for i in after if i not in before],
        "removed": removed,
        "reworded": reworded,
        "remapped": remapped,
    }


#: Frameworks whose requirements are the catalogue's own controls: SCF itself, and a
#: publication read from its OSCAL catalogue (SP 800-53: a requirement is a control).
OWN_CONTROLS = frozenset({"scf", "oscal_catalog"})


def affected_rows(
    rows: list[dict[str, Any]], diff: dict[str, Any], catalog: LoadedCatalog
) -> list[str]:
    """The SoA rows adopting a version of `catalog` re-opens: their requirement remapped,
    a linked SCF control reworded or removed, or the requirement itself reworded or removed
    (a framework whose requirements are `catalog`'s controls)."""
    remapped = {f"{r['framework']} {r['requirement_id']}" for r in diff["remapped"]}
    controls = set(diff["removed"]) | {r["control_id"] for r in diff["reworded"]}
    own = {f.name for f in catalog.frameworks if f.kind in OWN_CONTROLS}
    return [
        row_key(row)
        for row in rows
        if row_key(row) in remapped
        or controls & set(row.get("scf_controls") or [])
        or (row.get("framework") in own and row.get("requirement_id") in controls)
    ]


class _Setting:
    def __init__(
        self, run: WorkflowRun, base: Artifact, old: LoadedCatalog, new: LoadedCatalog
    ) -> None:
        self.run, self.base, self.old, self.new = run, base, old, new


def _setting(session: Session, actor: Actor, assessment_id: uuid.UUID, to: str) -> _Setting:
    load_assessment(session, actor, assessment_id)
    base = last_approved_soa(session, assessment_id)
    if base is None:
        raise NothingToReopen(
            f"assessment {assessment_id} has no approved SoA: there is nothing to re-open"
        )
    run = session.get(WorkflowRun, base.run_id)
    assert run is not None
    target = _target(session, to)
    if target.info.kind == "oscal_profile":
        raise InvalidInput(
            f"{target.info.name} {target.info.version} is an OSCAL profile: its versions "
            "differ in which controls they select, which adds or drops SoA rows rather than "
            "re-opening them; the next run of the assessment uses it"
        )
    pins = run_pins(session, run)
    in_use = pins.get(target.info.name)
    if in_use is None:
        raise InvalidInput(
            f"the assessment uses no {target.info.name} catalogue; it uses "
            f"{', '.join(sorted(pins)) or 'none'}"
        )
    return _Setting(run, base, registry.load(session, in_use), target)


def _target(session: Session, spec: str) -> LoadedCatalog:
    try:
        info = catalog_version(session, spec)
    except CatalogLookupError as error:
        raise NotFound(f"catalogue {error}") from None
    return registry.load(session, info.id)


def _rows(base: Artifact) -> list[dict[str, Any]]:
    return [r for r in base.content.get("requirements", []) if isinstance(r, dict)]


@retry_busy
def catalogue_diff(actor: Actor, assessment_id: uuid.UUID, to: str) -> dict[str, Any]:
    """The diff from the catalogue version the assessment uses to `to`, and the rows of its
    last approved SoA an adoption would re-open."""
    with read_transaction() as session:
        setting = _setting(session, actor, assessment_id, to)
        diff = diff_versions(setting.old, setting.new)
        return diff | {
            "soa": {"artifact_id": str(setting.base.id), "version": setting.base.version},
            "affected_rows": affected_rows(_rows(setting.base), diff, setting.old),
        }


def _view(found: CatalogueAdoption, *, status: str, duplicate: bool) -> AdoptionView:
    return AdoptionView(
        id=found.id,
        assessment_id=found.assessment_id,
        catalog_name=found.catalog_name,
        from_catalog_id=found.from_catalog_id,
        to_catalog_id=found.to_catalog_id,
        reason=found.reason,
        reopened_rows=list(found.reopened_rows),
        reassessment_id=found.reassessment_id,
        status=status,
        duplicate=duplicate,
        diff=dict(found.diff),
        created_by=found.created_by,
        created_at=found.created_at,
    )


def _status(found: CatalogueAdoption) -> str:
    return "adopted" if found.reassessment_id is not None else "no_rows"


@retry_busy
def adopt_catalogue(
    actor: Actor, assessment_id: uuid.UUID, to: str, *, reason: str, idempotency_key: str
) -> AdoptionView:
    """Adopt catalogue version `to` for the assessment; see the module's docstring."""
    send: Callable[[], None] = lambda: None  # noqa: E731
    with transaction() as session:
        setting = _setting(session, actor, assessment_id, to)
        seen = session.scalar(
            select(CatalogueAdoption).where(
                CatalogueAdoption.assessment_id == assessment_id,
                CatalogueAdoption.idempotency_key == idempotency_key,
            )
        )
        if seen is not None:
            if seen.to_catalog_id != setting.new.id or seen.reason != reason:
                raise IdempotencyConflict(
                    f"idempotency key {idempotency_key!r} adopted another catalogue version "
                    "or gave another reason"
                )
            return _view(seen, status=_status(seen), duplicate=True)
        if setting.old.id == setting.new.id:
            return AdoptionView(
                id=new_id(),
                assessment_id=assessment_id,
                catalog_name=setting.new.info.name,
                from_catalog_id=setting.old.id,
                to_catalog_id=setting.new.id,
                reason=reason,
                reopened_rows=[],
                reassessment_id=None,
                status="already_in_use",
                diff={},
                created_by=None,
                created_at=None,
            )
        run = session.get(WorkflowRun, setting.run.id, with_for_update=True)
        assert run is not None
        diff = diff_versions(setting.old, setting.new)
        reopened = affected_rows(_rows(setting.base), diff, setting.old)
        now = utcnow()
        found = CatalogueAdoption(
            tenant_id=actor.tenant_id,
            assessment_id=assessment_id,
            run_id=run.id,
            catalog_name=setting.new.info.name,
            from_catalog_id=setting.old.id,
            to_catalog_id=setting.new.id,
            reason=reason,
            idempotency_key=idempotency_key,
            diff=diff,
            reopened_rows=reopened,
            reassessment_id=None,
            created_by=actor.actor_id,
            created_at=now,
        )
        session.add(found)
        session.flush()
        pins = run_pins(session, run)
        pins[setting.new.info.name] = str(setting.new.id)
        run.context = {**(run.context or {}), "catalogs": pins}
        if reopened:
            send = start_reassessment(
                session,
                tenant_id=actor.tenant_id,
                assessment_id=assessment_id,
                trigger=ADOPTION_TRIGGER,
                trigger_key=f"catalogue-adoption:{found.id}",
                changed=[],
                actor_id=actor.actor_id,
            )
            found.reassessment_id = session.scalar(
                select(Reassessment.id).where(
                    Reassessment.assessment_id == assessment_id,
                    Reassessment.trigger_key == f"catalogue-adoption:{found.id}",
                )
            )
        append_audit(
            session,
            run,
            AuditEventType.LIFECYCLE_WORKFLOW_CATALOGUE_ADOPTED,
            None,
            {
                "adoption_id": str(found.id),
                "catalog": found.catalog_name,
                "from": str(found.from_catalog_id),
                "to": str(found.to_catalog_id),
                "reason": reason,
                "reopened_rows": reopened,
                "reassessment_id": str(found.reassessment_id) if found.reassessment_id else None,
            },
            now,
            actor.actor_id,
        )
        session.flush()
        view = _view(found, status=_status(found), duplicate=False)
    send()
    return view


def adoption_of(session: Session, reassessment_id: uuid.UUID) -> CatalogueAdoption | None:
    """The adoption a reassessment re-opens rows for (None for a change of evidence)."""
    return session.scalar(
        select(CatalogueAdoption).where(CatalogueAdoption.reassessment_id == reassessment_id)
    )


@retry_busy
def list_adoptions(actor: Actor, assessment_id: uuid.UUID) -> list[AdoptionView]:
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        return [
            _view(found, status=_status(found), duplicate=False)
            for found in session.scalars(
                select(CatalogueAdoption)
                .where(CatalogueAdoption.assessment_id == assessment_id)
                .order_by(CatalogueAdoption.created_at)
            )
        ]
