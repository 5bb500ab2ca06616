"""Statement of Applicability: one row per requirement of the selected frameworks (each
Annex A control of ISO/IEC 27001, each SOC 2 criterion, each SCF control for SCF itself),
applicable or not and why, with a proposed evidence status and its best citations.

Applicability and the implementation status are people's: a person's exclusion (by
requirement id or by SCF control id) makes a row not applicable with their words, and the
implementation status stays empty until a reviewer amends the row. Reviewer-set values
of the run's approved SoA are carried into a new draft of the same rows.
"""

from __future__ import annotations

from typing import Any

from orchestrator.catalog.model import Framework
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobFailure
from workers.analysis.catalog import run_catalogs, run_scf_catalog
from workers.analysis.proposal import Judged, Proposal, proposal_counts
from workers.analysis.requirement_evidence import RequirementJudge
from workers.analysis.soa_carry import carry_forward
from workers.inputs import latest_artifact, require_artifact, source

ANNEX_A = "A."
CITED = 3  # the SoA names the best few passages; the evidence analysis lists them all


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
    approved = latest_artifact(
        context.session, context.request.run_id, ArtifactKind.SOA, status="approved"
    )
    carried = carry_forward(approved, rows, keep=_excluded_by_parameter(rows))
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
            "scf_controls": len(headers),
            "scf_controls_excluded": len(excluded_controls),
            "carried_forward_rows": len(carried["rows"]) if carried else 0,
        },
    }
    return content


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
        "scf_controls": linked,
        "excluded_controls": excluded,
    }
    people = {"implementation_status": None, "owner": None}
    own = exclusions.get(requirement_id.upper())
    in_scope = [c for c in linked if c not in excluded_controls]
    if own is not None or (linked and not in_scope):
        why = own if own is not None else _controls_excluded(linked, excluded_controls)
        return {
            **head,
            "applicable": False,
            "justification": why,
            "excluded_by": "requirement" if own is not None else "scf_controls",
            "proposal": None,
            "reason": "not applicable: no evidence is sought",
            "evidence": [],
            **people,
        }
    if not in_scope:
        return {
            **head,
            "applicable": True,
            "justification": f"Applicable: a requirement of {name}. The SCF crosswalk links "
            "no control to it, so no documentation was searched; the reviewer confirms it.",
            "excluded_by": None,
            "proposal": Proposal.NO_EVIDENCE_FOUND.value,
            "reason": "no SCF control links to this requirement",
            "evidence": [],
            **people,
        }
    judged = judge.judge(in_scope)
    return {
        **head,
        "applicable": True,
        "justification": _applicable_because(name, in_scope, excluded, judged),
        "excluded_by": None,
        "proposal": judged.proposal.value,
        "reason": judged.reason,
        "evidence": [_cite(hit.citation()) for hit in judged.evidence[:CITED]],
        "candidates": [
            _cite(c.hit.citation()) | {"verdict": c.verdict()} for c in judged.candidates
        ],
        **people,
    }


def _controls_excluded(linked: list[str], excluded: dict[str, str]) -> str:
    reasons = {excluded[c] for c in linked}
    if len(reasons) == 1:
        return reasons.pop()
    return "; ".join(f"{c}: {excluded[c]}" for c in linked)


def _applicable_because(
    framework: str, in_scope: list[str], excluded: list[str], judged: Judged
) -> str:
    """A draft reason a reviewer can check: what links it, and what the documents show."""
    shown = ", ".join(in_scope[:6]) + (
        f" and {len(in_scope) - 6} more" if len(in_scope) > 6 else ""
    )
    text = f"Applicable: required by {framework}; linked SCF controls in scope: {shown}"
    if excluded:
        text += f" (excluded: {', '.join(excluded)})"
    if judged.proposal is Proposal.EVIDENCE_FOUND:
        found = "; ".join(_where(hit.citation()) for hit in judged.evidence[:2])
        return f"{text}. Documentation found: {found}."
    if judged.proposal is Proposal.WEAK_EVIDENCE:
        found = _where(judged.evidence[0].citation())
        return f"{text}. Related documentation to confirm: {found}."
    if judged.proposal is Proposal.TEMPLATE_NOT_ADOPTED:
        return f"{text}. Only an unfilled template addresses it; it is not yet adopted."
    return f"{text}. No uploaded document addresses it yet: a potential gap."


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
