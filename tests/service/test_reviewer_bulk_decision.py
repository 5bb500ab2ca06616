"""The scripted reviewer's bulk decision (the demo, the integration tests and the benchmarks
use it) confirms proposals on the undecided rows only: a proposed value whose rows are all
decided already gets no filter, because the amendment service refuses a filter that
selects no row."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.demo.reviewer import confirm_proposals
from orchestrator.lifecycle.policies import DEFAULT_POLICY
from orchestrator.service.amendments import amended_content
from orchestrator.service.readiness import readiness
from orchestrator.service.row_filter import matching_rows

K = ArtifactKind


def _poam() -> dict[str, Any]:
    """Items proposing three owners: the CISO's already decided by a person, the IT
    manager's undecided, one item without a proposal."""
    items = [
        {"id": "P-1", "proposed_owner": "CISO", "owner": "CISO"},
        {"id": "P-2", "proposed_owner": "CISO", "owner": "Head of Security"},
        {"id": "P-3", "proposed_owner": "IT manager", "owner": None},
        {"id": "P-4", "proposed_owner": "IT manager", "owner": None},
        {"id": "P-5", "proposed_owner": None, "owner": None},
    ]
    return {"items": items, "summary": {"items": len(items)}}


def _amend(kind: ArtifactKind, content: dict[str, Any], entries: list[dict[str, Any]]) -> Any:
    return amended_content(
        content, kind, entries, actor_id="user:colleague", reason="review meeting", based_on=1
    )


def test_an_owner_whose_rows_are_all_decided_gets_no_filter() -> None:
    content = _poam()
    entries = confirm_proposals(K.POAM, content)
    assert entries == [
        {
            "filter": {"undecided": True, "proposed_owner": "IT manager"},
            "changes": {"owner": "IT manager"},
        },
        {
            "filter": {"undecided": True, "proposed_owner": None},
            "changes": {"owner": "Assessment team"},
        },
    ]
    for entry in entries:  # each selects a row, as the service selects them
        assert matching_rows(K.POAM, content, entry["filter"])
    result = _amend(K.POAM, content, entries)  # refused before: the CISO's filter was empty
    assert [r["owner"] for r in result["items"]] == [
        "CISO",
        "Head of Security",
        "IT manager",
        "IT manager",
        "Assessment team",
    ]
    assert readiness(K.POAM, 2, result, DEFAULT_POLICY).ready


def test_nothing_undecided_sends_nothing() -> None:
    content = _poam()
    for item in content["items"]:
        item["owner"] = item["owner"] or "CISO"
    assert confirm_proposals(K.POAM, content) == []


def test_an_soa_status_proposed_only_on_decided_rows_gets_no_filter() -> None:
    rows = [
        {
            "requirement_id": f"R{i}",
            "applicable": True,
            "proposed_implementation_status": proposed,
            "implementation_status": decided,
        }
        for i, (proposed, decided) in enumerate(
            [
                ("implemented", "implemented"),
                ("implemented", "partially_implemented"),
                ("not_implemented", None),
            ]
        )
    ]
    content = {"requirements": rows, "summary": {"rows": len(rows)}}
    entries = confirm_proposals(K.SOA, content)
    assert [e["filter"]["proposed_implementation_status"] for e in entries] == ["not_implemented"]
    assert readiness(K.SOA, 2, _amend(K.SOA, content, entries), DEFAULT_POLICY).ready
