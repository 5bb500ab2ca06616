"""How each row's status was decided, read from the amendment records: one by one, or in
one action that set it on many rows (who, when, how many), and what a record from before
the selected names were kept says."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.amendments import amended_content
from orchestrator.service.row_decisions import (
    IN_BULK,
    ONE_BY_ONE,
    bulk_actions,
    decision_lines,
    row_decision_labels,
    status_decisions,
)

K = ArtifactKind


def _soa(rows: int = 40) -> dict[str, Any]:
    return {
        "requirements": [
            {
                "framework": "SOC 2",
                "requirement_id": f"CC{i}",
                "applicable": i % 10 != 9,
                "justification": "in scope" if i % 10 != 9 else "Out of scope: not chosen",
                "proposed_implementation_status": "implemented" if i % 2 else "not_implemented",
                "implementation_status": None,
            }
            for i in range(rows)
        ]
    }


def _amend(
    content: dict[str, Any], entries: list[dict[str, Any]], by: str, version: int
) -> dict[str, Any]:
    return amended_content(
        content, K.SOA, entries, actor_id=by, reason="review", based_on=version - 1
    )


def test_a_filter_confirming_many_rows_reads_apart_from_a_row_decided_alone() -> None:
    alone = _amend(
        _soa(),
        [{"row": "CC0", "changes": {"implementation_status": "partially_implemented"}}],
        "user:assessor",
        2,
    )
    bulk = _amend(
        alone,
        [
            {
                "filter": {"undecided": True, "proposed_implementation_status": "implemented"},
                "changes": {"implementation_status": "implemented"},
            },
            {"row": "CC2", "changes": {"implementation_status": "not_implemented"}},
        ],
        "user:lead",
        3,
    )
    decided = status_decisions(bulk)
    selected = [f"CC{i}" for i in range(1, 40, 2) if i % 10 != 9]
    assert decided["CC0"].how == ONE_BY_ONE and decided["CC0"].by == "user:assessor"
    assert decided["CC2"].how == ONE_BY_ONE and decided["CC2"].version == 3
    assert {n for n, d in decided.items() if d.how == IN_BULK} == set(selected)
    assert {d.rows_in_action for d in decided.values() if d.how == IN_BULK} == {len(selected)}
    [action] = bulk_actions(bulk)
    assert (action.by, action.rows, action.selector, action.version) == (
        "user:lead",
        len(selected),
        "filter",
        3,
    )
    labels = row_decision_labels(K.SOA, bulk)
    assert labels["CC1"].startswith(f"in bulk by user:lead, {action.at}: one filter action")
    assert labels["CC4"] == "not decided by a person"
    assert decision_lines(bulk)[0] == (
        f"Statuses decided by a person: {len(selected) + 2} rows, 2 one by one and "
        f"{len(selected)} in bulk (1 action that set many rows at once)."
    )
    assert decision_lines(_soa()) == [], "nobody decided anything: nothing to say"


def test_a_record_without_the_selected_names_is_read_by_the_values_it_set() -> None:
    bulk = _amend(
        _soa(),
        [
            {"rows": ["CC1", "CC3", "CC5"], "changes": {"implementation_status": "implemented"}},
            {"row": "CC7", "changes": {"implementation_status": "not_implemented"}},
        ],
        "user:lead",
        2,
    )
    for selection in bulk["amendments"][-1]["selections"]:
        del selection["names"]  # as recorded before the names were kept
    decided = status_decisions(bulk)
    assert {n for n, d in decided.items() if d.how == IN_BULK} == {"CC1", "CC3", "CC5"}
    assert decided["CC7"].how == ONE_BY_ONE
    assert decided["CC1"].selector == "rows" and decided["CC1"].rows_in_action == 3


def test_a_status_carried_from_the_approved_version_says_so() -> None:
    content = _soa(3)
    content["requirements"][1] |= {"implementation_status": "implemented", "carried_from": 4}
    labels = row_decision_labels(K.SOA, content)
    assert labels["CC1"] == "carried from the approved version 4"
    assert labels["CC0"] == "not decided by a person"
