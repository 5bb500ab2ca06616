"""The approved Statement of Applicability as a Markdown document for the KB."""

from __future__ import annotations

from itertools import groupby
from typing import Any


def _line(value: Any) -> str:
    # One line per field: a newline in a justification must not open a heading.
    return " ".join(str(value).split())


def render_soa_markdown(content: dict[str, Any], version: int) -> str:
    """One heading per domain and per control, so each control lands in its own chunk."""
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
    controls = sorted(
        content.get("controls", []),
        key=lambda c: (str(c.get("domain", "")), str(c.get("control_id", ""))),
    )
    for domain, group in groupby(controls, key=lambda c: str(c.get("domain", ""))):
        members = list(group)
        domain_name = _line(members[0].get("domain_name", domain))
        lines += [f"## {_line(domain)} {domain_name}", ""]
        for control in members:
            applicable = "Applicable" if control.get("applicable") else "Not applicable"
            lines += [
                f"### {_line(control.get('control_id', ''))} {_line(control.get('title', ''))}",
                "",
                f"Status: {applicable}.",
                "",
                f"Justification: {_line(control.get('justification', ''))}",
                "",
            ]
    return "\n".join(lines)
