"""Every draft artifact kind, declared once.

A kind's declaration is what the rest of the fleet reads about it: the step that drafts
it and the analysis function that does (`workers.analysis.service`), the signal that
approves it and the step that waits for that signal (`APPROVAL_SIGNALS`,
`APPROVAL_WAIT_FOR`), where its amendable rows are and what name a row goes by
(`orchestrator.service.draft_rows`), what a person must set on a row before the gate
(`orchestrator.service.readiness`, and whether the gate's default policy requires it),
and the console's tables, amendment form and chart. Adding a kind is one
`ArtifactDeclaration(...)` below plus its bodies; `tests/architecture/
test_artifact_declarations.py` declares one in a test and finds it in each of those.

The names (kind, steps, signal) are the contract of the reference documents: they are
also members of `ArtifactKind`, `AssessmentLifecycleStep` and `SignalType`, and the
lifecycle's `StepSpec`s place the steps; the test checks every list agrees.

Bodies are named by import path ("package.module:attribute"), so this module stays at the
bottom of the layers while the functions and tables live where they belong.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple


class Rows(NamedTuple):
    """Where a draft keeps the rows people amend."""

    #: The content key holding the rows.
    list_name: str
    #: The field naming a row (with its framework where two frameworks share a key).
    key: str


@dataclass(frozen=True)
class Decided:
    """What makes a row decided by a person rather than proposed by the system."""

    #: Fields a person must have set on an applicable row.
    fields: tuple[str, ...]
    #: The undecided rows, in words ("findings without an owner").
    what: str
    #: The gate's policy requires decided rows unless the run says otherwise.
    by_default: bool = False


@dataclass(frozen=True)
class ArtifactDeclaration:
    #: The artifact kind (an `ArtifactKind` value).
    kind: str
    #: The step whose job drafts it.
    drafted_at: str
    #: The signal that approves it; None for drafts nobody approves.
    approved_by: str | None = None
    #: The step that waits for that signal; None when the approval has no wait of its own
    #: (the scope may be approved until the report's gate).
    approved_at: str | None = None
    rows: Rows | None = None
    decided: Decided | None = None
    #: The analysis queue's drafting function, (JobContext) -> content; None when another
    #: queue drafts it (the report: `workers.reporting`).
    draft: str | None = None
    #: Computed ahead of the draft, outside any transaction: (JobRequest) -> None.
    prepare: str | None = None
    #: The console: its tables (tuple of TableSpec), amendment fields (tuple of
    #: AmendField) and chart ((content) -> list of Chart).
    tables: str | None = None
    fields: str | None = None
    chart: str | None = None


_TABLES = "orchestrator.console.draft_tables"
_FIELDS = "orchestrator.console.amend_fields"
_CHARTS = "orchestrator.console.charts"
_RETRIEVAL = "workers.analysis.requirement_evidence:prepare_retrieval"

ARTIFACTS: tuple[ArtifactDeclaration, ...] = (
    ArtifactDeclaration(
        "scf_pre_analysis",
        "run_scf_pre_analysis",
        draft="workers.analysis.pre_analysis:run_scf_pre_analysis",
        tables=f"{_TABLES}:PRE_ANALYSIS",
    ),
    ArtifactDeclaration(
        "scope",
        "create_scope",
        approved_by="scope_approved",
        draft="workers.analysis.scope:create_scope",
        tables=f"{_TABLES}:SCOPE",
    ),
    ArtifactDeclaration(
        "soa",
        "create_soa_draft",
        approved_by="soa_approved",
        approved_at="wait_for_soa_approval",
        rows=Rows("requirements", "requirement_id"),
        decided=Decided(
            ("implementation_status",),
            "applicable rows without a reviewer-set implementation status",
            by_default=True,
        ),
        draft="workers.analysis.soa:create_soa_draft",
        prepare=_RETRIEVAL,
        tables=f"{_TABLES}:SOA",
        fields=f"{_FIELDS}:SOA",
        chart=f"{_CHARTS}:statement_of_applicability",
    ),
    ArtifactDeclaration(
        "evidence_analysis",
        "run_evidence_analysis",
        draft="workers.analysis.evidence:run_evidence_analysis",
        prepare="workers.analysis.evidence_batches:prepare_evidence",
        tables=f"{_TABLES}:EVIDENCE",
    ),
    ArtifactDeclaration(
        "gap_analysis",
        "create_gap_analysis",
        approved_by="gap_analysis_approved",
        approved_at="wait_for_gap_approval",
        rows=Rows("gaps", "control_id"),
        decided=Decided(("owner",), "findings without an owner"),
        draft="workers.analysis.gaps:create_gap_analysis",
        tables=f"{_TABLES}:GAP_ANALYSIS",
        fields=f"{_FIELDS}:GAP_ANALYSIS",
    ),
    ArtifactDeclaration(
        "maturity_assessment",
        "create_maturity_assessment",
        approved_by="maturity_approved",
        approved_at="wait_for_maturity_approval",
        # Nothing is tracked as undecided: its levels are the system's proposal, read as one.
        rows=Rows("controls", "control_id"),
        draft="workers.analysis.maturity:create_maturity_assessment",
        tables=f"{_TABLES}:MATURITY",
        fields=f"{_FIELDS}:MATURITY",
        chart=f"{_CHARTS}:maturity",
    ),
    ArtifactDeclaration(
        "poam",
        "create_poam",
        approved_by="poam_approved",
        approved_at="wait_for_poam_approval",
        rows=Rows("items", "id"),
        decided=Decided(("owner",), "items without an owner (point of contact)", by_default=True),
        draft="workers.analysis.poam:create_poam",
        tables=f"{_TABLES}:POAM",
        fields=f"{_FIELDS}:POAM",
        chart=f"{_CHARTS}:poam",
    ),
    ArtifactDeclaration(
        "report",
        "create_report",
        approved_by="report_approved",
        approved_at="wait_for_report_approval",
        # The assessor's statement (conclusion, scope boundary, period): one row.
        rows=Rows("statement", "id"),
        tables=f"{_TABLES}:REPORT",
        fields=f"{_FIELDS}:REPORT",
    ),
)


def declared() -> tuple[ArtifactDeclaration, ...]:
    return ARTIFACTS


def declaration(kind: str) -> ArtifactDeclaration | None:
    return next((d for d in declared() if d.kind == kind), None)


def drafted_at(step: str) -> ArtifactDeclaration | None:
    return next((d for d in declared() if d.drafted_at == step), None)


def body_of(kind: str, part: str) -> Any | None:
    """What a kind's declaration names for `part` ("tables", "fields", "chart", "draft",
    "prepare"), or None where the kind is undeclared or names nothing."""
    found = declaration(kind)
    path = getattr(found, part) if found is not None else None
    return body(path) if path else None


@cache
def body(path: str) -> Any:
    """The object an import path names ("package.module:attribute")."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)
