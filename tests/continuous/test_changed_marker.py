"""The console marks each row a reassessment changed: "changed since the approved version",
on the SoA and on the gap analysis and POA&M the changed rows were carried into."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from orchestrator.console.draft_pages import read_query, table_page
from orchestrator.console.draft_tables import spec_of
from orchestrator.console.web import TEMPLATES
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.apikeys import Scope
from orchestrator.service.reassessments import row_key


def _row(n: int, reassessed: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "framework": "SCF",
        "requirement_id": f"IAC-{n:02d}",
        "title": f"Requirement {n}",
        "implementation_status": "implemented",
        "applicable": True,
        "scf_controls": [f"IAC-{n:02d}"],
        "proposal": "evidence_found",
    }
    if reassessed:
        row["reassessed"] = {"reassessment_id": "r", "based_on_version": 3, "before": {}}
    return row


TABLES = [
    (ArtifactKind.SOA, "requirements"),
    (ArtifactKind.GAP_ANALYSIS, "gaps"),
    (ArtifactKind.POAM, "items"),
]


def _finding(n: int, reassessed: bool) -> dict[str, Any]:
    """A row as the gap analysis and the POA&M both name it (control_id, id)."""
    return _row(n, reassessed) | {
        "control_id": f"SCF IAC-{n:02d}",
        "id": f"POAM-{n:03d}",
        "severity": "medium",
        "weakness_name": f"SCF IAC-{n:02d}: Requirement {n}",
    }


def _items(
    status: str,
    kind: ArtifactKind = ArtifactKind.SOA,
    table: str = "requirements",
    changed: dict[str, Any] | None = None,
    scopes: tuple[Scope, ...] = (Scope.READ,),
) -> list[str]:
    make = _row if kind is ArtifactKind.SOA else _finding
    content = {table: [make(1, False), make(2, True), make(3, False)]}
    spec = spec_of(kind, table)
    assert spec is not None
    page = table_page(kind, spec, content, read_query(spec, {}))
    html = TEMPLATES.get_template("draft_table.html").render(
        p=page,
        r=SimpleNamespace(
            amendable=False,
            row_comments=lambda name: [],
            reassessment=SimpleNamespace(id="ra-1", status="awaiting_approval"),
            changed_row=lambda row: (changed or {}).get(row_key(row)),
        ),
        session=SimpleNamespace(
            csrf_token="token", principal=SimpleNamespace(allows=lambda s: s in scopes)
        ),
        Scope=Scope,
        run=SimpleNamespace(id="run-1"),
        kind=kind,
        artifact=SimpleNamespace(version=4, status=status),
        params={},
    )
    return html.split('<li class="row')[1:]


def test_the_marker_goes_once_the_changed_rows_are_approved() -> None:
    assert not any("changed since" in item for item in _items("approved"))


@pytest.mark.parametrize(("kind", "table"), TABLES)
def test_only_the_changed_rows_carry_the_marker(kind: ArtifactKind, table: str) -> None:
    items = _items("reassessment", kind, table)
    marked = ["changed since the approved version (v3)" in item for item in items]
    assert marked == [False, True, False]
    assert "changed" in items[1].split('"', 1)[0].split()  # the row's class


def test_a_reviewer_is_offered_the_approval_of_each_changed_row_only() -> None:
    entry = {"row": "SCF IAC-02", "row_sha256": "a" * 64, "approved_by": None}
    changed = {"SCF IAC-02": entry}
    items = _items("reassessment", changed=changed, scopes=(Scope.READ, Scope.APPROVE))
    offered = ["Approve this changed row" in item for item in items]
    assert offered == [False, True, False]
    assert 'action="/console/reassessments/ra-1/row-approvals"' in items[1]
    assert f'name="row_sha256" value="{"a" * 64}"' in items[1]
    # A reader is told it waits; an approved row names who approved it.
    assert "Waiting for a reviewer" in _items("reassessment", changed=changed)[1]
    done = {"SCF IAC-02": entry | {"approved_by": "user:reviewer@acme"}}
    approved = _items("reassessment", changed=done, scopes=(Scope.READ, Scope.APPROVE))[1]
    assert "approved by user:reviewer@acme" in approved and "<form" not in approved
