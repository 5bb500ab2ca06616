"""A reassessment's changed findings carried into the POA&M, row by row: a finding that is
no longer a gap (or a reviewer dismissed as not a gap, on the same evidence) closes its
item, a changed one keeps its POAM ID and what a reviewer set on it, a new one takes the
next free ID, and every other item is the approved one."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from orchestrator.db.continuous_models import Reassessment
from orchestrator.db.models import Artifact
from workers.analysis.gaps import complete
from workers.analysis.owner_proposal import OwnerProposer
from workers.analysis.poam import item_for
from workers.analysis.reassessed_drafts import reassess_poam


def _gap(name: str, severity: str = "medium") -> dict[str, Any]:
    return {
        "control_id": name,
        "framework": "SCF",
        "requirement_id": name.split()[-1],
        "title": f"title of {name}",
        "scf_controls": [name.split()[-1]],
        "nist_controls": ["AC-2"],
        "severity": severity,
        "condition": f"no passage addresses {name}",
        "recommendation": "write it down",
    }


def _approved_poam() -> Artifact:
    detected = date(2026, 1, 5)
    items = [
        item_for("POAM-001", _gap("SCF IAC-01"), {}, detected),
        item_for("POAM-002", _gap("SCF IAC-02"), {}, detected),
        item_for("POAM-003", _gap("SCF GOV-01"), {}, detected),
    ]
    content: dict[str, Any] = {
        "items": items,
        "closed_items": [],
        # A reviewer set IAC-02's point of contact on the approved version.
        "amendments": [
            {
                "by": "user:reviewer@acme",
                "at": "2026-01-06T10:00:00Z",
                "reason": "owner agreed",
                "version": 1,
                "rows": [
                    {
                        "row": "POAM-002",
                        "before": {"owner": None},
                        "after": {"owner": "user:iam-lead@acme"},
                    }
                ],
            }
        ],
    }
    items[1]["owner"] = "user:iam-lead@acme"
    return Artifact(id=uuid.uuid4(), kind="poam", version=1, content=content)


def test_changed_findings_reach_the_poam_row_by_row() -> None:
    base = _approved_poam()
    found = Reassessment(id=uuid.uuid4(), trigger="new_version")
    # IAC-01 is no longer a gap; IAC-02 is one still, now high; CPL-05 is a new gap.
    gaps = {"gaps": [_gap("SCF IAC-02", "high"), _gap("SCF GOV-01"), _gap("SCF CPL-05")]}
    changed = {
        name: {"framework": "SCF", "requirement_id": name.split()[-1], "evidence": []}
        for name in ("SCF IAC-01", "SCF IAC-02", "SCF CPL-05")
    }
    content, done = reassess_poam(found, base, gaps, changed, list(changed), gaps_version=2)

    assert done == {"SCF IAC-01": "closed", "SCF IAC-02": "changed", "SCF CPL-05": "opened"}
    items = {i["control_id"]: i for i in content["items"]}
    assert set(items) == {"SCF IAC-02", "SCF GOV-01", "SCF CPL-05"}
    assert items["SCF GOV-01"] == base.content["items"][2]  # untouched: as approved
    assert items["SCF IAC-02"]["id"] == "POAM-002"
    assert items["SCF IAC-02"]["original_risk_rating"] == "High"
    assert items["SCF IAC-02"]["point_of_contact"] == "user:iam-lead@acme"
    assert items["SCF IAC-02"]["original_detection_date"] == "2026-01-05"
    assert items["SCF IAC-02"]["reassessed"]["before"]["original_risk_rating"] == "Moderate"
    assert items["SCF CPL-05"]["id"] == "POAM-004"
    assert items["SCF CPL-05"]["reassessed"]["before"] is None
    (closed,) = content["closed_items"]
    assert closed["id"] == "POAM-001" and closed["status"] == "Closed"
    assert "gap analysis v2 no longer lists it" in closed["comments"]
    assert content["summary"]["items"] == 3 and content["summary"]["closed"] == 1


def test_a_changed_finding_a_reviewer_dismissed_closes_its_item_unless_its_evidence_changed() -> (
    None
):
    found = Reassessment(id=uuid.uuid4(), trigger="new_version")
    decided_on = {"access.md": "a" * 64}
    kept = _gap("SCF IAC-02") | {
        "evidence_basis": decided_on,
        "not_a_gap": True,
        "not_a_gap_reason": "a compensating control seen on site",
        "not_a_gap_basis": decided_on,
    }
    replaced = _gap("SCF GOV-01") | {
        "evidence_basis": {"access.md": "b" * 64},
        "not_a_gap": True,
        "not_a_gap_reason": "covered by the ISMS manual",
        "not_a_gap_basis": decided_on,
    }
    for gap in (kept, replaced):
        gap |= {"cause": "c.", "effect": "e.", "criteria": "k"}
        complete(gap, OwnerProposer([], {}))  # as the reassessment completes each finding
    assert "not_a_gap_review" not in kept
    assert "access.md" in replaced["not_a_gap_review"]
    changed = {
        name: {"framework": "SCF", "requirement_id": name.split()[-1], "evidence": []}
        for name in ("SCF IAC-02", "SCF GOV-01")
    }
    content, done = reassess_poam(
        found, _approved_poam(), {"gaps": [kept, replaced]}, changed, list(changed), 2
    )
    assert done == {"SCF IAC-02": "closed", "SCF GOV-01": "changed"}
    assert {i["control_id"] for i in content["items"]} == {"SCF IAC-01", "SCF GOV-01"}
    assert [i["id"] for i in content["closed_items"]] == ["POAM-002"]
