"""Gap analysis: requirements in scope without evidence (or assessed as not implemented),
each one finding in audit form: title, condition, criteria, cause, effect, recommendation
and a severity with its stated basis (workers.analysis.severity). A requirement's
sub-items (ISO/IEC 27001's 6.1.2(a)(1)) are rolled up into it and named inside its
finding (workers.analysis.requirement_rollup); rows out of scope are counted apart. Each
names the NIST SP 800-53 rev5 controls its SCF controls map to (the workbook's crosswalk),
for FedRAMP's POA&M and OSCAL.

What reviewers amended on the previous gap analysis (owner, target date, severity, cause,
effect, recommendation, note, "not a gap" and its reason) carries into this draft, row by
row, with its history; a "not a gap" whose evidence changed since is flagged for review
(workers.analysis.dismissals)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.catalog.model import CatalogControl, LoadedCatalog
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact, Document, WorkflowRun
from orchestrator.jobs.interface import JobContext
from orchestrator.service.risk_proposals import store_proposals
from workers.analysis import audit_finding
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.dismissals import (
    carry_over,
    dismissed,
    evidence_basis,
    review_if_evidence_changed,
)
from workers.analysis.drafting import drafts, records
from workers.analysis.nist_crosswalk import (
    CATALOG_HREF,
    FRAMEWORK,
    nist_by_scf,
    nist_ids_with_basis,
)
from workers.analysis.owner_proposal import OwnerProposer
from workers.analysis.proposal import AssessedStatus, Proposal
from workers.analysis.requirement_rollup import Requirement, rolled_up
from workers.analysis.reviewer_carry import carry
from workers.analysis.risk_proposal import propose_risk
from workers.analysis.severity import LEVELS, rate
from workers.inputs import latest_artifact, require_artifact, source

SEVERITY_ORDER = {level: rank for rank, level in enumerate(LEVELS)}
_GAP_STATES = {
    Proposal.NO_EVIDENCE_FOUND.value,
    Proposal.TEMPLATE_NOT_ADOPTED.value,
    Proposal.WEAK_EVIDENCE.value,
}
_ASSESSED_GAPS = {AssessedStatus.NOT_IMPLEMENTED.value, AssessedStatus.PARTIALLY_IMPLEMENTED.value}


@drafts("gap_analysis")
def create_gap_analysis(context: JobContext) -> dict[str, Any]:
    evidence = require_artifact(context, ArtifactKind.EVIDENCE_ANALYSIS)
    scope = latest_artifact(context.session, context.request.run_id, ArtifactKind.SCOPE)
    previous = latest_artifact(context.session, context.request.run_id, ArtifactKind.GAP_ANALYSIS)
    catalog = run_scf_catalog(context)
    crosswalk = nist_by_scf(catalog)
    finder = finder_for(context.session, catalog, evidence, scope)
    gaps: list[dict[str, Any]] = []
    met: list[dict[str, Any]] = []
    not_applicable: list[dict[str, Any]] = []
    for requirement in rolled_up(evidence.content.get("requirements", [])):
        rows = requirement.in_scope
        label = requirement.label
        if not rows:
            not_applicable.append(met_entry(requirement.lead, label, []))
            continue
        short = [r for r in rows if is_gap(r)]
        scf = list(dict.fromkeys(c for r in (short or rows) for c in r.get("scf_controls", [])))
        nist, basis = nist_ids_with_basis(crosswalk, scf)
        if not short:
            met.append(met_entry(requirement.lead, label, nist))
            continue
        found = finder.finding_for(requirement, short)
        gaps.append(found | {"nist_controls": nist, "nist_basis": basis})
    carried = carry(previous, gaps, "gaps", "control_id")
    earlier_period = (
        carry_over(context.session, context.request.assessment_id, gaps)
        if previous is None
        else None
    )
    proposer = OwnerProposer.load(context.session, context.request.assessment_id)
    for gap in gaps:  # after carrying: the text a reviewer amended is the finding's
        complete(gap, proposer)
    gaps.sort(key=severity_order)
    content = {
        "catalog": evidence.content.get("catalog"),
        "attribution": evidence.content.get("attribution"),
        "source": source(evidence),
        "severity_rule": "importance (highest SCF relative weighting of the linked controls, "
        "1-10) x evidence shortfall (none or unfilled template 1, weak 0.5, mixed by the "
        "linked controls' weighting) x applicability (share of the linked controls in "
        "scope): 6 and above high, 3 and above medium, else low; a reviewer's severity "
        "replaces it",
        "crosswalk": {
            "framework": FRAMEWORK,
            "catalog_href": CATALOG_HREF,
            "via": "the SCF workbook's NIST 800-53 rev5 mapping column",
        },
        "gaps": gaps,
        "met": met,
        "not_applicable": not_applicable,
    }
    content["summary"] = summary(gaps, met)
    if carried is not None:
        content["carried_forward"] = carried
    if earlier_period is not None:
        content["not_a_gap_carried_over"] = earlier_period
    return content


@records("gap_analysis")
def propose_risks(context: JobContext, content: dict[str, Any], version: int) -> None:
    """The risks the saved draft's findings raise, stored as proposals for a person to
    decide, in the job's transaction (a draft not saved proposes nothing)."""
    run = context.session.get(WorkflowRun, context.request.run_id)
    if run is not None:
        store_proposals(context.session, run, version, content.get("gaps") or [])


def finder_for(
    session: Session, catalog: LoadedCatalog, evidence: Artifact, scope: Artifact | None
) -> Finder:
    documents = {str(d.get("filename")): d for d in evidence.content.get("documents", [])}
    return Finder(
        catalog,
        {str(c.get("control_id")): c for c in evidence.content.get("controls", [])},
        _linked(scope.content if scope else {}),
        int(evidence.content.get("kb_passages") or 0),
        documents,
        content_digests(session, documents),
    )


def content_digests(session: Session, documents: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Each judged document's SHA-256 by filename: what a finding's evidence basis names, so
    the same content reads the same in a reassessment or the next period's assessment."""
    ids = {}
    for name, row in documents.items():
        try:
            ids[uuid.UUID(str(row.get("document_id")))] = name
        except ValueError:
            continue
    if not ids:
        return {}
    found = session.execute(select(Document.id, Document.sha256).where(Document.id.in_(ids)))
    return {ids[document_id]: digest for document_id, digest in found}


def met_entry(row: dict[str, Any], label: str, nist: list[str]) -> dict[str, Any]:
    return {
        "requirement": label,
        "title": row.get("title") or "",
        "proposal": row.get("proposal"),
        "assessed_status": row.get("assessed_status"),
        "nist_controls": nist,
    }


def complete(gap: dict[str, Any], proposer: OwnerProposer) -> None:
    """The proposed owner and the finding in one paragraph, from the (carried) fields; a
    carried "not a gap" checked against the evidence the finding rests on now."""
    review_if_evidence_changed(gap)
    gap |= proposer.propose(gap.get("scf_controls") or [], gap.get("documents") or [])
    gap["finding"] = (
        f"Condition: {gap['condition']} Criteria: {gap['criteria']}. Cause: "
        f"{gap['cause']} Effect: {gap['effect']} Recommendation: {gap['recommendation']}"
    )
    # A finding a reviewer dismissed as "not a gap" raises no risk.
    gap["risk_proposal"] = None if dismissed(gap) else propose_risk(gap)


def severity_order(gap: dict[str, Any]) -> tuple[int, int, str]:
    return (SEVERITY_ORDER.get(str(gap["severity"]), 0), -gap["weighting"], gap["control_id"])


def summary(findings: list[dict[str, Any]], met: list[dict[str, Any]]) -> dict[str, Any]:
    """Requirements in scope only (each with its sub-items rolled up): gaps, findings a
    reviewer dismissed as not a gap, and met."""
    gaps = [g for g in findings if not dismissed(g)]
    return {
        "requirements": len(findings) + len(met),
        "gaps": len(gaps),
        "not_a_gap": len(findings) - len(gaps),
        "met": len(met),
        **{level: sum(1 for g in gaps if g["severity"] == level) for level in LEVELS},
    }


def is_gap(row: dict[str, Any]) -> bool:
    assessed = row.get("assessed_status")
    if assessed:
        return assessed in _ASSESSED_GAPS  # a person's status decides
    return str(row.get("proposal")) in _GAP_STATES


def _linked(scope: dict[str, Any]) -> dict[tuple[str, str], int]:
    """How many SCF controls the framework links to each requirement, in scope or not."""
    return {
        (str(f.get("name")), str(r.get("requirement_id"))): len(r.get("controls") or [])
        for f in scope.get("frameworks", [])
        for r in f.get("requirements", [])
    }


class Finder:
    def __init__(
        self,
        catalog: LoadedCatalog,
        control_rows: dict[str, dict[str, Any]],
        linked: dict[tuple[str, str], int],
        passages: int,
        documents: dict[str, dict[str, Any]] | None = None,
        digests: dict[str, str] | None = None,
    ) -> None:
        self.catalog = catalog
        self.control_rows = control_rows
        self.linked = linked
        self.passages = passages
        self.documents = documents or {}
        self.digests = digests or {}

    def finding_for(self, requirement: Requirement, short: list[dict[str, Any]]) -> dict[str, Any]:
        """One finding for a requirement whose in-scope rows `short` fall short: its own
        row leads where it is one of them, the sub-items are named inside."""
        own = [r for r in short if str(r.get("requirement_id")) == requirement.requirement_id]
        ordered = own + [r for r in short if r not in own]
        found = self.finding(
            ordered[0], requirement.label, ordered[1:], requirement.sub_items(short)
        )
        found["requirement_id"] = requirement.requirement_id
        if not own and requirement.lead.get("title"):
            found["title"] = str(requirement.lead["title"])
        return found

    def finding(
        self,
        row: dict[str, Any],
        label: str,
        more: list[dict[str, Any]] | None = None,
        sub_items: list[str] | None = None,
    ) -> dict[str, Any]:
        rows = [row, *(more or [])]
        scf = list(dict.fromkeys(c for r in rows for c in r.get("scf_controls", [])))
        controls = [c for c in (self.catalog.control(i) for i in scf) if c]
        state = str(row.get("assessed_status") or row.get("proposal"))
        rated = rate(
            state,
            [(_weighting(c), self._proposal(c)) for c in controls],
            self.linked.get((str(row.get("framework")), str(row.get("requirement_id"))), 0),
        )
        best = (row.get("evidence") or [{}])[0]
        seen = audit_finding.Evidence(rows, self.passages, self.documents)
        if sub_items is None:
            sub_items = [str(r.get("requirement_id")) for r in rows[1:]]
        title = _title(row, controls, label)
        steps = audit_finding.recommendation_steps(controls, seen, self.catalog)
        cited = sorted({str(e.get("document")) for r in rows for e in r.get("evidence", [])})
        return {
            "control_id": label,  # the report's first column names the finding
            "framework": row.get("framework"),
            "requirement_id": row.get("requirement_id"),
            "title": title,
            "scf_controls": [c.id for c in controls],
            "weighting": rated.importance,
            "evidence_state": state,
            "severity": rated.level,
            "severity_basis": rated.as_dict(),
            "criteria": audit_finding.criteria(controls, label),
            "criteria_source": audit_finding.ATTRIBUTION,
            "condition": audit_finding.condition(controls, seen, sub_items),
            "cause": audit_finding.cause(controls, seen, title),
            "effect": audit_finding.effect(controls, seen, label),
            "recommendation": audit_finding.recommendation(steps),
            "recommendation_steps": steps,
            "sub_items": sub_items,
            "owner": row.get("owner"),
            "target_date": row.get("target_date"),
            "documents": cited,
            "evidence_basis": evidence_basis(cited or sorted(self.documents), self.digests),
            "best_score": float(best.get("similarity", 0.0)),
        }

    def _proposal(self, control: CatalogControl) -> str | None:
        row = self.control_rows.get(control.id)
        return str(row.get("proposal")) if row else None


def _weighting(control: CatalogControl) -> int:
    return int(control.details.get("weighting") or 0)


def _title(row: dict[str, Any], controls: list[CatalogControl], label: str) -> str:
    """The requirement's own title where its catalogue gives one, else its SCF controls'
    names (verbatim)."""
    if row.get("title"):
        return str(row["title"])
    names = "; ".join(c.title for c in controls[: audit_finding.CRITERIA_SHOWN])
    return names or label
