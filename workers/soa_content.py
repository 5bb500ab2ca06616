"""Reading a Statement of Applicability: its rows (one per requirement) and the SCF
controls they make applicable.

Drafts before the per-requirement SoA listed SCF controls under `controls`; they read as
rows of the framework "SCF" so a run drafted then still reports and analyses.
"""

from __future__ import annotations

from typing import Any

ROWS = "requirements"
KEY = "requirement_id"


def soa_rows(content: dict[str, Any]) -> list[dict[str, Any]]:
    rows = content.get(ROWS)
    if isinstance(rows, list):
        return [row for row in rows if isinstance(row, dict)]
    framework = content.get("framework", "SCF")
    return [
        {
            "framework": framework,
            "requirement_id": control.get("control_id"),
            "title": control.get("title"),
            "scf_controls": [control.get("control_id")],
            **{
                k: control.get(k)
                for k in ("applicable", "justification", "implementation_status", "owner")
            },
        }
        for control in content.get("controls", [])
        if isinstance(control, dict)
    ]


def row_key(row: dict[str, Any]) -> tuple[str, str]:
    return str(row.get("framework") or ""), str(row.get(KEY) or "")


def applicable_controls(content: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The SCF controls to look for evidence of, each with its header (id, domain, title):
    those in scope that are not excluded themselves and not linked only to rows that are
    not applicable. A control no row links (ISO/IEC 27001's clauses link controls but
    have no SoA row) stays applicable."""
    if ROWS not in content:
        return {str(c["control_id"]): c for c in content.get("controls", []) if c.get("applicable")}
    linked: dict[str, bool] = {}  # control id -> linked to an applicable row
    for row in soa_rows(content):
        for control_id in row.get("scf_controls") or []:
            linked[str(control_id)] = linked.get(str(control_id), False) or bool(
                row.get("applicable")
            )
    return {
        str(c.get("control_id")): c
        for c in content.get("scf_controls", [])
        if not c.get("excluded") and linked.get(str(c.get("control_id")), True)
    }
