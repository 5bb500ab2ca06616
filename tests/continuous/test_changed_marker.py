"""The console marks each row a reassessment changed: "changed since the approved version"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from orchestrator.console.draft_pages import read_query, table_page
from orchestrator.console.draft_tables import spec_of
from orchestrator.console.web import TEMPLATES
from orchestrator.contracts.signals import ArtifactKind


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


def _items(status: str) -> list[str]:
    content = {"requirements": [_row(1, False), _row(2, True), _row(3, False)]}
    spec = spec_of(ArtifactKind.SOA, "requirements")
    assert spec is not None
    page = table_page(ArtifactKind.SOA, spec, content, read_query(spec, {}))
    html = TEMPLATES.get_template("draft_table.html").render(
        p=page,
        r=SimpleNamespace(amendable=False, row_comments=lambda name: []),
        run=SimpleNamespace(id="run-1"),
        kind=ArtifactKind.SOA,
        artifact=SimpleNamespace(version=4, status=status),
        params={},
    )
    return html.split('<li class="row')[1:]


def test_the_marker_goes_once_the_changed_rows_are_approved() -> None:
    assert not any("changed since" in item for item in _items("approved"))


def test_only_the_changed_rows_carry_the_marker() -> None:
    items = _items("reassessment")
    marked = ["changed since the approved version (v3)" in item for item in items]
    assert marked == [False, True, False]
    assert items[1].startswith(" changed")
