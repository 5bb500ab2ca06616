"""Statement of Applicability: one row per requirement of the selected frameworks (each
Annex A control of ISO/IEC 27001, each SOC 2 criterion, each SCF control for SCF itself),
applicable or not and why, with a proposed evidence status and its best citations.

Each row has a title (the requirement's own where its text is open, else its linked SCF
controls' names, verbatim), a justification naming what it rests on (the category chosen
or not, the exclusion, the documents that address it or their absence), and a proposed
implementation status and owner. Applicability and the implementation status are
people's: a person's exclusion (by requirement id or by SCF control id) or the categories
they chose make a row not applicable with that reason, and `implementation_status` stays
empty until a reviewer sets it (confirming or changing `proposed_implementation_status`).
Reviewer-set values of the run's approved SoA are carried into a new draft of the rows.
"""

from __future__ import annotations

from typing import Any

from orchestrator.catalog.model import Framework, LoadedCatalog
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobFailure
from orchestrator.service.soa_basis import (
    basis_of,
    held_risks,
    justification_with_basis,
)
from workers.analysis.catalog import run_catalogs, run_scf_catalog
from workers.analysis.drafting import drafts, prepares
from workers.analysis.owner_proposal import PERSON, ROLE, OwnerProposer
from workers.analysis.proposal import AssessedStatus, Judged, Proposal, proposal_counts
from workers.analysis.requirement_evidence import RequirementJudge, prepare_retrieval
from workers.analysis.soa_carry import carry_forward, previous_period, provenance
from workers.inputs import latest_artifact, require_artifact, source

ANNEX_A = "A."
CITED = 3  # the SoA names the best few passages; the evidence analysis lists them all
TITLE_NAMES = 3  # a title from SCF control names names this many, then how many more
#: What a proposal suggests a reviewer record; a proposal is never a decision.
PROPOSED_STATUS = {
    Proposal.EVIDENCE_FOUND: AssessedStatus.IMPLEMENTED,
    Proposal.WEAK_EVIDENCE: AssessedStatus.PARTIALLY_IMPLEMENTED,
    Proposal.TEMPLATE_NOT_ADOPTED: AssessedStatus.NOT_IMPLEMENTED,
    Proposal.NO_EVIDENCE_FOUND: AssessedStatus.NOT_IMPLEMENTED,
}


# Ahead of the draft: the vectors its retrieval needs.
prepares("soa")(prepare_retrieval)


@drafts("soa")
def create_soa_draft(context: JobContext) -> dict[str, Any]:
    scope = require_artifact(context, ArtifactKind.SCOPE)
    exclusions = _exclusions(context)
    known = {str(f.id): f for c in run_catalogs(context) for f in c.frameworks}
    requirements = [
        (framework, requirement)
        for framework in scope.content.get("frameworks", [])
        for requirement in stated(framework, known.get(str(framework.get("id"))))
    ]
    headers = _in_scope_controls(scope.content)
    excluded_controls = {cid: exclusions[cid] for cid in headers if cid in exclusions}
    catalog = run_scf_catalog(context)
    judge = RequirementJudge(context, catalog, headers)
    rows = [
        _row(framework, requirement, exclusions, excluded_controls, judge)
        for framework, requirement in requirements
    ]
    proposer = OwnerProposer.load(context.session, context.request.assessment_id)
    for row in rows:
        row["title"] = row["title"] or _title_from_controls(catalog, row["scf_controls"])
        row |= proposer.propose(row["scf_controls"], cited_documents(row))
    approved = latest_artifact(
        context.session, context.request.run_id, ArtifactKind.SOA, status="approved"
    ) or previous_period(context.session, context.request.assessment_id)
    carried = carry_forward(approved, rows, keep=_excluded_by_parameter(rows))
    if carried is not None and approved is not None:
        carried |= provenance(context.session, approved)
    stamp_basis(context, rows)
    named = {str(r["requirement_id"]).upper() for r in rows} | set(headers)
    applicable = sum(1 for row in rows if row["applicable"])
    applicable_rows = [row for row in rows if row["applicable"]]
    proposals = [row["proposal"] for row in applicable_rows]
    content = {
        "framework": scope.content.get("framework", "SCF"),
        "catalog": scope.content.get("catalog"),
        "attribution": scope.content.get("attribution"),
        "source": source(scope),
        "method": judge.method(),
        "requirements": rows,
        "scf_controls": [
            {
                **header,
                "excluded": header["control_id"] in excluded_controls,
                "justification": excluded_controls.get(header["control_id"]),
            }
            for header in headers.values()
        ],
        "carried_forward": carried,
        "ignored_exclusions": sorted(set(exclusions) - named),
        "summary": {
            "rows": len(rows),
            "applicable": applicable,
            "not_applicable": len(rows) - applicable,
            **{p.value: proposals.count(p.value) for p in Proposal},
            "frameworks": [
                {"framework": name, **proposal_counts(applicable_rows, name)}
                for name in dict.fromkeys(str(r["framework"]) for r in rows)
            ],
            "by_category": _by_category(rows),
            "proposed_implementation_status": {
                status.value: sum(
                    1 for r in applicable_rows if r["proposed_implementation_status"] == status
                )
                for status in AssessedStatus
                if status is not AssessedStatus.NOT_APPLICABLE
            },
            "scf_controls": len(headers),
            "scf_controls_excluded": len(excluded_controls),
            "carried_forward_rows": len(carried["rows"]) if carried else 0,
            # People proposed as owners, and roles where the roster is empty.
            "proposed_owners": {
                kind: sum(1 for r in rows if r["proposed_owner_kind"] == kind)
                for kind in (PERSON, ROLE)
            },
        },
    }
    return content


def cited_documents(row: dict[str, Any]) -> list[str]:
    """The documents a row's evidence cites, best first: their owners are proposed first."""
    return list(dict.fromkeys(str(e.get("document")) for e in row.get("evidence") or []))


def stated(entry: dict[str, Any], framework: Framework | None) -> list[dict[str, Any]]:
    """The requirements of a scope's framework entry whose applicability the SoA states.
    ISO/IEC 27001 states it for its Annex A controls; its clauses 4-10 bind every
    organisation that claims conformity, so they have no row."""
    requirements = list(entry.get("requirements", []))
    if framework is not None and framework.details.get("annex_a_from"):
        return [r for r in requirements if str(r.get("requirement_id")).startswith(ANNEX_A)]
    return requirements


def _exclusions(context: JobContext) -> dict[str, str]:
    """Rows a person declared not applicable: {requirement or SCF control id: why}."""
    raw = context.request.parameters.get("exclusions") or {}
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in raw.items()
    ):
        raise JobFailure(
            "bad_request",
            "exclusions must map requirement or control ids to non-empty justifications",
        )
    return {key.strip().upper(): value.strip() for key, value in raw.items()}


def _in_scope_controls(scope: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The SCF controls the scope links, in catalogue order, by id."""
    return {
        str(control["control_id"]): {
            key: control.get(key) for key in ("control_id", "domain", "domain_name", "title")
        }
        for domain in scope.get("domains", [])
        for control in domain.get("controls", [])
    }


def _row(
    framework: dict[str, Any],
    requirement: dict[str, Any],
    exclusions: dict[str, str],
    excluded_controls: dict[str, str],
    judge: RequirementJudge,
) -> dict[str, Any]:
    name = str(framework.get("name"))
    requirement_id = str(requirement.get("requirement_id"))
    linked = [str(c) for c in requirement.get("controls", [])]
    excluded = [c for c in linked if c in excluded_controls]
    head = {
        "framework": name,
        "requirement_id": requirement_id,
        "title": requirement.get("title") or None,
        "category": requirement.get("category"),
        "scf_controls": linked,
        "excluded_controls": excluded,
        "implementation_status": None,
        "owner": None,
    }
    own = exclusions.get(requirement_id.upper())
    in_scope = [c for c in linked if c not in excluded_controls]
    if requirement.get("in_scope") is False:
        return head | not_applicable(str(requirement.get("out_of_scope_reason")), "category")
    if own is not None:
        return head | not_applicable(own, "requirement")
    if linked and not in_scope:
        return head | not_applicable(_controls_excluded(linked, excluded_controls), "scf_controls")
    if not in_scope:
        return head | {
            "applicable": True,
            "justification": f"Applicable: {name} {requirement_id} is a requirement of the "
            "framework in scope. The SCF crosswalk links no control to it, so no documentation "
            "was searched; the reviewer confirms its status from their own knowledge.",
            "excluded_by": None,
            "proposal": Proposal.NO_EVIDENCE_FOUND.value,
            "reason": "no SCF control links to this requirement",
            "proposed_implementation_status": AssessedStatus.NOT_IMPLEMENTED.value,
            "proposed_status_basis": "no SCF control links to it, so nothing was searched",
            "evidence": [],
        }
    return head | judged_fields(head, framework, in_scope, excluded, judge.judge(in_scope))


def stamp_basis(context: JobContext, rows: list[dict[str, Any]]) -> None:
    """Each row's basis from the organisation's register as it stands now, its
    justification naming the treated risks (or the stated requirement) it rests on."""
    request = context.request
    risks = held_risks(context.session, request.tenant_id, request.organization_id)
    for row in rows:
        row["basis"] = basis_of(row, risks)
        row["justification"] = justification_with_basis(row)


def judged_fields(
    head: dict[str, Any],
    framework: dict[str, Any],
    in_scope: list[str],
    excluded: list[str],
    judged: Judged,
) -> dict[str, Any]:
    """The fields of an applicable row the evidence decides (a reassessment redoes these)."""
    return {
        "applicable": True,
        "justification": _applicable_because(head, framework, in_scope, excluded, judged),
        "excluded_by": None,
        "proposal": judged.proposal.value,
        "reason": judged.reason,
        "proposed_implementation_status": PROPOSED_STATUS[judged.proposal].value,
        "proposed_status_basis": _status_basis(judged),
        "evidence": [_cite(hit.citation()) for hit in judged.evidence[:CITED]],
        "candidates": [
            _cite(c.hit.citation()) | {"verdict": c.verdict()} for c in judged.candidates
        ],
    }


def not_applicable(why: str, by: str) -> dict[str, Any]:
    return {
        "applicable": False,
        "justification": why,
        "excluded_by": by,
        "proposal": None,
        "reason": "not applicable: no evidence is sought",
        "proposed_implementation_status": AssessedStatus.NOT_APPLICABLE.value,
        "proposed_status_basis": f"not applicable: {why}",
        "evidence": [],
    }


def _title_from_controls(catalog: LoadedCatalog, control_ids: list[str]) -> str | None:
    """The linked SCF controls' names, verbatim, when the framework's own text is closed."""
    names = [c.title for cid in control_ids if (c := catalog.control(cid)) is not None]
    names = list(dict.fromkeys(names))
    if not names:
        return None
    shown = "; ".join(names[:TITLE_NAMES])
    more = len(names) - TITLE_NAMES
    return shown + (f" (+{more} more SCF controls)" if more > 0 else "")


def _by_category(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        if row.get("category"):
            entry = counts.setdefault((str(row["framework"]), str(row["category"])), [0, 0])
            entry[0 if row["applicable"] else 1] += 1
    return [
        {"framework": f, "category": c, "applicable": a, "not_applicable": n}
        for (f, c), (a, n) in counts.items()
    ]


def _status_basis(judged: Judged) -> str:
    addressed, linked = judged.families
    families = f"{addressed} of {linked} linked SCF control famil{'y' if linked == 1 else 'ies'}"
    if judged.proposal is Proposal.EVIDENCE_FOUND:
        return f"adopted documentation specifically addresses {families}; confirm it operates"
    if judged.proposal is Proposal.WEAK_EVIDENCE:
        return f"documentation addresses {families} only in part or in passing"
    if judged.proposal is Proposal.TEMPLATE_NOT_ADOPTED:
        return "only an unfilled template or blank form addresses it"
    return "no adopted document addresses it"


def _controls_excluded(linked: list[str], excluded: dict[str, str]) -> str:
    reasons = {excluded[c] for c in linked}
    if len(reasons) == 1:
        return reasons.pop()
    return "; ".join(f"{c}: {excluded[c]}" for c in linked)


def _applicable_because(
    head: dict[str, Any],
    framework: dict[str, Any],
    in_scope: list[str],
    excluded: list[str],
    judged: Judged,
) -> str:
    """A reason specific to the row: why it applies, and what the documents show for it."""
    label = f"{head['framework']} {head['requirement_id']}"
    why = f"Applicable: {label} is a requirement of {head['framework']}"
    category = _category_name(framework, head.get("category"))
    if category:
        why += f" in the {category} category, which is in scope"
    more = len(in_scope) - 4
    shown = ", ".join(in_scope[:4]) + (f" and {more} more" if more > 0 else "")
    text = f"{why}; it rests on SCF {shown}"
    if excluded:
        text += f" ({', '.join(excluded)} excluded by the assessment)"
    if judged.proposal is Proposal.EVIDENCE_FOUND:
        found = "; ".join(_where(hit.citation()) for hit in judged.evidence[:2])
        return f"{text}. Documented in {found}: {_status_basis(judged)}."
    if judged.proposal is Proposal.WEAK_EVIDENCE:
        found = _where(judged.evidence[0].citation())
        return f"{text}. Only related documentation, to confirm: {found} ({_status_basis(judged)})."
    if judged.proposal is Proposal.TEMPLATE_NOT_ADOPTED:
        found = _where(judged.templates[0].citation()) if judged.templates else "a template"
        return f"{text}. Only {found}, an unfilled template, addresses it: not yet adopted."
    return f"{text}. No uploaded document addresses it: a potential gap ({judged.reason})."


def _category_name(framework: dict[str, Any], category: Any) -> str | None:
    for entry in framework.get("categories") or []:
        if entry.get("id") == category:
            return str(entry.get("name"))
    return None


def _cite(citation: dict[str, Any]) -> dict[str, Any]:
    keys = ("document", "heading_path", "pages", "chunk_id", "similarity")
    return {key: citation.get(key) for key in keys}


def _where(citation: dict[str, Any]) -> str:
    where = str(citation.get("document"))
    if citation.get("heading_path"):
        where += f" § {citation['heading_path']}"
    pages = citation.get("pages") or []
    if pages:
        where += f" (p. {pages[0]})" if len(pages) == 1 else f" (pp. {pages[0]}-{pages[-1]})"
    return where


def _excluded_by_parameter(rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """Rows this draft's own exclusions decide: a carried value does not undo them."""
    return {(str(r["framework"]), str(r["requirement_id"])) for r in rows if not r["applicable"]}
