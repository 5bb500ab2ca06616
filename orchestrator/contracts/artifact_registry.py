"""Every draft artifact kind's facts, declared once.

A kind's declaration is what the rest of the fleet reads about it: the step that drafts
it, the signal that approves it and the step that waits for that signal
(`APPROVAL_SIGNALS`, `APPROVAL_WAIT_FOR`), where its amendable rows are and what name a
row goes by, what a person must set on a row before the gate (and whether the gate's
default policy requires it), its label, and whether the report is built from it. Whether
it is versioned (rewind) and gated (the report's sign-off) follow from its approval.

The names (kind, steps, signal) are the contract of the reference documents: they are
also members of `ArtifactKind`, `AssessmentLifecycleStep` and `SignalType`, and the
lifecycle's `StepSpec`s place the steps; the tests check every list agrees.

The code that handles a kind registers itself where it lives (its drafting function in
`workers/analysis`, its console tables, form and chart in `orchestrator/console`), and
the entry points import it (orchestrator.runtime.registrations); nothing here names it.
`tests/architecture/test_artifact_declarations.py` adds a kind in a test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple


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
    #: What people call it (the report's sign-off).
    label: str = ""
    #: Whether the report is built from it: required, optional, or not at all.
    report: Literal["required", "optional"] | None = None
    #: For a kind with no gate of its own: the kind whose gate reviews it with it.
    reviewed_with: str | None = None

    @property
    def versioned(self) -> bool:
        """Drafts people approve: never drafted again without the new-version flag."""
        return self.approved_by is not None

    @property
    def approved_any_time(self) -> bool:
        """Approved with no wait of its own (the scope): any time until the report's gate."""
        return self.approved_by is not None and self.approved_at is None


ARTIFACTS: tuple[ArtifactDeclaration, ...] = (
    ArtifactDeclaration(
        "scf_pre_analysis",
        "run_scf_pre_analysis",
        label="SCF pre-analysis",
    ),
    ArtifactDeclaration(
        "scope",
        "create_scope",
        approved_by="scope_approved",
        label="Scope",
        report="optional",
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
        label="Statement of Applicability",
        report="required",
    ),
    ArtifactDeclaration(
        "evidence_analysis",
        "run_evidence_analysis",
        label="Evidence analysis",
        report="optional",
        reviewed_with="gap_analysis",
    ),
    ArtifactDeclaration(
        "gap_analysis",
        "create_gap_analysis",
        approved_by="gap_analysis_approved",
        approved_at="wait_for_gap_approval",
        rows=Rows("gaps", "control_id"),
        decided=Decided(("owner",), "findings without an owner"),
        label="Gap analysis",
        report="required",
    ),
    ArtifactDeclaration(
        "maturity_assessment",
        "create_maturity_assessment",
        approved_by="maturity_approved",
        approved_at="wait_for_maturity_approval",
        # Nothing is tracked as undecided: its levels are the system's proposal, read as one.
        rows=Rows("controls", "control_id"),
        label="Maturity assessment",
        report="required",
    ),
    ArtifactDeclaration(
        "poam",
        "create_poam",
        approved_by="poam_approved",
        approved_at="wait_for_poam_approval",
        rows=Rows("items", "id"),
        decided=Decided(("owner",), "items without an owner (point of contact)", by_default=True),
        label="Plan of Action & Milestones",
        report="required",
    ),
    ArtifactDeclaration(
        "report",
        "create_report",
        approved_by="report_approved",
        approved_at="wait_for_report_approval",
        # The assessor's statement (conclusion, scope boundary, period): one row.
        rows=Rows("statement", "id"),
        label="Assessment report",
    ),
)


def declared() -> tuple[ArtifactDeclaration, ...]:
    return ARTIFACTS


def kinds() -> set[str]:
    return {d.kind for d in declared()}


def declaration(kind: str) -> ArtifactDeclaration | None:
    return next((d for d in declared() if d.kind == kind), None)


def drafted_at(step: str) -> ArtifactDeclaration | None:
    return next((d for d in declared() if d.drafted_at == step), None)


def versioned() -> frozenset[str]:
    """The kinds rewinding never drafts again without the explicit new-version flag."""
    return frozenset(d.kind for d in declared() if d.versioned)


def in_report() -> tuple[ArtifactDeclaration, ...]:
    """The report's inputs, in the order the lifecycle drafts them."""
    return tuple(d for d in declared() if d.report is not None)
