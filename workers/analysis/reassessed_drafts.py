"""A reassessment's changed SoA rows, carried into the drafts built on them: the gap
analysis and the POA&M, row by row.

For each changed requirement the approved gap analysis gets its finding built again from
the re-judged row (a gap opened, a finding changed, or a gap closed into the met list); what
reviewers set on the approved finding (owner, target date, severity, cause, effect,
recommendation, note) carries over. The POA&M follows its findings: an item rebuilt with
its POAM ID, a new item with the next free one, a closed finding's item moved to the
closed items. Every other finding and item is the approved one, unchanged. A draft with no
changed row gets no new version. Each new version names the reassessment, the approved
version it starts from and its changed rows, and stays `reassessment` until the rows are
approved (orchestrator.service.reassessments).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.continuous_models import Reassessment
from orchestrator.db.models import Artifact
from orchestrator.db.storage import sha256_hex
from orchestrator.service.reassessments import REASSESSED
from workers.analysis import gaps as gap_rules
from workers.analysis import poam as poam_rules
from workers.analysis.dismissals import open_gaps
from workers.analysis.nist_crosswalk import nist_by_scf, nist_ids
from workers.analysis.owner_proposal import OwnerProposer
from workers.analysis.reviewer_carry import carry
from workers.inputs import latest_artifact

#: What a reviewer reads as the finding's substance: a change here re-opens it (a document
#: replaced changes its evidence basis, and flags a "not a gap" made on the old one).
DECIDED = (
    "evidence_state",
    "severity",
    "condition",
    "documents",
    "evidence_basis",
    "scf_controls",
)
#: What the item said before, shown beside the rebuilt one.
ITEM_DECIDED = (
    "weakness_name",
    "point_of_contact",
    "original_risk_rating",
    "scheduled_completion_date",
)


#: Per draft kind, what each changed requirement did to it: opened, changed or closed.
Changes = dict[ArtifactKind, dict[str, str]]


def reassess_drafts(
    session: Session,
    found: Reassessment,
    catalog: LoadedCatalog,
    changed: dict[str, dict[str, Any]],
) -> Changes:
    """Write the gap analysis's and the POA&M's next versions for `changed` SoA rows (by
    row name), where the run has approved ones and a row changes them."""
    gaps_base = latest_artifact(
        session, found.base_run_id, ArtifactKind.GAP_ANALYSIS, status="approved"
    )
    if gaps_base is None or not changed:
        return {}
    gaps_content, gap_changes = _gaps(session, found, gaps_base, catalog, changed)
    if not gap_changes:
        return {}
    gaps_version = _write(session, found, gaps_base, gaps_content, list(gap_changes)).version
    done: Changes = {ArtifactKind.GAP_ANALYSIS: gap_changes}
    poam_base = latest_artifact(session, found.base_run_id, ArtifactKind.POAM, status="approved")
    if poam_base is not None:
        poam_content, item_changes = reassess_poam(
            found, poam_base, gaps_content, changed, list(gap_changes), gaps_version
        )
        if item_changes:
            _write(session, found, poam_base, poam_content, list(item_changes))
            done[ArtifactKind.POAM] = item_changes
    return done


def _gaps(
    session: Session,
    found: Reassessment,
    base: Artifact,
    catalog: LoadedCatalog,
    changed: dict[str, dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, str]]:
    evidence = latest_artifact(session, found.base_run_id, ArtifactKind.EVIDENCE_ANALYSIS)
    scope = latest_artifact(session, found.base_run_id, ArtifactKind.SCOPE, status="approved")
    assert evidence is not None, "an approved gap analysis rests on an evidence analysis"
    finder = gap_rules.finder_for(session, catalog, evidence, scope)
    crosswalk = nist_by_scf(catalog)
    proposer = OwnerProposer.load(session, found.assessment_id)
    content = copy.deepcopy(base.content)
    gaps = {str(g.get("control_id")): g for g in content.get("gaps", [])}
    met = {str(m.get("requirement")): m for m in content.get("met", [])}
    done: dict[str, str] = {}
    for name, soa_row in changed.items():
        row = _as_evidence_row(soa_row)
        before = gaps.get(name)
        nist = nist_ids(crosswalk, row.get("scf_controls", []))
        if not gap_rules.is_gap(row):
            met[name] = gap_rules.met_entry(row, name, nist)
            if before is not None:
                del gaps[name]
                done[name] = "closed"
            continue
        finding = finder.finding(row, name) | {"nist_controls": nist}
        carry(base, [finding], "gaps", "control_id")
        gap_rules.complete(finding, proposer)
        if before is not None and all(finding.get(k) == before.get(k) for k in DECIDED):
            continue  # the same finding: the approved one stays, as approved
        finding["reassessed"] = _marker(found, base, before, DECIDED)
        gaps[name] = finding
        met.pop(name, None)
        done[name] = "changed" if before else "opened"
    content["gaps"] = sorted(gaps.values(), key=gap_rules.severity_order)
    content["met"] = list(met.values())
    content["summary"] = gap_rules.summary(content["gaps"], content["met"])
    return content, done


def _as_evidence_row(soa_row: dict[str, Any]) -> dict[str, Any]:
    """An SoA row as a finding reads it: its in-scope controls and the fresh proposal. A
    status a person set on the old evidence is not carried: the changed row asks them
    again (its row approval), so the finding rests on the proposal meanwhile."""
    excluded = set(soa_row.get("excluded_controls") or [])
    row = {k: v for k, v in soa_row.items() if k != "assessed_status"}
    row["scf_controls"] = [c for c in soa_row.get("scf_controls", []) if c not in excluded]
    if not soa_row.get("applicable", True):
        row["assessed_status"] = "not_applicable"  # out of scope now: no gap to keep
    return row


def reassess_poam(
    found: Reassessment,
    base: Artifact,
    gaps_content: dict[str, Any],
    changed: dict[str, dict[str, Any]],
    touched: list[str],
    gaps_version: int,
) -> tuple[dict[str, Any], dict[str, str]]:
    content = copy.deepcopy(base.content)
    today = utcnow().date()
    items = {str(i.get("control_id")): i for i in content.get("items", [])}
    gaps = {str(g.get("control_id")): g for g in open_gaps(gaps_content)}
    numbers = poam_rules.numbers_for(content, [gaps[n] for n in touched if n in gaps])
    done: dict[str, str] = {}
    closing: list[str] = []
    for name in touched:
        if name not in gaps:
            if name in items:
                closing.append(name)
                done[name] = "closed"
            continue
        row = _as_evidence_row(changed[name])
        # An item keeps its original detection date; a new one is detected today.
        detected = poam_rules.parse_date(items.get(name, {}).get("original_detection_date"))
        item = poam_rules.item_for(numbers[name], gaps[name], row, detected or today)
        carry(base, [item], "items", "control_id", named_by="id")
        if item.get("carried_from"):
            poam_rules.apply_reviewer_values(item, today)
        item["reassessed"] = _marker(found, base, items.get(name), ITEM_DECIDED)
        done[name] = "changed" if name in items else "opened"
        items[name] = item
    still_open = [i for n, i in items.items() if n not in closing]
    closed = poam_rules.closed_items(content, still_open, today, gaps_version)
    content["items"] = still_open
    content["closed_items"] = closed
    content["summary"] = poam_rules.summary(still_open, closed)
    return content, done


def _marker(
    found: Reassessment, base: Artifact, before: dict[str, Any] | None, fields: tuple[str, ...]
) -> dict[str, Any]:
    """What the row was in the approved version (None: it is new)."""
    return {
        "reassessment_id": str(found.id),
        "based_on_version": base.version,
        "before": None if before is None else {k: before.get(k) for k in fields},
    }


def _write(
    session: Session,
    found: Reassessment,
    base: Artifact,
    content: dict[str, Any],
    changed_rows: list[str],
) -> Artifact:
    content["reassessment"] = {
        "id": str(found.id),
        "trigger": found.trigger,
        "based_on": {"artifact_id": str(base.id), "version": base.version},
        "changed_rows": sorted(changed_rows),
    }
    return write_version(session, found, base, content)


def write_version(
    session: Session, found: Reassessment, base: Artifact, content: dict[str, Any]
) -> Artifact:
    """The next version of `base`'s kind in its run, written by the reassessment, awaiting
    the approval of its changed rows."""
    version = 1 + (
        session.scalar(
            select(func.max(Artifact.version)).where(
                Artifact.run_id == base.run_id, Artifact.kind == base.kind
            )
        )
        or 0
    )
    artifact = Artifact(
        id=new_id(),
        tenant_id=base.tenant_id,
        assessment_id=base.assessment_id,
        run_id=base.run_id,
        kind=base.kind,
        version=version,
        status=REASSESSED,
        content=content,
        media_type="application/json",
        storage_path=None,
        sha256=sha256_hex(json.dumps(content, sort_keys=True, default=str).encode()),
        created_by_job_id=f"reassessment:{found.id}",
        created_at=utcnow(),
    )
    session.add(artifact)
    session.flush()
    return artifact
