"""Gap findings a reviewer marked "not a gap", with the reason (an amendment of the gap
analysis: `not_a_gap`, `not_a_gap_reason`). Such a finding leaves the POA&M and the
report's gap list, shown apart as dismissed with the reason, who and when.

The decision carries into the next drafts with the finding's other reviewer values
(workers.analysis.reviewer_carry), in the same run and in a reassessment; the first gap
analysis of an assessment that carries over from a previous period's takes that period's
decisions. A decision records the documents the finding rested on, each with its content's
SHA-256 (`not_a_gap_basis`, set by the amendment service); where a later draft of the
finding rests on other documents or content (a document replaced), the decision is flagged
for review and the finding stays open until a person decides again."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Assessment
from orchestrator.service.amendments import NOT_A_GAP, NOT_A_GAP_BASIS
from orchestrator.service.amendments import NOT_A_GAP_REVIEW as REVIEW
from orchestrator.service.approved_artifacts import last_approved
from workers.analysis.reviewer_carry import HISTORY, reviewer_rows


def dismissed(gap: dict[str, Any]) -> bool:
    return gap.get("not_a_gap") is True and not gap.get(REVIEW)


def open_gaps(content: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings that are gaps: every one but those a reviewer dismissed."""
    return [g for g in content.get("gaps", []) if isinstance(g, dict) and not dismissed(g)]


def dismissed_gaps(content: dict[str, Any]) -> list[dict[str, Any]]:
    """Each dismissed finding with its reason and who marked it, when (from the amendment
    records on this version or the history carried into it)."""
    history = reviewer_rows(content, "gaps", "control_id")
    found = []
    for gap in content.get("gaps", []):
        if not isinstance(gap, dict) or not dismissed(gap):
            continue
        key = str(gap.get("control_id"))
        marks = [
            c
            for c in history.get(key, {}).get("changes", [])
            if c.get("field") == "not_a_gap" and c.get("after") is True
        ]
        last = marks[-1] if marks else {}
        found.append(
            {
                "control_id": key,
                "title": gap.get("title"),
                "severity": gap.get("severity"),
                "reason": gap.get("not_a_gap_reason"),
                "by": last.get("by"),
                "at": last.get("at"),
            }
        )
    return found


def evidence_basis(names: list[str], digests: dict[str, str]) -> dict[str, str]:
    """The documents a finding rests on, each filename with its content's SHA-256: those
    it cites, or where it cites none, every document that was looked through."""
    return {name: digests.get(name, "") for name in names}


def review_if_evidence_changed(gap: dict[str, Any]) -> None:
    """Flag a carried "not a gap" whose evidence changed since it was decided."""
    gap.pop(REVIEW, None)
    if gap.get("not_a_gap") is not True:
        return
    then = gap.get(NOT_A_GAP_BASIS) or {}
    now = gap.get("evidence_basis") or {}
    changed = sorted(n for n in {*then, *now} if then.get(n) != now.get(n))
    if changed:
        gap[REVIEW] = (
            f"marked not a gap ({gap.get('not_a_gap_reason')}) on evidence that has changed "
            f"since ({', '.join(changed)}): the finding stays open until a person decides again"
        )


def carry_over(
    session: Session, assessment_id: uuid.UUID, gaps: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Into the first gap analysis of an assessment that carries over from a previous
    period's: the "not a gap" decisions of that period's last approved gap analysis, on
    the same findings (changed in place). None when there is nothing to carry from."""
    assessment = session.get(Assessment, assessment_id)
    if assessment is None or assessment.carry_over_from is None:
        return None
    earlier = last_approved(session, assessment.carry_over_from, ArtifactKind.GAP_ANALYSIS)
    if earlier is None:
        return None
    kept = reviewer_rows(earlier.content, "gaps", "control_id")
    carried = []
    for gap in gaps:
        entry = kept.get(str(gap.get("control_id")))
        if not entry or entry["fields"].get("not_a_gap") is not True:
            continue
        names = [*NOT_A_GAP, NOT_A_GAP_BASIS]
        gap.update({name: entry["fields"].get(name) for name in names})
        gap[HISTORY] = [c for c in entry["changes"] if c.get("field") in names]
        carried.append({"control_id": gap.get("control_id"), "fields": names})
    return {
        "assessment_id": str(earlier.assessment_id),
        "artifact_id": str(earlier.id),
        "from_version": earlier.version,
        "rows": carried,
    }
