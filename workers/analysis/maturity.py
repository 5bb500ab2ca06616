"""Maturity: a proposed SP-CMM level (0-5) per SCF control in scope, against that control's
own criteria in the workbook, with rollups per domain and current against target.

What documents can show, per SCF's C|P-CMM:
  0  Not Performed          nothing on the subject
  1  Performed Informally   something on it, not a clear documented practice (weak evidence)
  2  Planned & Tracked      a documented practice (policy, standard, procedure)
  3  Well Defined           the practice operating: records beyond the documents that
                            prescribe it (logs, tickets, reports of tests, data exports)
  4  Quantitatively Ctrl.   metrics that show it is measured
  5  Continuously Improving never proposed from documents: it needs a person's judgement
Policies, standards, procedures and plans alone cap a control at level 2: a document that
says what should happen is not evidence that it happens, let alone that it is measured.
A document's kind is judged from its content (see `document_judgement`), never its name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.contracts.documents import ADOPTED
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.document_judgement import judge_documents
from workers.analysis.drafting import drafts
from workers.analysis.proposal import Proposal
from workers.inputs import require_artifact, source

LABELS = {
    0: "Not Performed",
    1: "Performed Informally",
    2: "Planned & Tracked",
    3: "Well Defined",
    4: "Quantitatively Controlled",
    5: "Continuously Improving",
}
POLICY_CAP = 2
DEFAULT_TARGET = 3
#: Criteria texts that say nothing is asked at this level: never "met" beside another.
_NOT_APPLICABLE = re.compile(r"^\W*(?:n/?a|not applicable|none|-+)\W*$", re.IGNORECASE)


def evidence_kind(kind: str, record_type: str | None) -> str:
    """The kind maturity reads: metrics are records whose content is measurements."""
    return "metrics" if kind == "record" and record_type == "metrics" else kind


def document_kinds(context: JobContext, evidence: dict[str, Any]) -> dict[str, str]:
    """Each adopted document's kind by document id: from the evidence analysis's own
    `documents` rows, or judged now for an artifact drafted before it had them."""
    rows = evidence.get("documents")
    if isinstance(rows, list):
        return {
            str(row.get("document_id")): evidence_kind(str(row.get("kind")), row.get("record_type"))
            for row in rows
            if row.get("adoption", ADOPTED) == ADOPTED
        }
    judged = judge_documents(context.session, context.request.assessment_id)
    return {key: evidence_kind(j.kind, j.record_type) for key, j in judged.items() if j.adopted}


def level_for(proposal: str, kinds: set[str]) -> tuple[int, str]:
    """(level, basis) for a control's evidence state and the kinds of its evidence."""
    if proposal in (Proposal.NO_EVIDENCE_FOUND.value, Proposal.TEMPLATE_NOT_ADOPTED.value):
        return 0, "no adopted document addresses the control"
    if proposal == Proposal.WEAK_EVIDENCE.value:
        return 1, "related passages only: no clear documented practice"
    if "metrics" in kinds:
        return 4, "documented practice, operating records and metrics"
    if "record" in kinds:
        return 3, "documented practice with records of it operating"
    return POLICY_CAP, "policies, standards, procedures or plans alone: level 2 at most"


@drafts("maturity_assessment")
def create_maturity_assessment(context: JobContext) -> dict[str, Any]:
    evidence = require_artifact(context, ArtifactKind.EVIDENCE_ANALYSIS)
    catalog = run_scf_catalog(context)
    target = _target(context.request.parameters.get("maturity_target"))
    kinds = document_kinds(context, evidence.content)
    controls = [
        _control(catalog, row, target, kinds) for row in evidence.content.get("controls", [])
    ]
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in controls:
        by_domain[str(row["domain"])].append(row)
    domains = [_domain(code, rows, target) for code, rows in sorted(by_domain.items())]
    levels = [d["level"] for d in domains]
    overall = round(sum(levels) / len(levels), 1) if levels else 0.0
    content = {
        "scale": "SCF SP-CMM 0-5 (per control, against the workbook's own criteria)",
        "catalog": evidence.content.get("catalog"),
        "attribution": evidence.content.get("attribution"),
        "sources": [source(evidence)],
        "target_level": target,
        "rule": "policies, standards, procedures and plans alone cap a control at level 2; "
        "level 3 needs records of the practice operating, level 4 metrics; level 5 is never "
        "proposed; document kinds are judged from their content",
        "controls": controls,
        "domains": domains,
        "overall_level": overall,
        "summary": {
            "controls": len(controls),
            "domains": len(domains),
            "overall_level": overall,
            "target_level": target,
            "lowest_level": min(levels, default=0),
            "highest_control_level": max((c["level"] for c in controls), default=0),
        },
    }
    return content


def _target(raw: Any) -> int:
    return raw if isinstance(raw, int) and 0 <= raw <= 5 else DEFAULT_TARGET


def _control(
    catalog: LoadedCatalog, row: dict[str, Any], target: int, by_document: dict[str, str]
) -> dict[str, Any]:
    # A citation of a document not judged adopted shows nothing about the practice.
    kinds = {
        by_document[str(e.get("document_id"))]
        for e in row.get("evidence", [])
        if str(e.get("document_id")) in by_document
    }
    level, basis = level_for(str(row.get("proposal")), kinds)
    control = catalog.control(str(row.get("control_id")))
    criteria = list(control.details.get("sp_cmm", [])) if control else []
    return {
        **{key: row.get(key) for key in ("control_id", "domain", "domain_name", "title")},
        "level": level,
        "label": LABELS[level],
        "target": target,
        "basis": basis,
        "evidence_kinds": sorted(kinds),
        "criteria": [
            {"level": n, "text": text, "met": _met(n, text, level)}
            for n, text in enumerate(criteria)
        ],
    }


def _met(n: int, text: str, level: int) -> bool:
    """Levels 1 to the proposed one are met; level 0 ("not performed") never is beside
    them, and a criterion with no content (N/A) is never met."""
    return 1 <= n <= level and bool(text.strip()) and not _NOT_APPLICABLE.match(text)


def _domain(code: str, rows: list[dict[str, Any]], target: int) -> dict[str, Any]:
    levels = [r["level"] for r in rows]
    # The domain is as mature as most of its controls: the median, not the best one.
    level = sorted(levels)[(len(levels) - 1) // 2]
    below = sum(1 for lv in levels if lv < target)
    return {
        "domain": code,
        "name": rows[0].get("domain_name", code),
        "controls": len(rows),
        "level": level,
        "label": LABELS[level],
        "target": target,
        "average": round(sum(levels) / len(levels), 2),
        "minimum": min(levels),
        "maximum": max(levels),
        "below_target": below,
        "rationale": (
            f"median of {len(rows)} controls' proposed levels (average "
            f"{sum(levels) / len(levels):.1f}); {below} below the target of {target}."
        ),
    }
