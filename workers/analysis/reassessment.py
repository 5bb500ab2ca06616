"""The reassessment job: re-evaluate only the SoA rows a change of evidence touches, and
carry the changed rows into the gap analysis and the POA&M (reassessed_drafts.py).

Touched rows are those whose cited evidence includes a passage of a changed document,
and those whose SCF controls the new text is now most about. Each is judged again against
the evidence in force (superseded and expired versions are not evidence); a row whose
proposal or cited passages (by their text) differ is changed. Every other row
is carried over as approved. No changed row: the reassessment ends `no_change` and no
version is written. Otherwise the SoA's next version records what changed, from which
approved version, and who approved that version; reviewers approve the changed rows.

Idempotent: a delivery that finds the reassessment evaluated does nothing. A job that
raises leaves it `failed` with the reason, for a person to retry.
"""

from __future__ import annotations

import copy
import logging
import time
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.catalog.matching import linked_requirements, resolve
from orchestrator.catalog.model import LoadedCatalog, Requirement
from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.continuous_models import Reassessment
from orchestrator.db.models import ApprovalEvent, Artifact, DocumentChunk, WorkflowRun
from orchestrator.db.session import read_transaction, transaction
from orchestrator.jobs.interface import JobContext
from orchestrator.service.catalogue_adoption import adoption_of, run_pins
from orchestrator.service.reassessments import (
    AWAITING_APPROVAL,
    NO_CHANGE,
    PENDING,
    failure_reason,
    record_failure,
    row_key,
)
from workers.analysis.catalog import run_catalogs, run_scf_catalog
from workers.analysis.reassessed_drafts import reassess_drafts, write_version
from workers.analysis.requirement_evidence import RequirementJudge
from workers.analysis.soa import judged_fields, not_applicable
from workers.ingestion.fan_out import prepare_documents
from workers.ingestion.service import ingest_documents
from workers.inputs import latest_artifact

#: The fields of a row that are the requirement, not what the evidence decided.
HEAD = ("framework", "requirement_id", "title", "category", "scf_controls")
#: What a reviewer sees change: the proposal and the passages cited, by their text.
COMPARED = ("proposal", "proposed_implementation_status")


log = logging.getLogger(__name__)


def evaluate_reassessment(reassessment_id: uuid.UUID) -> str:
    """Evaluate a pending reassessment; returns its status (`failed`, with the reason
    recorded, when the evaluation raised: nothing it wrote is kept)."""
    try:
        return _evaluate_pending(reassessment_id)
    except Exception as error:
        log.exception("reassessment %s failed", reassessment_id)
        return record_failure(reassessment_id, failure_reason(error))


def _evaluate_pending(reassessment_id: uuid.UUID) -> str:
    request = _request(reassessment_id)
    if request is None:
        with read_transaction() as session:
            found = session.get(Reassessment, reassessment_id)
            return found.status if found is not None else "missing"
    ahead = prepare_documents(request)  # parse outside the write transaction
    started = time.perf_counter()
    with transaction() as session:
        found = session.get(Reassessment, reassessment_id, with_for_update=True)
        if found is None or found.status != PENDING:
            return found.status if found is not None else "missing"
        context = JobContext(
            request=request,
            session=session,
            storage_dir=get_settings().resolved_storage_dir,
            prepared=ahead,
        )
        ingest_documents(context)
        _evaluate(context, found, started)
        return found.status


def _request(reassessment_id: uuid.UUID) -> JobRequest | None:
    with read_transaction() as session:
        found = session.get(Reassessment, reassessment_id)
        if found is None or found.status != PENDING:
            return None
        run = session.get(WorkflowRun, found.base_run_id)
        assert run is not None
        return JobRequest(
            job_id=f"reassess:{found.id}",
            kind=JobKind.ANALYSIS,
            run_id=run.id,
            step=Step.CREATE_SOA_DRAFT,
            attempt=1,
            idempotency_key=f"reassess:{found.id}",
            trace_id=run.trace_id,
            tenant_id=run.tenant_id,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            actor_id=found.created_by,
            parameters={"catalogs": run_pins(session, run)},
        )


def _evaluate(context: JobContext, found: Reassessment, started: float) -> None:
    session = context.session
    base = session.get(Artifact, found.base_artifact_id)
    assert base is not None
    catalog = run_scf_catalog(context)
    judge = RequirementJudge(context, catalog)
    changed = set(found.changed_documents)
    rows = [r for r in base.content.get("requirements", []) if isinstance(r, dict)]
    adoption = adoption_of(session, found.id)
    adopted: dict[str, Requirement] = {}
    if adoption is not None:
        # A catalogue adoption re-opens exactly the rows its diff affects, each with its
        # requirement as the adopted version has it.
        touched = set(adoption.reopened_rows)
        adopted = _adopted_requirements(rows, run_catalogs(context))
    else:
        touched = _citing(session, rows, changed) | _now_matching(rows, judge.families_of(changed))
    frameworks = _frameworks(session, found.base_run_id)
    out: list[dict[str, Any]] = []
    changed_names: list[str] = []
    fresh_rows: dict[str, dict[str, Any]] = {}
    reevaluated = 0
    for row in rows:
        name = row_key(row)
        if adoption is not None and name in touched:
            fresh = _adopted_row(row, adopted.get(name), frameworks, judge)
            reevaluated += 1
        else:
            excluded = list(row.get("excluded_controls", []))
            in_scope = [c for c in row.get("scf_controls", []) if c not in excluded]
            if name not in touched or not row.get("applicable") or not in_scope:
                out.append(row)
                continue
            reevaluated += 1
            head = {key: row.get(key) for key in HEAD}
            fresh = row | judged_fields(
                head,
                frameworks.get(str(row.get("framework")), {}),
                in_scope,
                excluded,
                judge.judge(in_scope),
            )
            if _signature(session, fresh) == _signature(session, row):
                out.append(row)
                continue
        fresh["reassessed"] = {
            "reassessment_id": str(found.id),
            "based_on_version": base.version,
            "before": {
                key: row.get(key) for key in (*COMPARED, "implementation_status", "scf_controls")
            }
            | {"evidence": row.get("evidence", [])},
        }
        out.append(fresh)
        changed_names.append(row_key(row))
        fresh_rows[row_key(row)] = fresh
    found.figures = {
        "rows": len(rows),
        "rows_touched": len(touched),
        "rows_reevaluated": reevaluated,
        "rows_changed": len(changed_names),
        "rows_carried": len(rows) - len(changed_names),
        "seconds": round(time.perf_counter() - started, 3),
    }
    found.evaluated_at = utcnow()
    if not changed_names:
        found.status = NO_CHANGE
        return
    content = copy.deepcopy(base.content)
    content["requirements"] = out
    content["reassessment"] = {
        "id": str(found.id),
        "trigger": found.trigger,
        "changed_documents": sorted(changed),
        "based_on": {
            "artifact_id": str(base.id),
            "version": base.version,
            "approved_by": _approvers(session, base.id),
        },
        "changed_rows": changed_names,
        "carried_rows": len(rows) - len(changed_names),
    }
    found.result_artifact_id = write_version(session, found, base, content).id
    found.status = AWAITING_APPROVAL
    follow = reassess_drafts(session, found, catalog, fresh_rows)
    found.figures = dict(found.figures or {}) | {
        "findings_changed": len(follow.get(ArtifactKind.GAP_ANALYSIS, {})),
        "poam_items_changed": len(follow.get(ArtifactKind.POAM, {})),
    }


def _adopted_requirements(
    rows: list[dict[str, Any]], catalogs: list[LoadedCatalog]
) -> dict[str, Requirement]:
    """Each row's requirement in the adopted catalogue versions, with its linked SCF
    controls: the framework each row's name resolves to, as a run's selection does (a
    publication's own OSCAL catalogue before the SCF crosswalk column of the same name)."""
    out: dict[str, Requirement] = {}
    for name in sorted({str(row.get("framework")) for row in rows}):
        choice = resolve(catalogs, name)
        if choice is None or choice.name != name:
            continue
        for requirement in linked_requirements(choice, catalogs):
            out[f"{name} {requirement.id}"] = requirement
    return out


def _adopted_row(
    row: dict[str, Any],
    requirement: Requirement | None,
    frameworks: dict[str, dict[str, Any]],
    judge: RequirementJudge,
) -> dict[str, Any]:
    """A row re-opened by an adoption: its title and controls as the adopted version has
    them, judged again against the evidence in force (an applicable row with controls
    left); a requirement the adopted version no longer has is proposed not applicable."""
    if requirement is None:
        why = (
            f"{row_key(row)} is not a requirement of the adopted catalogue version: "
            "it was removed or withdrawn"
        )
        return (
            row | {"scf_controls": [], "excluded_controls": []} | not_applicable(why, "catalogue")
        )
    linked = list(requirement.control_ids)
    excluded = [c for c in row.get("excluded_controls", []) if c in linked]
    in_scope = [c for c in linked if c not in excluded]
    fresh = row | {
        "title": requirement.title or row.get("title"),
        "scf_controls": linked,
        "excluded_controls": excluded,
    }
    if row.get("applicable") and in_scope:
        head = {key: fresh.get(key) for key in HEAD}
        fresh = fresh | judged_fields(
            head,
            frameworks.get(str(row.get("framework")), {}),
            in_scope,
            excluded,
            judge.judge(in_scope),
        )
    return fresh


def _cited_chunks(row: dict[str, Any]) -> set[str]:
    """The passages a row's proposal rests on (its candidates are a reading list, not
    citations: every document's best passage is among them)."""
    cited = row.get("evidence", [])
    return {str(c["chunk_id"]) for c in cited if isinstance(c, dict) and c.get("chunk_id")}


def _citing(session: Session, rows: list[dict[str, Any]], documents: set[str]) -> set[str]:
    """Rows citing a passage of one of `documents`."""
    chunks = set().union(*(_cited_chunks(row) for row in rows)) if rows else set()
    if not chunks:
        return set()
    owned = {
        chunk_id
        for chunk_id, document_id in session.execute(
            select(DocumentChunk.id, DocumentChunk.document_id).where(
                DocumentChunk.id.in_(sorted(chunks))
            )
        )
        if str(document_id) in documents
    }
    return {row_key(row) for row in rows if _cited_chunks(row) & owned}


def _now_matching(rows: list[dict[str, Any]], families: set[str]) -> set[str]:
    """Rows linking a control whose family the new text is most about."""
    if not families:
        return set()
    return {
        row_key(row)
        for row in rows
        if any(c in families or c.split(".")[0] in families for c in row.get("scf_controls", []))
    }


def _signature(session: Session, row: dict[str, Any]) -> tuple[Any, ...]:
    ids = [str(c.get("chunk_id")) for c in row.get("evidence", []) if isinstance(c, dict)]
    texts = dict(
        session.execute(
            select(DocumentChunk.id, DocumentChunk.sha256).where(DocumentChunk.id.in_(ids))
        ).all()
    )
    cited = sorted(
        (str(c.get("heading_path")), str(c.get("pages")), str(texts.get(str(c.get("chunk_id")))))
        for c in row.get("evidence", [])
        if isinstance(c, dict)
    )
    return (*(row.get(key) for key in COMPARED), tuple(cited))


def _frameworks(session: Session, run_id: uuid.UUID) -> dict[str, dict[str, Any]]:
    scope = latest_artifact(session, run_id, ArtifactKind.SCOPE, status="approved")
    entries = scope.content.get("frameworks", []) if scope is not None else []
    return {str(entry.get("name")): entry for entry in entries if isinstance(entry, dict)}


def _approvers(session: Session, artifact_id: uuid.UUID) -> list[str]:
    return sorted(
        set(
            session.scalars(
                select(ApprovalEvent.approver_id).where(
                    ApprovalEvent.artifact_id == artifact_id, ApprovalEvent.decision == "approved"
                )
            )
        )
    )
