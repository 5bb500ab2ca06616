"""The assessment report as one standalone HTML page: contents, sections, the sign-off of
its inputs and the catalogues it rests on with their attribution. Every value is escaped."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator.db.compute_guard import computing
from workers.reporting.conclusion_check import conclusion_warning
from workers.reporting.figures import Figures, figures
from workers.soa_content import soa_rows

Content = dict[str, Any]

SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("statement", "Assessor's statement"),
    ("signoff", "Sign-off"),
    ("scope", "Scope"),
    ("soa", "Statement of Applicability"),
    ("gaps", "Gaps"),
    ("maturity", "Maturity by domain"),
    ("poam", "Plan of Action & Milestones"),
    ("evidence", "Evidence citations"),
    ("catalogues", "Catalogues and attribution"),
)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;color:#1b1f24}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{border:1px solid #c8ccd1;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f4}.muted{color:#5c6670}blockquote{margin:.25rem 0 .75rem 1rem}
nav ol{columns:2}.unapproved td{color:#b00020;font-weight:600}
"""
#: The colour a sign-off row of an input nobody approved is shown in (HTML and PDF).
ALERT = "#b00020"


@dataclass(frozen=True)
class ReportInput:
    title: str
    assessment_name: str
    as_of: str
    soa: Content
    gaps: Content
    maturity: Content
    poam: Content
    scope: Content = field(default_factory=dict)
    evidence: Content = field(default_factory=dict)
    signoff: list[Content] = field(default_factory=list)
    """Per input artifact: version, checksum, approvals and amendments (see signoff.py)."""
    statement: Content = field(default_factory=dict)
    """The assessor's statement reviewers set on the report draft: conclusion, scope
    boundary, period (see workers.reporting.statement)."""
    assessment_id: str = ""
    documents: list[Content] = field(default_factory=list)
    """The assessment's uploaded documents (filename, media type, sha256): its subjects."""
    ssp_href: str = ""
    """Where the system's OSCAL SSP is (settings: oscal_ssp_href); empty: a placeholder."""
    system_id: str = ""
    """The system's FedRAMP id (settings: oscal_system_id); empty: the assessment id."""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def by_section(namespace: dict[str, Any]) -> dict[str, Any]:
    """Each section's builder in a renderer's module: the function named `_<section key>`
    (a section without one fails at once, on the first report)."""
    return {key: namespace[f"_{key}"] for key, _ in SECTIONS}


def render_report_html(report: ReportInput) -> str:
    computing("rendering")
    renderers = by_section(globals())
    contents = "".join(f'<li><a href="#{key}">{esc(heading)}</a></li>' for key, heading in SECTIONS)
    sections = "".join(
        f'<section id="{key}"><h2>{esc(heading)}</h2>{renderers[key](report)}</section>'
        for key, heading in SECTIONS
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{esc(report.title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{esc(report.title)}</h1>"
        f'<p class="muted">Assessment: {esc(report.assessment_name)}. '
        f"Prepared from the artifacts as of {esc(report.as_of)}.</p>"
        f'<p class="muted">{esc(credit_line(report))}</p>'
        f'<nav aria-labelledby="contents"><h2 id="contents">Contents</h2><ol>{contents}</ol></nav>'
        f"{sections}</body></html>\n"
    )


def report_figures(report: ReportInput) -> Figures:
    return figures(report.soa, report.evidence, report.gaps)


def summary_rows(report: ReportInput) -> list[tuple[str, Any]]:
    """The headline figures, shared by every rendering of the report: each counted from
    the drafts' in-scope rows (workers.reporting.figures)."""
    soa = report.soa.get("summary", {})
    counted = report_figures(report)
    severity = counted.by_severity
    proposals = counted.proposals
    return [
        ("Framework", report.soa.get("framework", report.scope.get("framework", "SCF"))),
        ("Requirements in the SoA", counted.soa_rows),
        ("Applicable requirements", counted.soa_applicable),
        ("SCF controls in scope", soa.get("scf_controls", soa.get("controls", 0))),
        ("Requirements assessed in scope (sub-items rolled up)", counted.requirements_in_scope),
        ("Requirements with evidence", counted.requirements_met),
        (
            "Gaps (high / medium / low)",
            f"{counted.gaps} ({severity['high']} / {severity['medium']} / {severity['low']})",
        ),
        (
            "Evidence rows in scope (found / weak / none / unadopted template)",
            f"{counted.evidence_rows_in_scope} ({proposals['evidence_found']} / "
            f"{proposals['weak_evidence']} / {proposals['no_evidence_found']} / "
            f"{proposals['template_not_adopted']})",
        ),
        ("Requirements out of scope (not counted above)", counted.out_of_scope),
        ("Overall maturity (0-5)", report.maturity.get("overall_level", "n/a")),
        ("POA&M items", len(report.poam.get("items", []))),
        *(("Control catalogue", full_name_version(c)) for c in catalogues(report)[:1]),
    ]


def catalogues(report: ReportInput) -> list[Content]:
    """The catalogue versions the drafts name (the SCF workbook first, then any framework's
    own catalogue, such as NIST's OSCAL), each once, with its licence and attribution."""
    found: list[Content] = []
    candidates = [report.soa.get("catalog"), report.scope.get("catalog")]
    candidates += [f.get("catalog") for f in report.scope.get("frameworks", [])]
    for catalog in candidates:
        if isinstance(catalog, dict) and all(
            (catalog.get("name"), catalog.get("version")) != (c["name"], c["version"])
            for c in found
        ):
            found.append(catalog)
    return found


def name_version(catalog: Content) -> str:
    """ "SCF 2022.3": the short name people cite a catalogue version by."""
    name = str(catalog.get("name") or "")
    short = name[name.rfind("(") + 1 : -1] if name.endswith(")") and "(" in name else name
    return f"{short} {catalog.get('version')}".strip()


def full_name_version(catalog: Content) -> str:
    """ "Secure Controls Framework (SCF) 2022.3": the name the source gives, with its version."""
    return f"{catalog.get('name') or ''} {catalog.get('version') or ''}".strip()


def credit_line(report: ReportInput) -> str:
    """One line naming each catalogue version and what its licence asks to be credited."""
    parts = [
        f"{name_version(c)}: {c.get('attribution') or c.get('licence') or ''}".rstrip(": ")
        for c in catalogues(report)
    ]
    return "Control catalogues: " + "; ".join(parts) if parts else ""


def catalogue_rows(report: ReportInput) -> list[tuple[str, str, str, str]]:
    return [
        (
            name_version(c),
            str(c.get("name") or ""),
            str(c.get("licence") or ""),
            str(c.get("attribution") or ""),
        )
        for c in catalogues(report)
    ]


CATALOGUE_HEADERS = ("Catalogue", "Name", "Licence", "Attribution")


GAP_HEADERS = ("Control", "Title", "Severity", "Evidence", "Owner", "Finding")


def gap_rows(report: ReportInput) -> list[tuple[Any, ...]]:
    """One row per gap finding: what the evidence showed in words and who owns it, never a
    similarity score."""
    return [
        (
            g.get("control_id"),
            g.get("title"),
            g.get("severity"),
            str(g.get("evidence_state") or "").replace("_", " "),
            g.get("owner") or "unassigned",
            g.get("finding"),
        )
        for g in report.gaps.get("gaps", [])
    ]


def signoff_rows(report: ReportInput) -> list[tuple[str, ...]]:
    """One row per approval of each input (or one saying it has none)."""
    return [row for row, _ in signoff_lines(report)]


def signoff_lines(report: ReportInput) -> list[tuple[tuple[str, ...], bool]]:
    """The sign-off rows, each with whether it names an input nobody approved (shown in
    red: the report gate refuses while one is)."""
    lines: list[tuple[tuple[str, ...], bool]] = []
    for entry in report.signoff:
        artifact = f"{entry.get('label')} v{entry.get('version')}"
        checksum = str(entry.get("sha256") or "")[:16]
        amended = (
            f"{entry['amendments']} by {', '.join(entry.get('amended_by', []))}"
            if entry.get("amendments")
            else "none"
        )
        approvals = entry.get("approvals") or []
        if not approvals:
            gated = entry.get("gated", True)
            said = "NOT APPROVED" if gated else str(entry.get("note") or "no gate of its own")
            status = str(entry.get("status"))
            lines.append(((artifact, checksum, status, said, "", "", amended), bool(gated)))
        for approval in approvals:
            row = (
                artifact,
                checksum,
                str(entry.get("status")),
                str(approval.get("approver_id")),
                ", ".join(approval.get("roles") or []),
                str(approval.get("at")),
                amended,
            )
            lines.append((row, False))
    return lines


STATEMENT_FIELDS = (
    ("conclusion", "Assessor's conclusion"),
    ("scope_boundary", "Scope boundary"),
    ("period", "Period assessed"),
    ("set_by", "Written by"),
)


def statement_rows(report: ReportInput) -> list[tuple[str, str]]:
    """The assessor's statement; what nobody wrote yet says so."""
    statement = report.statement
    start, end = statement.get("period_start"), statement.get("period_end")
    values = {
        "conclusion": statement.get("conclusion"),
        "scope_boundary": statement.get("scope_boundary"),
        "period": f"{start or '…'} to {end or '…'}" if start or end else None,
        "set_by": ", ".join(statement.get("set_by") or []) or None,
    }
    rows = [
        (label, str(values[key]) if values[key] else "not yet set by a reviewer")
        for key, label in STATEMENT_FIELDS
    ]
    warning = conclusion_warning(statement.get("conclusion"), report_figures(report))
    if warning:
        rows.insert(1, (WARNING_LABEL, warning))
    return rows


#: The statement row that flags a conclusion the figures contradict (HTML and PDF show it).
WARNING_LABEL = "Warning: conclusion and figures disagree"


SIGNOFF_HEADERS = (
    "Artifact",
    "SHA-256 (first 16)",
    "Status",
    "Approved by",
    "Roles",
    "When",
    "Amendments",
)


def soa_table(report: ReportInput) -> list[tuple[Any, ...]]:
    """The SoA's rows as the report shows them."""
    return [
        (
            row.get("requirement_id"),
            row.get("title") or "",
            ", ".join(str(c) for c in row.get("scf_controls") or []),
            "Yes" if row.get("applicable") else "No",
            row.get("justification"),
            str(row.get("proposal") or "").replace("_", " "),
            str(row.get("implementation_status") or "not yet assessed").replace("_", " "),
            row.get("owner") or "",
            "; ".join(cite_label(c) for c in row.get("evidence") or []),
        )
        for row in soa_rows(report.soa)
    ]


SOA_HEADERS = (
    "Requirement",
    "Title",
    "SCF controls",
    "Applicable",
    "Justification",
    "Proposed",
    "Implementation",
    "Owner",
    "Evidence",
)


def cite_label(cite: Content) -> str:
    where = " › ".join(
        str(part)
        for part in (cite.get("document") or cite.get("filename"), cite.get("heading_path"))
        if part
    )
    pages = cite.get("pages") or []
    if pages:
        where += f", p. {pages[0]}" if len(pages) == 1 else f", pp. {pages[0]}-{pages[-1]}"
    return where


def _summary(report: ReportInput) -> str:
    return table(("Figure", "Value"), summary_rows(report))


def _scope(report: ReportInput) -> str:
    if not report.scope:
        return '<p class="muted">No scope artifact.</p>'
    in_scope = table(
        ("Domain", "Name", "Controls"),
        (
            (d.get("domain"), d.get("name"), len(d.get("controls", [])))
            for d in report.scope.get("domains", [])
        ),
    )
    out = report.scope.get("out_of_scope", [])
    excluded = (
        (
            "<p>Out of scope: "
            + esc(", ".join(f"{d.get('domain')} {d.get('name')}" for d in out))
            + "</p>"
        )
        if out
        else ""
    )
    return in_scope + excluded


def _soa(report: ReportInput) -> str:
    return table(SOA_HEADERS, soa_table(report))


def _signoff(report: ReportInput) -> str:
    if not report.signoff:
        return '<p class="muted">No sign-off records.</p>'
    head = "".join(f"<th>{esc(h)}</th>" for h in SIGNOFF_HEADERS)
    body = "".join(
        ('<tr class="unapproved">' if alert else "<tr>")
        + "".join(f"<td>{esc(cell)}</td>" for cell in row)
        + "</tr>"
        for row, alert in signoff_lines(report)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _statement(report: ReportInput) -> str:
    rows = statement_rows(report)
    body = "".join(
        ('<tr class="unapproved">' if label == WARNING_LABEL else "<tr>")
        + f"<td>{esc(label)}</td><td>{esc(value)}</td></tr>"
        for label, value in rows
    )
    return (
        f"<table><thead><tr><th></th><th>Statement</th></tr></thead><tbody>{body}</tbody></table>"
    )


def _catalogues(report: ReportInput) -> str:
    found = catalogue_rows(report)
    if not found:
        return '<p class="muted">No catalogue named.</p>'
    return table(CATALOGUE_HEADERS, found)


def _gaps(report: ReportInput) -> str:
    gaps = report.gaps.get("gaps", [])
    if not gaps:
        return "<p>No gaps: every applicable control has evidence.</p>"
    return table(GAP_HEADERS, gap_rows(report))


def _maturity(report: ReportInput) -> str:
    return table(
        ("Domain", "Name", "Level", "Label", "Rationale"),
        (
            (d.get("domain"), d.get("name"), d.get("level"), d.get("label"), d.get("rationale"))
            for d in report.maturity.get("domains", [])
        ),
    )


def _poam(report: ReportInput) -> str:
    items = report.poam.get("items", [])
    if not items:
        return "<p>No action items.</p>"
    return table(
        [title for _, title in POAM_COLUMNS],
        ([item.get(key) for key, _ in POAM_COLUMNS] for item in items),
    )


def supporting(control: Content) -> list[Content]:
    # Evidence rows (passages a proposal rests on); older drafts listed `citations`.
    if "evidence" in control:
        return list(control.get("evidence") or [])
    return [c for c in control.get("citations") or [] if c.get("supports", True)]


def page_label(cite: Content) -> str:
    first, last = cite.get("page_start"), cite.get("page_end")
    if not first:
        return ""
    return f"p. {first}" if not last or last == first else f"pp. {first}-{last}"


POAM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Id"),
    ("control_id", "Control"),
    ("weakness", "Weakness"),
    ("remediation", "Remediation"),
    ("priority", "Priority"),
    ("milestone_date", "Milestone"),
    ("owner_role", "Owner"),
)


def _evidence(report: ReportInput) -> str:
    controls = [c for c in report.evidence.get("controls", []) if supporting(c)]
    if not controls:
        return '<p class="muted">No evidence citations.</p>'
    parts = []
    for control in controls:
        parts.append(f"<h3>{esc(control.get('control_id'))} {esc(control.get('title'))}</h3>")
        for cite in supporting(control):
            where = esc(cite.get("filename"))
            if cite.get("heading_path"):
                where += f" &rsaquo; {esc(cite.get('heading_path'))}"
            if cite.get("page_start"):
                where += f", {esc(page_label(cite))}"
            parts.append(
                f"<p><strong>{where}</strong> "
                f'<span class="muted">(score {float(cite.get("score", 0.0)):.2f})'
                f"</span></p><blockquote>{esc(cite.get('excerpt'))}</blockquote>"
            )
    return "".join(parts)
