"""An OSCAL export asked for FedRAMP: refused while the report it belongs to was drafted
with a placeholder SSP link or system id, naming each setting to set. What is checked is
what the export holds (the plan's and the POA&M's import-ssp, the POA&M's system-id; the
results carry the plan's, which they import), not today's settings: a report drafted
before the settings were set still holds its placeholders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.contracts.errors import FedrampSettingsMissing, InvalidInput
from orchestrator.contracts.fedramp_settings import (
    FEDRAMP_SYSTEM,
    MARK,
    SSP_HREF,
    SYSTEM_ID,
    Setting,
    refusal,
)

#: Export kind -> the exports whose settings it stands on, and the document's root key.
_STANDS_ON = {
    "oscal_assessment_plan": ("oscal_assessment_plan",),
    "oscal_assessment_results": ("oscal_assessment_plan",),
    "oscal_poam": ("oscal_poam",),
}
_ROOTS = {
    "oscal_assessment_plan": "assessment-plan",
    "oscal_poam": "plan-of-action-and-milestones",
}


def check_fedramp_export(report: dict[str, Any], version: int, kind: str) -> None:
    """Raise FedrampSettingsMissing (409) naming the placeholder settings the `kind`
    export of the report (its content, its version) holds; InvalidInput for a kind that
    is no OSCAL export."""
    if kind not in _STANDS_ON:
        raise InvalidInput(
            f"fedramp applies to the OSCAL exports only ({', '.join(_STANDS_ON)}), not {kind}"
        )
    exports = {
        str(e.get("kind")): Path(str(e.get("path")))
        for e in report.get("exports", [])
        if isinstance(e, dict)
    }
    problems: dict[str, str] = {}
    for source in _STANDS_ON[kind]:
        if source not in exports:
            continue  # the missing export itself is answered 404 where it is read
        document = json.loads(exports[source].read_text(encoding="utf-8"))[_ROOTS[source]]
        problems |= _placeholders(document)
    if problems:
        raise FedrampSettingsMissing(
            f"the {kind} export of report v{version} cannot go to FedRAMP: "
            + " ".join(problems.values()),
            settings=sorted(problems),
        )


def _placeholders(document: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    ssp = document.get("import-ssp")
    if isinstance(ssp, dict):
        remarks = str(ssp.get("remarks") or "")
        said = remarks.removeprefix(MARK).strip() if remarks.startswith(MARK) else None
        said = said or refusal(SSP_HREF, str(ssp.get("href") or ""))
        if said:
            found[SSP_HREF.variable] = said
    system = document.get("system-id")
    if isinstance(system, dict):
        value = str(system.get("id") or "")
        said = refusal(SYSTEM_ID, value)
        # OSCAL's URI type writes FedRAMP's with a trailing slash.
        if str(system.get("identifier-type") or "").rstrip("/") != FEDRAMP_SYSTEM:
            said = _not_set(SYSTEM_ID)
        if said:
            found[SYSTEM_ID.variable] = said
    return found


def _not_set(setting: Setting) -> str:
    return (
        f"{setting.name} ({setting.variable}), {setting.what}, was empty or a placeholder "
        "when the report was drafted: the export holds the assessment's own id instead. "
        "Set it, then draft the report again."
    )
