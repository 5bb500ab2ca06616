"""The fields a reviewer amends on each kind of draft, as the amendment form offers them,
and the change a posted form asks for (`orchestrator.service.amendments` checks it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.contracts.artifact_registry import kinds
from orchestrator.contracts.registry import Registry
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.amendments import ASSESSED, SEVERITIES


@dataclass(frozen=True)
class AmendField:
    name: str
    label: str
    widget: str
    """status, severity, applicable (yes or no), text, textarea or date."""
    choices: tuple[str, ...] = ()


def _f(name: str, label: str, widget: str = "text") -> AmendField:
    choices = {"status": ASSESSED, "severity": SEVERITIES, "applicable": ("yes", "no")}
    return AmendField(name, label, widget, choices.get(widget, ()))


_OWNER = _f("owner", "Owner")
_TARGET = _f("target_date", "Target date", "date")
_NOTE = _f("note", "Note", "textarea")
_JUSTIFICATION = _f("justification", "Justification", "textarea")
_APPLICABLE = _f("applicable", "Applicable", "applicable")

#: Each kind's amendment fields, registered where they are written (the shipped kinds' below).
FIELDS: Registry[tuple[AmendField, ...]] = Registry("amendment form", kinds)

SOA = (
    _f("implementation_status", "Implementation status", "status"),
    _OWNER,
    _APPLICABLE,
    _JUSTIFICATION,
    _f("legal_basis", "Legal or contractual requirement", "textarea"),
    _NOTE,
)
GAP_ANALYSIS = (
    _OWNER,
    _TARGET,
    _f("severity", "Severity", "severity"),
    _f("assessed_status", "Assessed status", "status"),
    _f("cause", "Cause", "textarea"),
    _f("effect", "Effect", "textarea"),
    _f("recommendation", "Recommendation", "textarea"),
    _f("not_a_gap", "Not a gap", "applicable"),
    _f("not_a_gap_reason", "Why not a gap", "textarea"),
    _NOTE,
)
MATURITY = (
    _f("assessed_status", "Assessed status", "status"),
    _OWNER,
    _TARGET,
    _APPLICABLE,
    _JUSTIFICATION,
    _NOTE,
)
POAM = (_OWNER, _TARGET, _NOTE)
REPORT = (
    _f("conclusion", "Conclusion", "textarea"),
    _f("scope_boundary", "Scope boundary", "textarea"),
    _f("period_start", "Period start", "date"),
    _f("period_end", "Period end", "date"),
    _NOTE,
)


FIELDS.add(ArtifactKind.SOA, SOA)
FIELDS.add(ArtifactKind.GAP_ANALYSIS, GAP_ANALYSIS)
FIELDS.add(ArtifactKind.MATURITY_ASSESSMENT, MATURITY)
FIELDS.add(ArtifactKind.POAM, POAM)
FIELDS.add(ArtifactKind.REPORT, REPORT)


def fields_of(kind: str) -> tuple[AmendField, ...]:
    """The amendment form's fields for `kind` (none where none are registered)."""
    return FIELDS.get(kind) or ()


def changes_of(kind: str, form: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the form set (blank ones stay as they are)."""
    changes: dict[str, Any] = {}
    for spec in fields_of(kind):
        given = str(form.get(spec.name) or "").strip()
        if not given:
            continue
        changes[spec.name] = given == "yes" if spec.widget == "applicable" else given
    return changes
