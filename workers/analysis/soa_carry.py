"""A new SoA draft builds on the approved one: the values reviewers set on its rows
(implementation status, owner, applicability and its justification, dates, notes) are
carried into the same rows of the new draft, and the new draft records what it carried so
the draft after it carries them again. A run with no approved SoA of its own starts from
the last approved SoA of the assessment it carries over from (the previous period), and
records that assessment and who approved what it carried."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.db.continuous_models import RowApproval
from orchestrator.db.models import ApprovalEvent, Artifact, Assessment
from orchestrator.service.approved_artifacts import last_approved_soa
from orchestrator.service.draft_rows import row_names
from workers.soa_content import KEY, ROWS, row_key

#: Fields that decide applicability: the new draft's own exclusions keep them.
_APPLICABILITY = ("applicable", "justification")


def reviewer_fields(content: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """Per row (framework, requirement id): the fields people set, by amendment here or
    carried into this version from an earlier approved one."""
    rows = content.get(ROWS)
    if not isinstance(rows, list):
        return {}  # a draft from before the per-requirement SoA: its rows are not these
    names = row_names(rows, KEY)
    found: dict[tuple[str, str], set[str]] = {}
    for amendment in content.get("amendments", []):
        for change in amendment.get("rows", []):
            row = names.get(str(change.get("row")))
            if row is not None:
                found.setdefault(row_key(row), set()).update(change.get("after", {}))
    carried = content.get("carried_forward") or {}
    for entry in carried.get("rows", []):
        found.setdefault((entry["framework"], entry["requirement_id"]), set()).update(
            entry["fields"]
        )
    return found


def carry_forward(
    approved: Artifact | None, rows: list[dict[str, Any]], *, keep: set[tuple[str, str]]
) -> dict[str, Any] | None:
    """Copy the approved version's reviewer-set values into `rows` (changed in place);
    rows in `keep` keep their own applicability. None when nothing was approved."""
    if approved is None:
        return None
    fields = reviewer_fields(approved.content)
    before = {row_key(row): row for row in approved.content.get(ROWS, [])}
    carried: list[dict[str, Any]] = []
    for row in rows:
        key = row_key(row)
        names = sorted(fields.get(key, set()))
        if key in keep:
            names = [name for name in names if name not in _APPLICABILITY]
        if not names or key not in before:
            continue
        row.update({name: before[key].get(name) for name in names})
        row["carried_from"] = approved.version
        carried.append({"framework": key[0], "requirement_id": key[1], "fields": names})
    return {"from_version": approved.version, "artifact_id": str(approved.id), "rows": carried}


def previous_period(session: Session, assessment_id: object) -> Artifact | None:
    """The last approved SoA of the assessment this one carries over from, if any."""
    assessment = session.get(Assessment, assessment_id)
    if assessment is None or assessment.carry_over_from is None:
        return None
    return last_approved_soa(session, assessment.carry_over_from)


def provenance(session: Session, approved: Artifact) -> dict[str, Any]:
    """Where carried values come from: the assessment and who approved that version (its
    approvers, and the approvers of rows a reassessment changed in it)."""
    by_version = session.scalars(
        select(ApprovalEvent.approver_id).where(
            ApprovalEvent.artifact_id == approved.id, ApprovalEvent.decision == "approved"
        )
    ).all()
    by_row = session.scalars(
        select(RowApproval.approver_id).where(RowApproval.artifact_id == approved.id)
    ).all()
    based = (approved.content.get("reassessment") or {}).get("based_on") or {}
    return {
        "assessment_id": str(approved.assessment_id),
        "approved_by": sorted({*by_version, *by_row, *based.get("approved_by", [])}),
    }
