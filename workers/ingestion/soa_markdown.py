"""The approved Statement of Applicability as a Markdown document for the KB."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from workers.soa_content import soa_rows


def _line(value: Any) -> str:
    # One line per field: a newline in a justification must not open a heading.
    return " ".join(str(value).split())


def render_soa_markdown(content: dict[str, Any], version: int) -> str:
    """One heading per framework and per requirement, so each row lands in its own chunk."""
    framework = _line(content.get("framework", "SCF"))
    lines = [
        "---",
        f"title: Statement of Applicability v{version}",
        f"framework: {framework}",
        f"version: {version}",
        "---",
        "",
        f"# Statement of Applicability ({framework}, version {version})",
        "",
    ]
    catalog = content.get("catalog")
    if isinstance(catalog, dict):
        lines += [
            f"Control catalogue: {_line(catalog.get('name', ''))} "
            f"{_line(catalog.get('version', ''))}. "
            f"{_line(catalog.get('attribution', ''))}",
            "",
        ]
    rows = soa_rows(content)
    for framework, group in groupby(rows, key=lambda r: str(r.get("framework", ""))):
        lines += [f"## {_line(framework)}", ""]
        for row in group:
            applicable = "Applicable" if row.get("applicable") else "Not applicable"
            heading = " ".join(
                _line(part) for part in (row.get("requirement_id", ""), row.get("title")) if part
            )
            lines += [f"### {heading}", "", f"Status: {applicable}.", ""]
            controls = ", ".join(str(c) for c in row.get("scf_controls") or [])
            if controls:
                lines += [f"SCF controls: {_line(controls)}.", ""]
            lines += [f"Justification: {_line(row.get('justification', ''))}", ""]
            for field, label in (("implementation_status", "Implementation"), ("owner", "Owner")):
                if row.get(field):
                    lines += [f"{label}: {_line(str(row[field]).replace('_', ' '))}.", ""]
    return "\n".join(lines)
