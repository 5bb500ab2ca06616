"""A gap written as an auditor writes a finding: condition (what the documents show, or
that nothing does, in words), criteria (the SCF control text, verbatim), cause, effect and
recommendation. Cause, effect and recommendation are proposals a reviewer edits; the
SCF text they quote (domain intent, methods to comply) is quoted verbatim and attributed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.catalog.model import CatalogControl, LoadedCatalog
from workers.analysis.proposal import AssessedStatus, Proposal

CRITERIA_SHOWN = 3
EXCERPT_CHARS = 240
ATTRIBUTION = "Secure Controls Framework (SCF), CC BY-ND 4.0"


def criteria(controls: Sequence[CatalogControl], label: str) -> str:
    if not controls:
        return f"no SCF control in scope is linked to {label}"
    text = " ".join(f"SCF {c.id} {c.title}: {c.description}" for c in controls[:CRITERIA_SHOWN])
    if len(controls) > CRITERIA_SHOWN:
        text += f" (and {len(controls) - CRITERIA_SHOWN} more linked SCF controls)"
    return text


def condition(row: dict[str, Any], controls: Sequence[CatalogControl], passages: int) -> str:
    """What was observed: the cited passages, the unfilled template, or that nothing was."""
    state = str(row.get("proposal") or "")
    assessed = row.get("assessed_status")
    opening = f"A reviewer assessed it as {str(assessed).replace('_', ' ')}. " if assessed else ""
    names = ", ".join(c.title for c in controls[:CRITERIA_SHOWN]) or "its subject"
    cited = row.get("evidence") or []
    templates = row.get("template_passages") or []
    if not controls:
        return opening + "No SCF control in scope links to it, so no documentation was sought."
    if state == Proposal.TEMPLATE_NOT_ADOPTED.value or (templates and not cited):
        documents = sorted({str(t.get("document")) for t in templates}) or ["a template"]
        return opening + (
            f"The only documentation on {names} is an unfilled template "
            f"({', '.join(documents)}): its placeholders are still in place, so it does not "
            "describe this organisation's practice."
        )
    if not cited:
        return opening + (
            f"None of the {passages} passages of the uploaded documents addresses {names}."
        )
    quoted = "; ".join(_quote(c) for c in cited[:2])
    if state == Proposal.EVIDENCE_FOUND.value:
        return opening + f"The documents address it: {quoted}."
    return opening + (
        f"The documents touch on it only in part: {quoted}. No passage states how {names} "
        "is performed, by whom and how often."
    )


def cause(row: dict[str, Any], controls: Sequence[CatalogControl]) -> str:
    names = ", ".join(c.title for c in controls[:CRITERIA_SHOWN]) or "the requirement"
    assessed = row.get("assessed_status")
    if assessed == AssessedStatus.NOT_IMPLEMENTED.value:
        return (
            "Assessed as not implemented by a reviewer; the cause is to be confirmed with "
            "the owner."
        )
    if assessed == AssessedStatus.PARTIALLY_IMPLEMENTED.value:
        return (
            "Assessed as partially implemented by a reviewer; the part that is missing is to "
            "be confirmed with the owner."
        )
    if not controls:
        return "The SCF crosswalk links no in-scope control to the requirement."
    state = str(row.get("proposal") or "")
    if state == Proposal.TEMPLATE_NOT_ADOPTED.value:
        return f"A template for {names} was provided but never completed and adopted."
    if state == Proposal.WEAK_EVIDENCE.value:
        return (
            f"{names} is mentioned in the documents but not written down as a practice with "
            "an owner, a frequency and records (proposed; to be confirmed with the owner)."
        )
    return (
        f"No policy, standard or procedure for {names} was provided: the practice may not be "
        "defined, or its documentation was not part of this assessment (proposed; to be "
        "confirmed with the owner)."
    )


def effect(controls: Sequence[CatalogControl], catalog: LoadedCatalog, label: str) -> str:
    intents = {d["identifier"]: d for d in catalog.details.get("domains", [])}
    base = f"The assessment cannot conclude that {label} is met"
    domain = intents.get(controls[0].domain) if controls else None
    if not domain or not domain.get("intent"):
        return base + "."
    return (
        f"{base}, and the intent of the SCF {domain['name']} domain is not shown to be "
        f"achieved: “{domain['intent']}” ({ATTRIBUTION})."
    )


def recommendation(controls: Sequence[CatalogControl]) -> str:
    if not controls:
        return "Review the requirement's mapping and record how it is met."
    names = ", ".join(f"{c.id} {c.title}" for c in controls[:CRITERIA_SHOWN])
    text = (
        f"Define, approve and operate {names}; keep records that show it operates and upload "
        "them for the next evidence analysis."
    )
    methods = [c for c in controls[:2] if str(c.details.get("methods_to_comply") or "").strip()]
    for control in methods:
        text += (
            f" SCF methods to comply ({control.id}): "
            f"{str(control.details['methods_to_comply']).strip()}"
        )
    return text + (f" ({ATTRIBUTION})" if methods else "")


def _quote(citation: dict[str, Any]) -> str:
    excerpt = " ".join(str(citation.get("excerpt") or "").split())
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[:EXCERPT_CHARS].rsplit(" ", 1)[0] + "…"
    where = [str(citation.get("document"))]
    if citation.get("heading_path"):
        where.append(f"§ {citation['heading_path']}")
    pages = citation.get("pages") or []
    if pages:
        where.append("p. " + "-".join(str(p) for p in pages))
    return f"“{excerpt}” ({', '.join(where)})"
