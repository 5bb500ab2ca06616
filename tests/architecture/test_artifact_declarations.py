"""A draft artifact kind is declared once (orchestrator.contracts.artifact_registry) and
everything that lists kinds derives from that: the approval signals and waits, the rows
people amend and decide, the gate's readiness and default policy, the analysis queue's
drafting function, and the console's tables, amendment form and chart. A kind declared
here, in a test, shows up in each of them; the shipped declarations agree with the
lifecycle's steps and signals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from markupsafe import Markup

from orchestrator.console.amend_fields import AmendField, changes_of, fields_of
from orchestrator.console.charts import Chart, charts
from orchestrator.console.draft_tables import Column, TableSpec, spec_of, specs_of, tables
from orchestrator.contracts import artifact_registry
from orchestrator.contracts.artifact_registry import (
    ArtifactDeclaration,
    Decided,
    Rows,
    body,
    declared,
)
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind
from orchestrator.lifecycle import artifact_table
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, STEP_SPECS
from orchestrator.lifecycle.policies import GatePolicy, requires_decisions
from orchestrator.service.amendments import AMENDABLE, REPORT_STATEMENT, amended_content
from orchestrator.service.draft_rows import amendable_kinds, rows_of
from orchestrator.service.readiness import readiness, undecided_rows
from orchestrator.service.row_filter import matching_rows
from workers.analysis.service import drafting_of


def draft_vendors(context: Any) -> dict[str, Any]:
    return {
        "vendors": [
            {"vendor_id": "V-1", "name": "Acme", "owner": None},
            {"vendor_id": "V-2", "name": "Globex", "owner": "ops@example.org"},
            {"vendor_id": "V-3", "name": "Initech", "owner": None, "applicable": False},
        ]
    }


TABLES = (
    TableSpec(
        "vendors",
        "Vendors",
        "vendors",
        "vendor_id",
        (Column("vendor_id", "Vendor"), Column("owner", "Owner")),
        decided=True,
    ),
)
FIELDS = (AmendField("owner", "Owner", "text"),)


def chart(content: dict[str, Any]) -> list[Chart]:
    owned = sum(1 for row in content["vendors"] if row.get("owner"))
    return [Chart("Vendors with an owner", Markup("<svg></svg>"), ("owned",), [(owned,)])]


FAKE = ArtifactDeclaration(
    "vendor_review",
    "create_vendor_review",
    approved_by="vendor_review_approved",
    approved_at="wait_for_vendor_review_approval",
    rows=Rows("vendors", "vendor_id"),
    decided=Decided(("owner",), "vendors without an owner", by_default=True),
    draft=f"{__name__}:draft_vendors",
    tables=f"{__name__}:TABLES",
    fields=f"{__name__}:FIELDS",
    chart=f"{__name__}:chart",
)


@pytest.fixture
def declared_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArtifactDeclaration]:
    monkeypatch.setattr(artifact_registry, "ARTIFACTS", (*artifact_registry.ARTIFACTS, FAKE))
    yield FAKE


def test_every_kind_is_declared_once_and_agrees_with_the_lifecycle() -> None:
    assert [d.kind for d in declared()] == [kind.value for kind in ArtifactKind]
    for declaration in declared():
        kind = ArtifactKind(declaration.kind)
        drafting = STEP_SPECS[Step(declaration.drafted_at)]
        assert drafting.produces is kind, declaration
        # The analysis queue drafts what its jobs produce; the report has its own queue.
        assert (declaration.draft is not None) == (drafting.job_kind is JobKind.ANALYSIS)
        if declaration.approved_by is not None:
            assert APPROVAL_SIGNALS[SignalType(declaration.approved_by)] is kind
        if declaration.approved_at is not None:
            assert declaration.approved_by is not None, declaration
            wait = STEP_SPECS[Step(declaration.approved_at)]
            assert wait.kind is StepKind.WAIT_FOR_APPROVAL
            assert wait.awaits is SignalType(declaration.approved_by)
            assert APPROVAL_WAIT_FOR[kind] is wait.step
        assert declaration.decided is None or declaration.rows is not None, declaration
        for path in (declaration.draft, declaration.prepare, declaration.chart):
            assert path is None or callable(body(path)), path


def test_every_approval_wait_approves_a_declared_kind() -> None:
    waits = [spec for spec in STEP_SPECS.values() if spec.kind is StepKind.WAIT_FOR_APPROVAL]
    assert {spec.step for spec in waits} == set(APPROVAL_WAIT_FOR.values())
    assert {spec.awaits for spec in waits} <= set(APPROVAL_SIGNALS)


def test_every_declared_console_table_and_field_fits_its_rows() -> None:
    for declaration in declared():
        specs = specs_of(declaration.kind)
        assert specs and all(isinstance(spec, TableSpec) for spec in specs), declaration
        decided = [spec for spec in specs if spec.decided]
        if declaration.rows is None:
            assert not decided and not fields_of(declaration.kind), declaration
            continue
        # The table people decide in names rows as amendments do.
        [table] = decided
        assert table.key == declaration.rows.key, declaration
        allowed = REPORT_STATEMENT if declaration.kind == "report" else AMENDABLE
        assert {field.name for field in fields_of(declaration.kind)} <= allowed, declaration


def test_a_new_artifact_kind_is_one_declaration(declared_fake: ArtifactDeclaration) -> None:
    kind = declared_fake.kind
    content = draft_vendors(None)

    # The analysis queue finds its drafting function.
    assert drafting_of("create_vendor_review") == (kind, draft_vendors, None)

    # Its rows: named, filtered, amended, and what is undecided before its gate.
    assert rows_of(kind) == ("vendors", "vendor_id") and kind in amendable_kinds()
    assert undecided_rows(kind, content) == ["V-1"]
    assert [r["vendor_id"] for r in matching_rows(kind, content, {"undecided": True})] == ["V-1"]
    ready = readiness(kind, 1, content, GatePolicy())
    assert requires_decisions(GatePolicy(), kind) and not ready.ready
    assert ready.refusal() is not None and "1 of 3 vendors without an owner: V-1" in (
        ready.refusal() or ""
    )
    amended = amended_content(
        content,
        kind,
        [{"row": "V-1", "changes": {"owner": "buyer@example.org"}}],
        actor_id="reviewer",
        reason="owner named",
        based_on=1,
    )
    assert undecided_rows(kind, amended) == []
    assert readiness(kind, 2, amended, GatePolicy()).ready

    # The console: its table with rows named as amendments name them, its form, its chart.
    [table] = tables(kind, content)
    assert table.spec is spec_of(kind, "vendors")
    assert [row.name for row in table.rows] == ["V-1", "V-2", "V-3"]
    assert changes_of(kind, {"owner": " buyer@example.org ", "other": "x"}) == {
        "owner": "buyer@example.org"
    }
    [drawn] = charts(kind, content)
    assert drawn.rows == [(1,)]

    # The lifecycle page's table of drafts.
    assert (
        "| `vendor_review` | `create_vendor_review` | `vendor_review_approved` | "
        "`wait_for_vendor_review_approval` | `vendors` by `vendor_id` | "
        "`owner` set (required by default) |"
    ) in artifact_table.render()


def test_the_lifecycle_page_is_what_the_declarations_write() -> None:
    page = artifact_table.PAGE.read_text()
    assert artifact_table.written(page) == page, (
        "docs/lifecycle.md is stale: python -m orchestrator.lifecycle.artifact_table --write"
    )
    assert all(f"| `{d.kind}` |" in page for d in declared())


def test_an_undeclared_kind_has_nothing() -> None:
    assert rows_of("vendor_review") is None and "vendor_review" not in amendable_kinds()
    assert specs_of("vendor_review") == () and fields_of("vendor_review") == ()
    assert charts("vendor_review", {"vendors": []}) == []
    assert not requires_decisions(GatePolicy(), "vendor_review")
