"""Each draft as the tables a reviewer works through.

One table per list in the content (SoA per requirement; evidence per requirement, per
control and per document; gaps and requirements met; maturity per domain and per control;
POA&M items; the report's assessor statement). A row reads as one line (its key, title,
proposal, the status and owner people set); its other fields open on demand, and the
longest (every passage read, maturity criteria) are on the row's own page.

Every column a reviewer can amend is on the line or first among the details.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.console.owner_proposals import owner_proposal
from orchestrator.contracts.artifact_registry import kinds
from orchestrator.contracts.registry import Registry
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service import draft_rows
from orchestrator.service.draft_rows import names_of
from orchestrator.service.row_decisions import row_decision_labels


@dataclass(frozen=True)
class Column:
    field: str
    heading: str
    proposed: str | None = None
    """A field holding the system's proposal, shown while `field` is unset."""
    said: Callable[[Mapping[str, Any]], str] | None = None
    """How the proposal reads from its row, where its value alone would not say enough."""


@dataclass(frozen=True)
class Facet:
    """A filter a table offers: a query parameter, the row field it selects on
    (`orchestrator.service.row_filter`), and its label."""

    param: str
    field: str
    label: str


@dataclass(frozen=True)
class TableSpec:
    slug: str
    title: str
    rows: str
    """The content key holding the rows; `outer.inner` flattens rows nested in groups."""
    key: str
    line: tuple[Column, ...]
    details: tuple[Column, ...] = ()
    extended: tuple[Column, ...] = ()
    """Long fields, on the row's own page only."""
    facets: tuple[Facet, ...] = ()
    decided: bool = False
    """The rows people decide and amend (the kind's declared `rows`)."""

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.line + self.details + self.extended


#: Each kind's tables, registered where they are written (the shipped kinds' below).
TABLES: Registry[tuple[TableSpec, ...]] = Registry("console table", kinds)


def _c(name: str, heading: str, proposed: str | None = None) -> Column:
    return Column(name, heading, proposed)


#: The owner people set, else who is proposed and where the proposal came from.
_PROPOSED_OWNER = Column("owner", "Owner", "proposed_owner", owner_proposal)
_PROPOSAL = Facet("proposal", "proposal", "Proposed")
_DOMAIN = Facet("domain", "domain", "SCF domain")
_OWNER = Facet("owner", "owner", "Owner")
_FRAMEWORK = Facet("framework", "framework", "Framework")
_CITED = _c("evidence", "Cited passages")
_READ = _c("candidates", "Every passage read")
EVIDENCE: tuple[TableSpec, ...] = (
    TableSpec(
        "requirements",
        "Evidence per requirement",
        "requirements",
        "requirement_id",
        (_c("requirement_id", "Requirement"), _c("title", "Title"), _c("proposal", "Proposed")),
        (
            _c("framework", "Framework"),
            _c("assessed_status", "Assessed"),
            _c("reason", "Why proposed"),
            _c("scf_controls", "SCF controls"),
            _CITED,
        ),
        (_READ, _c("template_passages", "Template passages set aside")),
        (_PROPOSAL, Facet("status", "assessed_status", "Assessed"), _FRAMEWORK, _DOMAIN),
    ),
    TableSpec(
        "controls",
        "Evidence per SCF control",
        "controls",
        "control_id",
        (
            _c("control_id", "Control"),
            _c("title", "Title"),
            _c("proposal", "Proposed"),
            _c("weighting", "Weight"),
        ),
        (_c("domain_name", "Domain"), _c("reason", "Why proposed"), _CITED),
        (_READ,),
        (_PROPOSAL, _DOMAIN),
    ),
    TableSpec(
        "documents",
        "Documents: kind and adoption (a reviewer may override either)",
        "documents",
        "document_id",
        (
            _c("filename", "Document"),
            _c("kind", "Kind"),
            _c("adoption", "Adoption"),
            _c("overridden_by", "Overridden by"),
        ),
        (
            _c("kind_basis", "Why this kind"),
            _c("adoption_basis", "Why"),
            _c("override_reason", "Reviewer's reason"),
        ),
        (),
        (Facet("kind", "kind", "Kind"), Facet("adoption", "adoption", "Adoption")),
    ),
)

# Each shipped kind's tables (registered in TABLES below).
PRE_ANALYSIS: tuple[TableSpec, ...] = (
    TableSpec(
        "controls",
        "Controls found in the documents",
        "controls",
        "control_id",
        (
            _c("control_id", "Control"),
            _c("title", "Title"),
            _c("coverage", "Coverage"),
            _c("best_score", "Score"),
        ),
        (_c("domain_name", "Domain"),),
        (),
        (Facet("coverage", "coverage", "Coverage"), _DOMAIN),
    ),
)

SCOPE: tuple[TableSpec, ...] = (
    TableSpec(
        "requirements",
        "Requirements in scope",
        "frameworks.requirements",
        "requirement_id",
        (
            _c("requirement_id", "Requirement"),
            _c("title", "Title"),
            _c("framework", "Framework"),
            _c("in_scope", "In scope"),
        ),
        (_c("category", "Category"), _c("controls", "SCF controls"), _c("reason", "Why")),
        (),
        (_FRAMEWORK,),
    ),
    TableSpec(
        "controls",
        "SCF controls in scope",
        "domains.controls",
        "control_id",
        (_c("control_id", "Control"), _c("title", "Title"), _c("coverage", "Coverage")),
        (_c("domain_name", "Domain"), _c("requirements", "Requirements")),
        (),
        (_DOMAIN, Facet("coverage", "coverage", "Coverage")),
    ),
    TableSpec(
        "out_of_scope",
        "Domains out of scope",
        "out_of_scope",
        "domain",
        (_c("domain", "Domain"), _c("name", "Name")),
        (_c("reason", "Reason"),),
    ),
)

#: Not a field of the draft: how the row's status was decided, read from its amendments
#: (`with_decisions`), so a status confirmed in bulk reads apart from one decided alone.
DECIDED_HOW = "decided_how"
_DECIDED_HOW = _c(DECIDED_HOW, "Status decided")

SOA: tuple[TableSpec, ...] = (
    TableSpec(
        "requirements",
        "Statement of applicability",
        "requirements",
        "requirement_id",
        (
            _c("requirement_id", "Requirement"),
            _c("title", "Title"),
            _c("proposal", "Evidence"),
            _c("implementation_status", "Implementation", "proposed_implementation_status"),
            _PROPOSED_OWNER,
            _c("applicable", "Applicable"),
        ),
        (
            _c("justification", "Justification"),
            _c("note", "Note"),
            _DECIDED_HOW,
            _c("framework", "Framework"),
            _c("category", "Category"),
            _c("scf_controls", "SCF controls"),
            _c("reason", "Why the evidence proposal"),
            _c("proposed_status_basis", "Why the proposed status"),
            _c("excluded_by", "Excluded by"),
            _CITED,
        ),
        (_READ,),
        (
            Facet("status", "implementation_status", "Implementation"),
            _PROPOSAL,
            _OWNER,
            _DOMAIN,
            _FRAMEWORK,
            Facet("category", "category", "Category"),
        ),
        decided=True,
    ),
)

GAP_ANALYSIS: tuple[TableSpec, ...] = (
    TableSpec(
        "gaps",
        "Gaps",
        "gaps",
        "control_id",
        (
            _c("control_id", "Finding"),
            _c("title", "Title"),
            _c("severity", "Severity"),
            _c("evidence_state", "Evidence"),
            _PROPOSED_OWNER,
            _c("target_date", "Target date"),
        ),
        (
            _c("assessed_status", "Assessed"),
            _DECIDED_HOW,
            _c("cause", "Cause"),
            _c("effect", "Effect"),
            _c("recommendation", "Recommendation"),
            _c("not_a_gap", "Not a gap"),
            _c("not_a_gap_reason", "Why not a gap"),
            _c("note", "Note"),
            _c("not_a_gap_review", "Not a gap: to decide again"),
            _c("condition", "Condition"),
            _c("scf_controls", "SCF controls"),
            _c("nist_controls", "NIST SP 800-53 controls"),
            _c("documents", "Documents"),
        ),
        (_c("criteria", "Criteria"),),
        (
            Facet("severity", "severity", "Severity"),
            Facet("status", "evidence_state", "Evidence"),
            _OWNER,
            _DOMAIN,
            _FRAMEWORK,
        ),
        decided=True,
    ),
    TableSpec(
        "met",
        "Requirements with evidence",
        "met",
        "requirement",
        (
            _c("requirement", "Requirement"),
            _c("proposal", "Proposed"),
            _c("assessed_status", "Assessed"),
        ),
        (_c("nist_controls", "NIST SP 800-53 controls"),),
        (),
        (_PROPOSAL, Facet("status", "assessed_status", "Assessed")),
    ),
)

MATURITY: tuple[TableSpec, ...] = (
    TableSpec(
        "domains",
        "Maturity per domain",
        "domains",
        "domain",
        (
            _c("domain", "Domain"),
            _c("name", "Name"),
            _c("level", "Level"),
            _c("target", "Target"),
            _c("below_target", "Controls below target"),
        ),
        (_c("label", "Label"), _c("rationale", "Rationale"), _c("controls", "Controls")),
    ),
    TableSpec(
        "controls",
        "Maturity per SCF control (SP-CMM criteria)",
        "controls",
        "control_id",
        (
            _c("control_id", "Control"),
            _c("title", "Title"),
            _c("level", "Level"),
            _c("target", "Target"),
            _c("assessed_status", "Assessed"),
            _c("owner", "Owner"),
        ),
        (
            _c("label", "Label"),
            _c("basis", "Basis"),
            _c("note", "Note"),
            _c("evidence_kinds", "Evidence kinds"),
        ),
        (_c("criteria", "Criteria"),),
        (Facet("level", "level", "Level"), _DOMAIN, _OWNER),
        decided=True,
    ),
)

POAM: tuple[TableSpec, ...] = (
    TableSpec(
        "items",
        "Plan of action and milestones",
        "items",
        "id",
        (
            _c("id", "Item"),
            _c("weakness_name", "Weakness"),
            _c("original_risk_rating", "Risk"),
            _PROPOSED_OWNER,
            _c("scheduled_completion_date", "Scheduled completion"),
            _c("status", "Status"),
        ),
        (
            _c("target_date", "Target date"),
            _c("note", "Note"),
            _c("point_of_contact", "Point of contact"),
            _c("weakness", "Weakness described"),
            _c("remediation", "Remediation"),
            _c("milestones", "Milestones"),
            _c("original_detection_date", "Detected"),
            _c("adjusted_risk_rating", "Adjusted risk"),
            _c("controls", "Controls (NIST SP 800-53)"),
            _c("scf_controls", "SCF controls"),
        ),
        (),
        (
            Facet("status", "status", "Status"),
            Facet("severity", "severity", "Severity"),
            _OWNER,
            _DOMAIN,
        ),
        decided=True,
    ),
)

REPORT: tuple[TableSpec, ...] = (
    TableSpec(
        "statement",
        "The assessor's statement",
        "statement",
        "id",
        (
            _c("id", "Row"),
            _c("conclusion", "Conclusion"),
            _c("period_start", "Period start"),
            _c("period_end", "Period end"),
        ),
        (_c("scope_boundary", "Scope boundary"), _c("note", "Note"), _c("set_by", "Set by")),
        decided=True,
    ),
)


_K = ArtifactKind
for _kind, _specs in (
    (_K.SCF_PRE_ANALYSIS, PRE_ANALYSIS),
    (_K.SCOPE, SCOPE),
    (_K.SOA, SOA),
    (_K.EVIDENCE_ANALYSIS, EVIDENCE),
    (_K.GAP_ANALYSIS, GAP_ANALYSIS),
    (_K.MATURITY_ASSESSMENT, MATURITY),
    (_K.POAM, POAM),
    (_K.REPORT, REPORT),
):
    TABLES.add(_kind, _specs)


def specs_of(kind: str) -> tuple[TableSpec, ...]:
    """The kind's registered tables (none for an undeclared kind)."""
    return TABLES.get(kind) or ()


def spec_of(kind: str, slug: str) -> TableSpec | None:
    return next((s for s in specs_of(kind) if s.slug == slug), None)


def dicts(value: Any) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def rows_of(spec: TableSpec, content: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one table; `outer.inner` flattens rows nested in a list of groups (scope:
    requirements under frameworks, controls under domains), each row naming its group."""
    outer, _, inner = spec.rows.partition(".")
    if not inner:
        return dicts(content.get(outer))
    return [
        {"framework": group.get("name"), "domain": group.get("domain"), **row}
        for group in dicts(content.get(outer))
        for row in dicts(group.get(inner))
    ]


@dataclass(frozen=True)
class NamedRow:
    name: str
    """As amendments and comments name it (the key, or "<framework> <key>")."""
    row: dict[str, Any]


def named_rows(kind: str, spec: TableSpec, content: dict[str, Any]) -> list[NamedRow]:
    rows = rows_of(spec, content)
    rows_at = draft_rows.rows_of(kind)
    if spec.decided and rows_at is not None:
        return [NamedRow(n, row) for n, row in zip(names_of(rows, rows_at.key), rows, strict=True)]
    return [NamedRow(str(row.get(spec.key)), row) for row in rows]


def with_decisions(
    kind: str, spec: TableSpec, content: dict[str, Any], named: list[NamedRow]
) -> list[NamedRow]:
    """`named` (decided rows of `content`), each a copy naming how its status was decided
    (the content is shared between requests: never changed)."""
    if not spec.decided or draft_rows.rows_of(kind) is None:
        return named
    labels = row_decision_labels(kind, content)
    return [NamedRow(n.name, {**n.row, DECIDED_HOW: labels.get(n.name)}) for n in named]


_PROPOSALS = ("evidence_found", "weak_evidence", "no_evidence_found", "template_not_adopted")


def summary(content: dict[str, Any]) -> list[tuple[str, Any]]:
    block = content.get("summary", {})
    if not isinstance(block, dict):
        return []
    out: list[tuple[str, Any]] = []
    for key, value in block.items():
        if key == "frameworks" and isinstance(value, list):
            out += [_abstention(entry) for entry in value if isinstance(entry, dict)]
        elif key == "by_category" and isinstance(value, list):
            out += [_category(entry) for entry in value if isinstance(entry, dict)]
        else:
            out.append((str(key).replace("_", " "), value))
    return out


def _abstention(entry: dict[str, Any]) -> tuple[str, str]:
    """One framework's proposals counted: how often the draft says it found nothing."""
    counts = ", ".join(f"{entry.get(p, 0)} {p.replace('_', ' ')}" for p in _PROPOSALS)
    return (f"{entry.get('framework')} proposals", f"{counts} (of {entry.get('requirements')})")


def _category(entry: dict[str, Any]) -> tuple[str, str]:
    name = f"{entry.get('framework')} {str(entry.get('category')).replace('_', ' ')}"
    return (name, f"{entry.get('applicable', 0)} applicable, {entry.get('not_applicable', 0)} not")


@dataclass
class Table:
    """A whole table (tests and the row page): headings, the line values, row names."""

    spec: TableSpec
    rows: list[NamedRow] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def keys(self) -> list[str]:
        return [r.name for r in self.rows]


def tables(kind: str, content: dict[str, Any]) -> list[Table]:
    return [Table(spec, named_rows(kind, spec, content)) for spec in specs_of(kind)]
