"""One amendment may set a field on many rows, by name or by filter: the filter reads the
version the reviewer saw, every row it selects is changed and recorded with its values
before and after, and anything malformed changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.lifecycle.policies import DEFAULT_POLICY
from orchestrator.service.amendments import amended_content
from orchestrator.service.readiness import readiness

K = ArtifactKind
PROPOSED = ("implemented", "partially_implemented", "not_implemented")


def _soa(rows: int = 300) -> dict[str, Any]:
    """An SoA of `rows` requirements: every tenth out of scope, proposals in turn."""
    requirements = []
    for i in range(rows):
        applicable = i % 10 != 9
        requirements.append(
            {
                "framework": "ISO/IEC 27001:2022" if i % 2 else "SOC 2",
                "requirement_id": f"R{i // 2}",
                "title": f"Requirement {i}",
                "scf_controls": [("IAC-" if i % 3 == 0 else "NET-") + f"{i:02d}"],
                "applicable": applicable,
                "justification": "in scope" if applicable else "Out of scope: not chosen",
                "proposal": "evidence_found" if applicable else None,
                "proposed_implementation_status": PROPOSED[i % 3]
                if applicable
                else "not_applicable",
                "implementation_status": None,
                "owner": None,
            }
        )
    return {"requirements": requirements, "summary": {"rows": rows}}


def _amend(content: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    return amended_content(
        content, K.SOA, entries, actor_id="user:lead", reason="review meeting", based_on=1
    )


def test_a_filter_sets_a_field_on_every_row_it_selects() -> None:
    content = _soa()
    assert len(readiness(K.SOA, 1, content, DEFAULT_POLICY).undecided) == 270
    entries = [
        {
            "filter": {"undecided": True, "proposed_implementation_status": s},
            "changes": {"implementation_status": s},
        }
        for s in PROPOSED
    ]
    result = _amend(content, entries)
    rows = result["requirements"]
    applicable = [r for r in rows if r["applicable"]]
    assert all(
        r["implementation_status"] == r["proposed_implementation_status"] for r in applicable
    )
    assert all(r["implementation_status"] is None for r in rows if not r["applicable"])
    record = result["amendments"][-1]
    assert len(record["rows"]) == 270 and record["by"] == "user:lead"
    assert [s["selected"] for s in record["selections"]] == [90, 90, 90]
    assert all(r["before"] == {"implementation_status": None} for r in record["rows"])
    assert readiness(K.SOA, 2, result, DEFAULT_POLICY).ready
    assert content["requirements"][0]["implementation_status"] is None  # the read version


def test_rows_shared_by_two_frameworks_are_named_with_their_framework() -> None:
    content = _soa(4)  # SOC 2 R0, ISO R0, SOC 2 R1, ISO R1
    result = _amend(
        content, [{"rows": ["SOC 2 R0", "ISO/IEC 27001:2022 R1"], "changes": {"owner": "CISO"}}]
    )
    owners = {(r["framework"], r["requirement_id"]): r["owner"] for r in result["requirements"]}
    assert owners == {
        ("SOC 2", "R0"): "CISO",
        ("ISO/IEC 27001:2022", "R0"): None,
        ("SOC 2", "R1"): None,
        ("ISO/IEC 27001:2022", "R1"): "CISO",
    }


def test_filters_combine_and_several_entries_on_one_row_merge() -> None:
    content = _soa(60)
    result = _amend(
        content,
        [
            {"filter": {"domain": "IAC", "framework": "SOC 2"}, "changes": {"owner": "IAM lead"}},
            {"filter": {"domain": ["IAC"], "text": "requirement 0"}, "changes": {"note": "first"}},
        ],
    )
    changed = {r["row"]: r["after"] for r in result["amendments"][-1]["rows"]}
    first = next(name for name in changed if name.endswith(" R0") and name.startswith("SOC 2"))
    assert changed[first] == {"owner": "IAM lead", "note": "first"}
    iac_soc2 = [
        r
        for r in content["requirements"]
        if r["framework"] == "SOC 2" and r["scf_controls"][0].startswith("IAC-")
    ]
    assert sum(1 for a in changed.values() if a.get("owner") == "IAM lead") == len(iac_soc2)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"filter": {"colour": "red"}, "changes": {"owner": "x"}}, "cannot filter by colour"),
        ({"filter": {}, "changes": {"owner": "x"}}, "non-empty object"),
        ({"filter": {"text": "no such words"}, "changes": {"owner": "x"}}, "selects no row"),
        ({"filter": {"undecided": "yes"}, "changes": {"owner": "x"}}, "true or false"),
        ({"rows": ["R0", "NOPE-1"], "changes": {"owner": "x"}}, "'NOPE-1'"),
        ({"rows": [], "changes": {"owner": "x"}}, "non-empty list"),
        ({"row": "SOC 2 R0", "rows": ["SOC 2 R1"], "changes": {"owner": "x"}}, "exactly one"),
        (
            {"filter": {"applicable": False}, "changes": {"implementation_status": "implemented"}},
            "set applicable to true with a justification",
        ),
    ],
)
def test_malformed_bulk_amendments_change_nothing(entry: dict[str, Any], says: str) -> None:
    content = _soa(20)
    with pytest.raises(InvalidInput) as refused:
        _amend(content, [entry])
    assert says in refused.value.message
    assert all(r["owner"] is None for r in content["requirements"])
