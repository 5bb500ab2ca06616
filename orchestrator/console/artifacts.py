"""Each artifact kind as readable tables, and what changed since the previous version.

A draft's content is JSON; a reviewer reads it as tables: one per list in the content
(SoA per requirement, evidence with its cited passages, gaps, maturity per domain with its
criteria, POA&M items). Rows are matched across versions by their key (control, domain or
item id), so the diff says which rows were added, removed or changed, and how.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.contracts.signals import ArtifactKind


@dataclass(frozen=True)
class TableSpec:
    title: str
    rows: str
    """The content key holding the list of rows."""
    key: str
    columns: tuple[tuple[str, str], ...]
    """(field, heading) pairs, in order."""


_CONTROL = (("control_id", "Control"), ("title", "Title"))
_REQUIREMENT = (("framework", "Framework"), ("requirement_id", "Requirement"), ("title", "Title"))
_PROPOSAL = (("proposal", "Proposed"), ("reason", "Reason"))
SPECS: dict[ArtifactKind, tuple[TableSpec, ...]] = {
    ArtifactKind.SCF_PRE_ANALYSIS: (
        TableSpec(
            "Controls found in the documents",
            "controls",
            "control_id",
            (*_CONTROL, ("domain", "Domain"), ("coverage", "Coverage"), ("best_score", "Score")),
        ),
    ),
    ArtifactKind.SCOPE: (
        TableSpec(
            "Requirements in scope",
            "frameworks.requirements",
            "requirement_id",
            (*_REQUIREMENT, ("controls", "SCF controls")),
        ),
        TableSpec(
            "SCF controls in scope",
            "domains.controls",
            "control_id",
            (("domain", "Domain"), *_CONTROL, ("requirements", "Requirements")),
        ),
        TableSpec(
            "Domains out of scope",
            "out_of_scope",
            "domain",
            (("domain", "Domain"), ("name", "Name"), ("reason", "Reason")),
        ),
    ),
    ArtifactKind.SOA: (
        TableSpec(
            "Statement of applicability",
            "requirements",
            "requirement_id",
            (
                *_REQUIREMENT,
                ("scf_controls", "SCF controls"),
                ("applicable", "Applicable"),
                ("justification", "Justification"),
                *_PROPOSAL,
                ("evidence", "Cited passages"),
                ("implementation_status", "Implementation"),
                ("owner", "Owner"),
            ),
        ),
    ),
    ArtifactKind.EVIDENCE_ANALYSIS: (
        TableSpec(
            "Evidence per requirement",
            "requirements",
            "requirement_id",
            (
                *_REQUIREMENT,
                ("scf_controls", "SCF controls"),
                *_PROPOSAL,
                ("evidence", "Cited passages"),
            ),
        ),
        TableSpec(
            "Evidence per SCF control",
            "controls",
            "control_id",
            (*_CONTROL, ("weighting", "Weight"), *_PROPOSAL, ("evidence", "Cited passages")),
        ),
        TableSpec(
            "Documents: kind and adoption (a reviewer may override either)",
            "documents",
            "document_id",
            (
                ("filename", "Document"),
                ("kind", "Kind"),
                ("kind_basis", "Why this kind"),
                ("adoption", "Adoption"),
                ("adoption_basis", "Why"),
                ("overridden_by", "Overridden by"),
                ("override_reason", "Reviewer's reason"),
            ),
        ),
    ),
    ArtifactKind.GAP_ANALYSIS: (
        TableSpec(
            "Gaps",
            "gaps",
            "requirement_id",
            (
                *_REQUIREMENT,
                ("severity", "Severity"),
                ("evidence_state", "Evidence"),
                ("criteria", "Criteria"),
                ("condition", "Condition"),
            ),
        ),
        TableSpec(
            "Requirements with evidence",
            "met",
            "requirement",
            (
                ("requirement", "Requirement"),
                ("proposal", "Proposed"),
                ("assessed_status", "Assessed"),
            ),
        ),
    ),
    ArtifactKind.MATURITY_ASSESSMENT: (
        TableSpec(
            "Maturity per domain",
            "domains",
            "domain",
            (
                ("domain", "Domain"),
                ("name", "Name"),
                ("level", "Level"),
                ("label", "Label"),
                ("target", "Target"),
                ("rationale", "Rationale"),
            ),
        ),
        TableSpec(
            "Maturity per SCF control (SP-CMM criteria)",
            "controls",
            "control_id",
            (
                *_CONTROL,
                ("level", "Level"),
                ("target", "Target"),
                ("basis", "Basis"),
                ("criteria", "Criteria"),
            ),
        ),
    ),
    ArtifactKind.POAM: (
        TableSpec(
            "Plan of action and milestones",
            "items",
            "id",
            (
                ("id", "Item"),
                ("weakness_name", "Weakness"),
                ("point_of_contact", "Point of contact"),
                ("original_detection_date", "Detected"),
                ("scheduled_completion_date", "Scheduled completion"),
                ("milestones", "Milestones"),
                ("status", "Status"),
                ("original_risk_rating", "Original risk"),
                ("adjusted_risk_rating", "Adjusted risk"),
                ("remediation", "Remediation"),
            ),
        ),
    ),
    ArtifactKind.REPORT: (),
}


@dataclass
class Table:
    title: str
    headings: list[str]
    rows: list[list[Any]]
    keys: list[str]


@dataclass
class RowChange:
    key: str
    change: str
    """added, removed or changed."""
    fields: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(heading, before, after) of each changed field."""


@dataclass
class TableDiff:
    title: str
    changes: list[RowChange]


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def _rows(kind: ArtifactKind, spec: TableSpec, content: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one table; `outer.inner` flattens rows nested in a list of groups (scope:
    requirements under frameworks, controls under domains), each row naming its group."""
    outer, _, inner = spec.rows.partition(".")
    if not inner:
        return _dicts(content.get(outer))
    return [
        {"framework": group.get("name"), "domain": group.get("domain"), **row}
        for group in _dicts(content.get(outer))
        for row in _dicts(group.get(inner))
    ]


def tables(kind: ArtifactKind, content: dict[str, Any]) -> list[Table]:
    found = []
    for spec in SPECS.get(kind, ()):
        rows = _rows(kind, spec, content)
        found.append(
            Table(
                spec.title,
                [heading for _, heading in spec.columns],
                [[row.get(name) for name, _ in spec.columns] for row in rows],
                [str(row.get(spec.key)) for row in rows],
            )
        )
    return found


_PROPOSALS = ("evidence_found", "weak_evidence", "no_evidence_found", "template_not_adopted")


def summary(content: dict[str, Any]) -> list[tuple[str, Any]]:
    block = content.get("summary", {})
    if not isinstance(block, dict):
        return []
    out: list[tuple[str, Any]] = []
    for key, value in block.items():
        if key == "frameworks" and isinstance(value, list):
            out += [_abstention(entry) for entry in value if isinstance(entry, dict)]
        else:
            out.append((str(key).replace("_", " "), value))
    return out


def _abstention(entry: dict[str, Any]) -> tuple[str, str]:
    """One framework's proposals counted: how often the draft says it found nothing."""
    counts = ", ".join(f"{entry.get(p, 0)} {p.replace('_', ' ')}" for p in _PROPOSALS)
    return (f"{entry.get('framework')} proposals", f"{counts} (of {entry.get('requirements')})")


def diff(kind: ArtifactKind, before: dict[str, Any], after: dict[str, Any]) -> list[TableDiff]:
    """Rows added, removed or changed from `before` to `after`, per table."""
    found = []
    for spec in SPECS.get(kind, ()):
        old = {str(r.get(spec.key)): r for r in _rows(kind, spec, before)}
        new = {str(r.get(spec.key)): r for r in _rows(kind, spec, after)}
        changes = [RowChange(key, "added") for key in new if key not in old]
        changes += [RowChange(key, "removed") for key in old if key not in new]
        for key in new.keys() & old.keys():
            fields = [
                (heading, old[key].get(name), new[key].get(name))
                for name, heading in spec.columns
                if old[key].get(name) != new[key].get(name)
            ]
            if fields:
                changes.append(RowChange(key, "changed", fields))
        found.append(TableDiff(spec.title, sorted(changes, key=lambda c: (c.change, c.key))))
    return found
